#!/usr/bin/env python3
"""Medians of the idle runs in each DIR/bench.jsonl.gz: machine cores (nodes' own cores).

    python3 docs/bench/experiments/idle-tick/medians.py docs/bench/experiments/idle-tick/*/
"""
import collections
import gzip
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                "scripts"))
from bench_runs import kept_runs  # noqa: E402  (the sweep scripts' reader of run lines)

for directory in sys.argv[1:]:
    machine = collections.defaultdict(list)
    nodes = collections.defaultdict(list)
    with gzip.open(os.path.join(directory, "bench.jsonl.gz"), "rt", encoding="utf-8") as f:
        for run in kept_runs(f):
            key = (run["medium"], run["wait"])
            machine[key].append(run["cores_used"]["machine"])
            nodes[key].append(run["cores_used"]["nodes"])
    print(os.path.basename(os.path.normpath(directory)), "  ".join(
        f"{m}/{w} {statistics.median(v):.4f} ({statistics.median(nodes[(m, w)]):.4f})"
        for (m, w), v in sorted(machine.items())))
