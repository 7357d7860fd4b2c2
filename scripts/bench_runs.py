"""What the scripts that summarise a `boreal bench` sweep share: reading OUT/bench.jsonl (or a
gzip of it, a name ending in .gz) run by run, and a command line that prints one table of
medians per grid point. Imported by scripts/latency_stages.py and scripts/bench_link_calls.py,
which run it from their own folder.
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
