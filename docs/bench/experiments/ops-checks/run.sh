#!/usr/bin/env bash
# The operator library before issue 13's changes (OLD, a build of 248da77) against after it
# (NEW): the per-batch checks in Box::process, aggregates that may take expressions, the
# join's slack. Batches of 64 and 1024 rows; old and new alternate, REPS rounds.
# usage (from the repository root):
#   OLD=/tmp/oldops/build/bench NEW=build/bench OUT=/tmp/opsb bash docs/bench/experiments/ops-checks/run.sh
set -u
: "${OLD:?old bench directory}" "${NEW:?new bench directory}" "${OUT:?output directory}"
mkdir -p "$OUT"
filter='BM_(Filter|Map|AggregateTumblingCount|AggregateTumblingTime|Join)/(64|1024)$'
for i in $(seq 1 "${REPS:-3}"); do
  for b in filter_map_bench aggregate_bench join_resample_bench; do
    for side in old new; do
      dir=$OLD; [ "$side" = new ] && dir=$NEW
      "$dir/$b" --benchmark_filter="$filter" --benchmark_min_time=0.2 \
        --benchmark_format=json > "$OUT/${side}_${b}_$i.json" 2> /dev/null
    done
  done
done
