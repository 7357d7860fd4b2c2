#!/usr/bin/env bash
# Runs each libFuzzer target (fuzz/) on its seed corpus for a bounded time and prints how many
# inputs it ran. A crash, a leak or a sanitizer report fails the run (exit 1) and leaves the
# input that caused it in the fuzz build directory.
#
#   bash scripts/run-fuzzers.sh BUILD_DIR [SECONDS_EACH]    (default 60)
#
# BUILD_DIR is configured with
#   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DBOREAL_BUILD_FUZZ=ON \
#       -DBOREAL_BUILD_TESTS=OFF -DBOREAL_BUILD_BENCH=OFF \
#       "-DBOREAL_SANITIZE=address;undefined;fuzzer-no-link"
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: run-fuzzers.sh BUILD_DIR [SECONDS_EACH]}
seconds=${2:-60}
# The targets run side by side (the machine's cores shared among them), so CI spends
# SECONDS_EACH on all three rather than three times that.
fuzz_one() {  # TARGET: runs it; its verdict goes to stdout, its log to build/fuzz/TARGET.log
  local target=$1
  local bin="$build/fuzz/${target}_fuzz"
  local work="$build/fuzz/corpus-$target"  # new inputs go here; the seeds in tests/ stay as they are
  mkdir -p "$work"
  local seeds=("tests/fuzz/$target")
  [[ $target == network_file ]] && seeds+=(apps/examples apps/examples/nexmark)
  local log="$build/fuzz/$target.log"
  if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$bin" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/fuzz/$target-" "$work" "${seeds[@]}" \
      > "$log" 2>&1; then
    local runs
    runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1 | grep -o '[0-9]*' || true)
    echo "fuzz $target: ${runs:-?} inputs in ${seconds} s, no crash"
  else
    echo "fuzz $target: FAILED (see $log):"
    grep -m 20 -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" || tail -20 "$log"
    return 1
  fi
}
targets=(frame network_file expr)
pids=()
for target in "${targets[@]}"; do
  fuzz_one "$target" > "$build/fuzz/$target.verdict" &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || status=1
  cat "$build/fuzz/${targets[$i]}.verdict"
done
exit $status
