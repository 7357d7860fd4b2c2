#!/usr/bin/env bash
# boreal demo's network (100 k tuples/s, 3 s) per wait mode, sending node pinned to CPU 0,
# receiving node to CPU 1, old and new binaries interleaved.
set -u
: "${OLD:?the old binary}" "${NEW:?the new binary}" "${OUT:?an output directory}"
mkdir -p "$OUT"
# Run from the repository root.
one() {  # binary label mode i
  local B=$1 L=$2 M=$3 i=$4
  taskset -c 1 $B run apps/examples/demo.yaml --node dst --wait $M --json $OUT/${L}_${M}_dst_$i.jsonl > /dev/null 2>&1 &
  local d=$!
  sleep 0.3
  taskset -c 0 $B run apps/examples/demo.yaml --node src --wait $M --json $OUT/${L}_${M}_src_$i.jsonl > /dev/null 2>&1
  wait $d
}
for i in ${REPS:-1 2 3 4 5 6 7}; do
  for M in busy block sleep backoff adaptive; do
    one $OLD old $M $i
    one $NEW new $M $i
  done
done
