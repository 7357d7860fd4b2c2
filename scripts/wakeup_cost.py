#!/usr/bin/env python3
"""Machine CPU per wake-up of each run in a `boreal bench` bench.jsonl.

A wake-up is a sleep or a block of either end's I/O thread (wait_stats.*.sleeps + blocks);
the machine's CPU is cores_used.machine. Over a run (warm-up plus measured window):
    wake-ups/s = (sender + receiver wake-ups) / (warmup_s + duration_s)
    machine µs per wake-up = cores_used.machine * 1e6 / wake-ups/s
This is what the README's "Performance goals" section quotes. Usage:
    python3 scripts/wakeup_cost.py OUT/bench.jsonl [--waits block,sleep,adaptive]
"""
import argparse
import json
import sys


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jsonl")
    parser.add_argument("--waits", default="block,sleep,adaptive",
                        help="wait modes to list (default: block,sleep,adaptive)")
    args = parser.parse_args(argv)
    waits = set(args.waits.split(","))
    try:
        lines = open(args.jsonl, encoding="utf-8").read().splitlines()
    except OSError as e:
        print(f"wakeup_cost: {args.jsonl}: cannot read: {e.strerror}", file=sys.stderr)
        return 2
    print("medium    wait      tuples/s  flush_us  tx waits/s  rx waits/s  machine cores  machine us/wake-up")
    for number, text in enumerate(lines, 1):
        try:
            run = json.loads(text)
        except json.JSONDecodeError:
            print(f"wakeup_cost: {args.jsonl}:{number}: not JSON", file=sys.stderr)
            return 2
        if run.get("kind") != "run" or run.get("wait") not in waits:
            continue
        seconds = run["duration_s"] + run.get("warmup_s", 0.0)
        stats = run["wait_stats"]
        tx = (stats["sender"].get("sleeps", 0) + stats["sender"].get("blocks", 0)) / seconds
        rx = (stats["receiver"].get("sleeps", 0) + stats["receiver"].get("blocks", 0)) / seconds
        cores = run["cores_used"]["machine"]
        per_wake = cores * 1e6 / (tx + rx) if tx + rx > 0 else float("nan")
        print(f"{run['medium']:<9} {run['wait']:<8} {run['tuples_per_s']:>9.0f} {run['flush_us']:>9} "
              f"{tx:>11.0f} {rx:>11.0f} {cores:>14.3f} {per_wake:>19.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
