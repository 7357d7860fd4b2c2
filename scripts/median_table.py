#!/usr/bin/env python3
"""Median table of repeated boreal runs.

Reads the JSON lines that `boreal demo --json FILE` or `boreal launch --json FILE` wrote
(several files, one per repetition), keeps the run summaries ({"kind": "run"}), groups them
by medium and wait mode, and prints the median of each column with the number of runs.

    for i in 1 2 3; do boreal demo --json demo$i.jsonl; done
    python3 scripts/median_table.py demo*.jsonl
"""
import json
import statistics
import sys

COLUMNS = [
    ("tuples/s", lambda r: r["tuples_per_s"], "{:.0f}"),
    ("MB/s", lambda r: r["mb_per_s"], "{:.1f}"),
    ("sender", lambda r: r["cpu_us_per_tuple"]["sender"], "{:.3f}"),
    ("receiver", lambda r: r["cpu_us_per_tuple"]["receiver"], "{:.3f}"),
    ("machine", lambda r: r["cpu_us_per_tuple"]["machine"], "{:.3f}"),
    ("cores", lambda r: r["cores_used"]["machine"], "{:.2f}"),
    ("p50 us", lambda r: r["latency_us"]["p50"], "{:.0f}"),
    ("p99 us", lambda r: r["latency_us"]["p99"], "{:.0f}"),
    ("p99.9 us", lambda r: r["latency_us"]["p999"], "{:.0f}"),
]


def main(paths):
    if not paths:
        sys.exit("usage: median_table.py RUN.jsonl...")
    groups = {}
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    sys.exit(f"{path}:{number}: not JSON: {error}")
                if record.get("kind") == "run":
                    medium = record["medium"]
                    if record.get("provider"):
                        medium += " (" + record["provider"] + ")"
                    groups.setdefault((medium, record["wait"]), []).append(record)
    if not groups:
        sys.exit("no run summaries ({\"kind\": \"run\"}) in " + ", ".join(paths))
    header = ["medium", "wait"] + [name for name, _, _ in COLUMNS] + ["runs", "all ok"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for (medium, wait), runs in groups.items():
        cells = [medium, wait]
        for _, value, fmt in COLUMNS:
            cells.append(fmt.format(statistics.median(value(r) for r in runs)))
        cells.append(str(len(runs)))
        cells.append("yes" if all(not r["errors"] for r in runs) else "no")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
