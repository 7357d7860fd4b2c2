#!/usr/bin/env python3
"""Prints the NEXMark table of the README from run.sh's output directory.

    python3 docs/bench/experiments/nexmark/medians.py [OUT]

One line per sweep and wait mode: the medians bench.csv holds (events/s, events/s per core,
machine CPU-us per event, p99 latency).
"""
import csv
import os
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "out")
print(f"{'run':<10} {'wait':<9} {'rate':<6} {'events/s':>12} {'events/s/core':>14} "
      f"{'CPU-us/event':>13} {'p99 us':>8} {'ok':>4}")
for name in sorted(os.listdir(out)):
    path = os.path.join(out, name, "bench.csv")
    if not os.path.exists(path):
        continue
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for r in rows:
        def num(key):
            return float(r[key]) if r.get(key) else 0.0
        # The bare transport's sweep (not --network) counts tuples: each tuple is one event.
        events = num("events_per_s") or num("tuples_per_s")
        per_event = num("cpu_us_per_event") or num("cpu_us_per_tuple")
        per_core = num("events_per_core") or (1e6 / per_event if per_event else 0)
        print(f"{name:<10} {r['wait']:<9} {r['rate_label']:<6} {events:>12.0f} {per_core:>14.0f} "
              f"{per_event:>13.3f} {num('p99_us'):>8.0f} {r['ok_repeats']}/{r['repeats']}")
