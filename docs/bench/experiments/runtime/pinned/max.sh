#!/usr/bin/env bash
# Two-node maximum with the receiving node pinned to CPU 1 and the sending node to CPU 0.
set -u
: "${OLD:?the old binary}" "${NEW:?the new binary}" "${OUT:?an output directory}"
mkdir -p "$OUT"
# Run from the repository root.
one() {  # binary file label i
  local B=$1 F=$2 L=$3 i=$4
  taskset -c 1 $B run $F --node dst --tuples 20000000 --json $OUT/${L}_dst_$i.jsonl > /dev/null 2>&1 &
  local d=$!
  sleep 0.3
  taskset -c 0 $B run $F --node src --tuples 20000000 --json $OUT/${L}_src_$i.jsonl > /dev/null 2>&1
  wait $d
}
for i in 1 2 3 4 5; do
  one $OLD apps/examples/two_nodes_max.yaml old $i
  one $NEW apps/examples/two_nodes_max.yaml new $i
  one $NEW apps/examples/two_nodes_max_filter.yaml filter $i
done
