#!/usr/bin/env python3
"""Machine CPU per wake-up of each run in a `boreal bench` bench.jsonl.

A wake-up is a sleep or a block of either end's I/O thread (wait_stats.*.sleeps + blocks);
the machine's CPU is cores_used.machine. Over a run (warm-up plus measured window):
    wake-ups/s = (sender + receiver wake-ups) / (warmup_s + duration_s)
    machine µs per wake-up = cores_used.machine * 1e6 / wake-ups/s
Discarded runs are left out. This is what the README's "Performance goals" section quotes.
Usage:
    python3 scripts/wakeup_cost.py OUT/bench.jsonl[.gz] [--waits block,sleep,adaptive]
"""
import sys

import bench_runs

HEADER = ("medium    wait      tuples/s  flush_us  tx waits/s  rx waits/s  machine cores  "
          "machine us/wake-up")


def line(run):
    seconds = run["duration_s"] + run.get("warmup_s", 0.0)
    stats = run["wait_stats"]
    tx = (stats["sender"].get("sleeps", 0) + stats["sender"].get("blocks", 0)) / seconds
    rx = (stats["receiver"].get("sleeps", 0) + stats["receiver"].get("blocks", 0)) / seconds
    cores = run["cores_used"]["machine"]
    per_wake = cores * 1e6 / (tx + rx) if tx + rx > 0 else float("nan")
    return (f"{run['medium']:<9} {run['wait']:<8} {run['tuples_per_s']:>9.0f} {run['flush_us']:>9} "
            f"{tx:>11.0f} {rx:>11.0f} {cores:>14.3f} {per_wake:>19.1f}")


def main(argv):
    return bench_runs.runs_main(argv, "wakeup_cost", __doc__, HEADER, line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
