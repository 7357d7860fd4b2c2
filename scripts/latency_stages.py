#!/usr/bin/env python3
"""Where a `boreal bench` sweep's latency goes: per grid point (medium, wait mode, rate), the
medians over its repeats of each latency stage's p50, p99 and p99.9 in microseconds, beside the
end-to-end figures (docs/design.md, "Where the latency goes"):

  due_to_committed  the source: a frame's first tuple due -> the frame committed
  due_to_arrived    the sink: due -> the receiving host's kernel took the frame in (tcp only)
  arrived_to_read   -> the receiving link's read returned
  read_to_sink      -> the sink took the tuple's latency
  end_to_end        the sink's latency of every tuple

from OUT/bench.jsonl (every run's summary; runs marked "discarded" are left out), or a gzip
of it (a name ending in .gz).

    python3 scripts/latency_stages.py OUT/bench.jsonl [--rate 10000]

A file that is not a bench.jsonl prints one line naming it to stderr and exits 2.
"""

import statistics
import sys

import bench_runs

STAGES = ["due_to_committed", "due_to_arrived", "arrived_to_read", "read_to_sink", "end_to_end"]


def quantiles(latency):
    return latency["p50"], latency["p99"], latency["p999"]


def points(lines):
    """(medium, wait, rate label) -> list of {stage: (p50, p99, p99.9)}, in the order first seen."""
    out = {}
    for run in bench_runs.kept_runs(lines):
        bench = run["bench"]
        stages = {}
        for stage in run.get("latency_stages", []):
            # One stream per run: the first box to report a stage speaks for it.
            stages.setdefault(stage["stage"], quantiles(stage["latency_us"]))
        stages["end_to_end"] = quantiles(run["latency_us"])
        out.setdefault((bench["medium"], bench["wait"], bench["rate_label"]), []).append(stages)
    return out


def table(by_point, rate=None):
    rows = [f"{'medium':<11} {'wait':<9} {'rate':<8} {'stage':<17} {'p50 us':>8} {'p99 us':>8} "
            f"{'p99.9 us':>9} {'runs':>4}"]
    for (medium, wait, label), runs in by_point.items():
        if rate is not None and label != rate:
            continue
        for stage in STAGES:
            have = [r[stage] for r in runs if stage in r]
            if not have:
                continue
            p50, p99, p999 = (statistics.median(q[i] for q in have) for i in range(3))
            rows.append(f"{medium:<11} {wait:<9} {label:<8} {stage:<17} {p50:>8.1f} {p99:>8.1f} "
                        f"{p999:>9.1f} {len(have):>4}")
    return "\n".join(rows) + "\n"


def main(argv):
    return bench_runs.table_main(argv, "latency_stages", __doc__, points, table, "10000, max", "no runs")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
