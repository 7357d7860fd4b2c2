#!/usr/bin/env python3
"""Checks that boreal's NEXMark generator and the independent Python one agree byte for byte.

    python3 scripts/nexmark/generators_agree.py BOREAL_BINARY [--events N]

Both write persons.csv, auctions.csv and bids.csv for the same event ids (docs/nexmark.md):
`boreal nexmark` from the C++ operator library, scripts/nexmark/nexmark_gen.py from the
specification alone. The check runs twice, in order and with bounded out-of-orderness
(--max-delay-ms 5), from event 0 and from an odd first event. Exit 0 when every file is
identical; 1 with the first differing line of each file that differs.
"""

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def first_difference(a, b):
    """(line number, line of a, line of b) of the first line that differs."""
    with open(a) as fa, open(b) as fb:
        number = 0
        while True:
            number += 1
            la, lb = fa.readline(), fb.readline()
            if la != lb:
                return number, la.rstrip("\n"), lb.rstrip("\n")
            if not la:
                return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("boreal", help="the boreal binary")
    parser.add_argument("--events", type=int, default=200_000, help="events per case (default 200000)")
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="boreal-nexmark-gen-") as tmp:
        cases = [("in order from 0", ["--first-event", "0"]),
                 ("delays up to 5 ms from event 12345", ["--first-event", "12345", "--max-delay-ms", "5"])]
        for name, flags in cases:
            cpp, py = os.path.join(tmp, "cpp"), os.path.join(tmp, "py")
            for cmd in ([args.boreal, "nexmark", "--events", str(args.events), "--out", cpp, *flags],
                        [sys.executable, os.path.join(HERE, "nexmark_gen.py"), "--events",
                         str(args.events), "--out", py, *flags]):
                done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if done.returncode != 0:
                    print(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}")
                    return 2
            for kind in ("persons", "auctions", "bids"):
                a, b = os.path.join(cpp, kind + ".csv"), os.path.join(py, kind + ".csv")
                if filecmp.cmp(a, b, shallow=False):
                    print(f"{name}: {kind}.csv identical")
                    continue
                failed = True
                line, la, lb = first_difference(a, b)
                print(f"{name}: {kind}.csv differs first at line {line}:\n  boreal: {la}\n  python: {lb}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
