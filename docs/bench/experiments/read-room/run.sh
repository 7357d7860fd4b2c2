#!/usr/bin/env bash
# The read room of a tcp link of its own, before and after: two builds, their sweeps
# alternating, then one sweep of each with iperf3's loopback figure beside it.
#   bash docs/bench/experiments/read-room/run.sh BEFORE/boreal AFTER/boreal OUT
# BEFORE: built from fc9fcbc (reads ask for the rest of the window's staging); AFTER: from
# the commit that bounds them (socket_io.hpp, read_room_bytes()).
set -euo pipefail
before=$1 after=$2 out=$3
sweep=(bench --media tcp --streams 1,64 --rates 100k,max --waits block --repeats 3 --duration 2
       --loops none --no-iperf --no-plots --connection per-link)
for round in 1 2; do
  "$before" "${sweep[@]}" --out "$out/before-$round"
  "$after" "${sweep[@]}" --out "$out/after-$round"
done
iperf=(bench --media tcp --rates max --waits block --repeats 3 --duration 2 --loops none
       --no-plots --connection per-link)
"$before" "${iperf[@]}" --out "$out/before-iperf"
"$after" "${iperf[@]}" --out "$out/after-iperf"
