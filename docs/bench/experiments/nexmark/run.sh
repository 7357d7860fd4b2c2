#!/usr/bin/env bash
# The NEXMark figures in the README: every query at its maximum rate over two nodes on loopback
# tcp, Q1 at 10,000 events/s with a 1 ms latency budget, and the bare two-node transport at
# the same rate and budget. Medians of three runs each. Run on a quiet machine (nothing else
# compiling or measuring), from the repository's root:
#
#   bash docs/bench/experiments/nexmark/run.sh [BOREAL] [OUT]
#
# OUT (default docs/bench/experiments/nexmark/out) gets one bench directory per sweep;
# medians.py prints the table from them.
set -euo pipefail
BOREAL=${1:-build/apps/boreal}
OUT=${2:-docs/bench/experiments/nexmark/out}
common=(--media tcp --repeats 3 --duration 2 --warmup 0.5 --no-iperf --no-plots)
for q in q0 q1 q2 q3 q4 q5 q6 q7 q8; do
  "$BOREAL" bench --network "apps/examples/nexmark/$q.yaml" --waits block --rates max \
      "${common[@]}" --out "$OUT/$q-max"
done
"$BOREAL" bench --network apps/examples/nexmark/q1_latency.yaml --waits block,sleep,backoff,adaptive \
    --rates 10k --latency-budget 1000 "${common[@]}" --out "$OUT/q1-10k"
"$BOREAL" bench --waits block,sleep,backoff,adaptive --rates 10k --latency-budget 1000 --loops none \
    "${common[@]}" --out "$OUT/bare-10k"
