#!/usr/bin/env bash
# Installs what boreal needs to build, test and benchmark on Debian 12, and nothing else.
# Shared by README's first command and by .ci/run. Idempotent: installs only what is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev            # Boost.Asio (tcp medium), Boost.Outcome (error results)
  libfabric-dev           # fabric media
  libfabric-bin           # fi_info, to see which providers a machine has
  libgtest-dev googletest # tests
  libbenchmark-dev        # micro-benchmarks
  libyaml-cpp-dev         # query-network files
  libcli11-dev            # the boreal CLI
  nlohmann-json3-dev      # JSON lines output
  iproute2                # ip and tc: boreal launch --netns (namespaces, veth pairs, netem)
  python3-matplotlib      # boreal bench: the PNG plots
  python3-yaml            # the NEXMark query tests (tests/scripts/nexmark_queries_test.py)
  iperf3                  # boreal bench: the loopback reference it compares TCP against
  liburing-dev            # io_uring: batched event-loop updates (bench's event-loop study)
  clang-14                # the libFuzzer targets (fuzz/, scripts/run-fuzzers.sh)
  libclang-rt-14-dev      # libFuzzer and the sanitizer runtimes for clang
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
