#!/usr/bin/env python3
"""Where a `boreal bench` sweep's CPU per tuple goes on its links: per grid point (streams,
medium, wait mode, rate), the medians over its repeats of

  tuples/frame   tuples per data frame the receiving ends delivered
  reads/tuple    read calls of the receiving ends per tuple (tcp: read(); fabric: CQ reads)
  empty/tuple    of those, the calls that found nothing (EAGAIN): polls of idle links
  writes/tuple   write calls of the sending ends per tuple
  syscalls/tuple the sender's and the receiver's counted system calls per tuple
  send MiB       peak resident memory of the sending node (the largest, if several), MiB
  recv MiB       peak resident memory of the receiving node (the largest, if several), MiB

from OUT/bench.jsonl (every run's summary; runs marked "discarded" are left out), or a gzip
of it (a name ending in .gz).

    python3 scripts/bench_link_calls.py OUT/bench.jsonl [--rate 100000]

A file that is not a bench.jsonl prints one line naming it to stderr and exits 2.
"""

import statistics
import sys

import bench_runs


def peak_mib(run, role):
    """The largest peak RSS (MiB) of the run's nodes whose `role` count ("tuples_sent",
    "tuples_received") is not zero."""
    return max((n.get("max_rss_kb", 0) for n in run.get("nodes", []) if n.get(role, 0) > 0),
               default=0) / 1024


def points(lines):
    """(streams, medium, wait, rate label) -> list of per-run figures, in the order first seen."""
    out = {}
    for run in bench_runs.kept_runs(lines):
        bench = run["bench"]
        streams = sum(1 for box in run.get("boxes", []) if box.get("type") == "sink") or 1
        recv = [link["stats"] for link in run.get("links", []) if link.get("direction") == "recv"]
        send = [link["stats"] for link in run.get("links", []) if link.get("direction") == "send"]
        tuples = sum(s["tuples"] for s in recv)
        frames = sum(s["frames"] for s in recv)
        if tuples == 0:
            continue
        calls = run.get("syscalls_per_tuple", {})
        medium = run.get("medium", "?")
        out.setdefault((streams, medium, bench["wait"], bench["rate_label"]), []).append({
            "tuples/frame": tuples / max(frames, 1),
            "reads/tuple": sum(s["read_calls"] for s in recv) / tuples,
            "empty/tuple": sum(s["would_block"] for s in recv) / tuples,
            "writes/tuple": sum(s["write_calls"] for s in send) / tuples,
            "syscalls/tuple": calls.get("sender", 0) + calls.get("receiver", 0),
            "send MiB": peak_mib(run, "tuples_sent"),
            "recv MiB": peak_mib(run, "tuples_received"),
        })
    return out


def table(by_point, rate=None):
    columns = ["tuples/frame", "reads/tuple", "empty/tuple", "writes/tuple", "syscalls/tuple",
               "send MiB", "recv MiB"]
    rows = ["streams  medium      wait      rate      " + "  ".join(f"{c:>14}" for c in columns)]
    for (streams, medium, wait, label), runs in sorted(by_point.items(),
                                                       key=lambda kv: (kv[0][3], kv[0][1], kv[0][0])):
        if rate is not None and label != rate:
            continue
        medians = [statistics.median(r[c] for r in runs) for c in columns]
        rows.append(f"{streams:>7}  {medium:<10}  {wait:<8}  {label:<8}  " +
                    "  ".join(f"{m:>14.1f}" if c.endswith("MiB") else f"{m:>14.3f}"
                              for c, m in zip(columns, medians)))
    return "\n".join(rows) + "\n"


def main(argv):
    return bench_runs.table_main(argv, "bench_link_calls", __doc__, points, table, "100000, max", "no runs with tuples")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
