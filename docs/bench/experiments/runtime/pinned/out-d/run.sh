set -u
one() {  # binary label mode i
  local B=$1 L=$2 M=$3 i=$4
  taskset -c 1 $B run apps/examples/demo.yaml --node dst --wait $M --json /tmp/pin5/${L}_${M}_dst_$i.jsonl > /dev/null 2>&1 &
  local d=$!
  sleep 0.3
  taskset -c 0 $B run apps/examples/demo.yaml --node src --wait $M --json /tmp/pin5/${L}_${M}_src_$i.jsonl > /dev/null 2>&1
  wait $d
}
for i in 1 2 3 4 5 6 7; do
  for M in adaptive; do
    one /tmp/oldtree/build/apps/boreal old $M $i
    one /tmp/boreal-new new $M $i
    one /tmp/boreal-tick tick $M $i
  done
done
