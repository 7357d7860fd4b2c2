"""What the scripts that summarise a `boreal bench` sweep share: reading OUT/bench.jsonl (or a
gzip of it, a name ending in .gz) run by run, and two command lines: one table of medians per
grid point (table_main: scripts/latency_stages.py, scripts/bench_link_calls.py) and one line
per run of some wait modes (runs_main: scripts/wait_counts.py, scripts/wakeup_cost.py). Each
of them runs it from its own folder.
"""

import argparse
import gzip
import json
import sys


def kept_runs(lines):
    """Each run summary among the JSON lines, leaving out other kinds and discarded runs."""
    for line in lines:
        run = json.loads(line)
        if run.get("kind") == "run" and "discarded" not in run.get("bench", {}):
            yield run


def table_main(argv, tool, doc, points, table, rate_example, no_points):
    """Parses `JSONL [--rate LABEL]`, reads the file with `points` and prints `table` of it.
    A file that cannot be read or parsed, or yields no points, prints one line naming it (and
    `no_points` for the latter) to stderr and returns 2."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("jsonl", help="OUT/bench.jsonl of a boreal bench sweep")
    parser.add_argument("--rate", help=f"only this rate label (e.g. {rate_example})")
    args = parser.parse_args(argv)
    try:
        opener = gzip.open if args.jsonl.endswith(".gz") else open
        with opener(args.jsonl, "rt", encoding="utf-8") as f:
            by_point = points(f)
    except (OSError, EOFError, ValueError, KeyError, TypeError) as e:
        print(f"{tool}: {args.jsonl}: not a readable bench.jsonl ({e})", file=sys.stderr)
        return 2
    if not by_point:
        print(f"{tool}: {args.jsonl}: {no_points}", file=sys.stderr)
        return 2
    sys.stdout.write(table(by_point, args.rate))
    return 0


def runs_main(argv, tool, doc, header, line):
    """Parses `JSONL [--waits block,sleep,adaptive]` and prints `header` (if any), then
    `line(run)` for every kept run of those wait modes in file order (None: leave the run
    out). A file that cannot be
    read or parsed prints one line naming it to stderr and returns 2."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("jsonl", help="OUT/bench.jsonl of a boreal bench sweep (or a .gz of it)")
    parser.add_argument("--waits", default="block,sleep,adaptive",
                        help="wait modes to list (default: block,sleep,adaptive)")
    args = parser.parse_args(argv)
    waits = set(args.waits.split(","))
    try:
        opener = gzip.open if args.jsonl.endswith(".gz") else open
        with opener(args.jsonl, "rt", encoding="utf-8") as f:
            lines = [line(run) for run in kept_runs(f) if run.get("wait") in waits]
        lines = [text for text in lines if text is not None]
    except (OSError, EOFError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        print(f"{tool}: {args.jsonl}: not a readable bench.jsonl ({e})", file=sys.stderr)
        return 2
    if header:
        print(header)
    for text in lines:
        print(text)
    return 0
