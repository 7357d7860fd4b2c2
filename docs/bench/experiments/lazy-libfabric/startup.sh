#!/usr/bin/env bash
# What loading libfabric at start costs each boreal process (README of this directory).
# Runs `boreal --help` RUNS times alternately as built (libfabric opened only at the first
# fabric link) and with LD_PRELOAD=libfabric.so.1 (libfabric and what it links loaded before
# main(), as when boreal linked it), and prints the median wall time of each, then strace's
# first rt_sigaction for SIGINT and SIGSEGV in each case.
# Usage: startup.sh BOREAL [RUNS]   (default 21 runs each)
set -euo pipefail
boreal=${1:?usage: startup.sh BOREAL [RUNS]}
runs=${2:-21}
[[ -x $boreal ]] || { echo "startup.sh: $boreal is not an executable" >&2; exit 2; }
preload=libfabric.so.1

wall() {  # wall seconds of one `boreal --help`, with $1 as LD_PRELOAD (may be empty)
  local start end
  start=$(date +%s.%N)
  LD_PRELOAD=$1 "$boreal" --help >/dev/null
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.4f}')"
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

lazy=() eager=()
for ((i = 0; i < runs; i++)); do
  lazy+=("$(wall '')")
  eager+=("$(wall "$preload")")
done
printf 'boreal --help, median of %d: as built %s s, with LD_PRELOAD=%s %s s\n' "$runs" \
  "$(printf '%s\n' "${lazy[@]}" | median)" "$preload" "$(printf '%s\n' "${eager[@]}" | median)"

# Who sets SIGINT and SIGSEGV first: boreal's main() (SIGINT only), or, preloaded,
# libinfinipath's constructor (both, the same handler, before main()).
if command -v strace >/dev/null; then
  for mode in built preloaded; do
    p=''; [[ $mode == preloaded ]] && p=$preload
    echo "$mode, the first handlers set for SIGINT and SIGSEGV:"
    LD_PRELOAD=$p strace -e trace=rt_sigaction "$boreal" --help 2>&1 >/dev/null |
      grep -E '^rt_sigaction\((SIGINT|SIGSEGV),' | head -2 | sed -E 's/^/  /; s/, sa_mask=.*//'
  done
fi
