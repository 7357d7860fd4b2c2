#!/usr/bin/env bash
# The restructured runtime against the binary before it, side by side in one run: the two-node
# maximum (20 M tuples, five times each, interleaved), the same with a filter on the receiving
# node, and `boreal demo` (three times each, interleaved). OLD is a `boreal` built from commit
# 4d15def (the last commit before the runtime work), NEW one built from this tree.
#   OLD=/tmp/oldtree/build/apps/boreal NEW=build/apps/boreal OUT=/tmp/runtime \
#     bash docs/bench/experiments/runtime/run.sh
# then: python3 docs/bench/experiments/runtime/medians.py /tmp/runtime/*.jsonl
set -euo pipefail
: "${OLD:?the old binary}" "${NEW:?the new binary}" "${OUT:?an output directory}"
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
mkdir -p "$OUT"
for i in $(seq 1 "${MAX_REPEATS:-5}"); do
  "$OLD" launch "$ROOT/apps/examples/two_nodes_max.yaml" --tuples 20000000 --free-ports --quiet --json "$OUT/old_max_$i.jsonl" > /dev/null
  "$NEW" launch "$ROOT/apps/examples/two_nodes_max.yaml" --tuples 20000000 --free-ports --quiet --json "$OUT/new_max_$i.jsonl" > /dev/null
  "$NEW" launch "$ROOT/apps/examples/two_nodes_max_filter.yaml" --tuples 20000000 --free-ports --quiet --json "$OUT/filter_max_$i.jsonl" > /dev/null
done
for i in $(seq 1 "${DEMO_REPEATS:-3}"); do
  "$OLD" demo --file "$ROOT/apps/examples/demo.yaml" --json "$OUT/old_demo_$i.jsonl" > /dev/null 2>&1
  "$NEW" demo --file "$ROOT/apps/examples/demo.yaml" --json "$OUT/new_demo_$i.jsonl" > /dev/null 2>&1
done
echo "done: $OUT"
