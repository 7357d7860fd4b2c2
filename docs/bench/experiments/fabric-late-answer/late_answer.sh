#!/usr/bin/env bash
# Stops a receiving node (kill -STOP) for STOP seconds, DELAY seconds after its sender started,
# on one fabric-msg link over tcp;ofi_rxm, and says whether every tuple arrived and whether the
# sender opened a fresh endpoint and the receiver took it as a reconnect. README.md beside it.
#
#   late_answer.sh BOREAL DELAY STOP PORT     e.g. late_answer.sh build/apps/boreal 0.377 1.5 7500
#
# Bounded: each node gives up after 40 s. Ends only the two nodes it started.
set -euo pipefail
boreal=${1:?usage: late_answer.sh BOREAL DELAY STOP PORT}
delay=${2:?} stop=${3:?} port=${4:?}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/net.yaml" <<YAML
name: late-answer
schemas:
  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]
nodes:
  - {name: src, address: "fabric://tcp;ofi_rxm/127.0.0.1:$((port + 1))"}
  - {name: dst, address: "fabric://tcp;ofi_rxm/127.0.0.1:$port"}
transport: {medium: fabric-msg, wait: block}
boxes:
  - {name: gen, type: source, node: src, out: ticks, schema: tick,
     params: {rate: 2000, tuples: 6000}}
  - {name: check, type: sink, node: dst, in: ticks, schema: tick, params: {kind: check}}
YAML
"$boreal" run "$dir/net.yaml" --node dst --timeout 40 > "$dir/dst.json" 2> "$dir/dst.err" &
dst=$!
sleep 0.3
"$boreal" run "$dir/net.yaml" --node src --timeout 40 > "$dir/src.json" 2> "$dir/src.err" &
src=$!
sleep "$delay"
kill -STOP "$dst"
sleep "$stop"
kill -CONT "$dst"
src_status=0; wait "$src" || src_status=$?
dst_status=0; wait "$dst" || dst_status=$?
last() { grep -o "\"$1\":[0-9]*" "$2" | tail -1 | cut -d: -f2; }
echo "delay $delay stop $stop: src exit $src_status, dst exit $dst_status," \
     "received $(last tuples_received "$dir/dst.json")," \
     "fresh endpoints $(last fresh_endpoints "$dir/src.json")," \
     "receiver reconnects $(last reconnects "$dir/dst.json")"
if (( src_status != 0 || dst_status != 0 )); then tail -3 "$dir/src.err" "$dir/dst.err"; fi
