#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), then configures and builds
# momenta. Safe to run again: it only installs and rebuilds what changed.
#
#   tools/setup.sh            Release build in ./build (what the Quick start runs)
#   tools/setup.sh sanitize   build-asan/: asserts on, AddressSanitizer and
#                             UndefinedBehaviorSanitizer, any report fatal; no
#                             benchmarks (CI runs the whole suite in it as well)
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-release}
case "$kind" in
  release) build_dir=build; config=(-DCMAKE_BUILD_TYPE=Release) ;;
  sanitize) build_dir=build-asan; config=(-DCMAKE_BUILD_TYPE=Sanitize -DMOMENTA_BUILD_BENCH=OFF) ;;
  *) echo "usage: tools/setup.sh [release|sanitize]" >&2; exit 2 ;;
esac

packages=(g++ cmake make pkg-config liburing-dev libboost-dev libcli11-dev
          libgtest-dev libgmock-dev libbenchmark-dev python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ccache, when there is one, makes a rebuild after a checkout cheap.
command -v ccache >/dev/null && config+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" "${config[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
