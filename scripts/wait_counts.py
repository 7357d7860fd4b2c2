#!/usr/bin/env python3
"""Each run's wait counts in a `boreal bench` sweep, one line per run of the listed wait modes:
machine CPU-us per tuple (sender, receiver), p99, and each end's sleeps, blocks, blocks ended by
an event (wk) or at the deadline (to), polls and sleep/block switches; then each link end's
frames, posts or reads per frame and frames sent or found without immediate data (fabric-rma
ring words). Runs without tuples (idle) and discarded runs are left out. The figures quoted in
docs/bench/experiments/sender-block/README.md (sleeps and polls per frame, blocks ended by a
control frame) and ring-words/README.md are these columns.

    python3 scripts/wait_counts.py OUT/bench.jsonl[.gz] [--waits block,sleep,adaptive]
"""
import sys

import bench_runs


def line(run):
    if not run.get("tuples_per_s"):
        return None
    ws, cpu = run["wait_stats"], run["cpu_us_per_tuple"]
    ends = " ".join(
        f"| {end[0].upper()} sl {s['sleeps']} bl {s['blocks']} wk {s['wakeups']} "
        f"to {s['timeouts']} polls {s['polls']} sw {s['switches']}"
        for end, s in (("sender", ws["sender"]), ("receiver", ws["receiver"])))
    links = " ".join(
        f"| {link['direction']} frames {st['frames']} calls/frame "
        f"{(st['write_calls'] if link['direction'] == 'send' else st['read_calls']) / max(st['frames'], 1):.2f} "
        f"unannounced {st.get('unannounced_frames', 0)}"
        for link in run.get("links", []) for st in (link["stats"],))
    return (f"{run['wait']:<8} {run.get('offered_rate')} {run['tuples_per_s'] / 1e6:.2f}M "
            f"cpu {cpu['machine']:.3f} (snd {cpu['sender']:.3f} rcv {cpu['receiver']:.3f}) "
            f"p99 {run['latency_us']['p99']:.0f} {ends} {links}")


def main(argv):
    return bench_runs.runs_main(argv, "wait_counts", __doc__, None, line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
