#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root), then configures and builds
# momenta. Safe to run again: it only installs and rebuilds what changed.
#
#   tools/setup.sh            Release build in ./build (what the Quick start runs)
#   tools/setup.sh sanitize   build-asan/: asserts on, AddressSanitizer and
#                             UndefinedBehaviorSanitizer, any report fatal; no
#                             benchmarks (CI runs the whole suite in it as well)
#   tools/setup.sh tsan       build-tsan/: ThreadSanitizer, only what threads
#                             share: tests/shared_reader_stress (CI runs it)
# With MOMENTA_WERROR=1 in the environment (CI) any compiler warning is an error.
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-release}
targets=()  # everything
case "$kind" in
  release) build_dir=build; config=(-DCMAKE_BUILD_TYPE=Release) ;;
  sanitize) build_dir=build-asan; config=(-DCMAKE_BUILD_TYPE=Sanitize -DMOMENTA_BUILD_BENCH=OFF) ;;
  tsan) build_dir=build-tsan; config=(-DCMAKE_BUILD_TYPE=Tsan -DMOMENTA_BUILD_BENCH=OFF); targets=(--target shared_reader_stress) ;;
  *) echo "usage: tools/setup.sh [release|sanitize|tsan]" >&2; exit 2 ;;
esac

packages=(g++ cmake make pkg-config liburing-dev libboost-dev libcli11-dev
          libgtest-dev libgmock-dev libbenchmark-dev python3-numpy
          python3-dev pybind11-dev python3-pytest python3-hypothesis
          python3-dask python3-distributed
          zlib1g-dev  # gzip answers of `momenta serve`
          chromium chromium-driver python3-selenium  # the explorer's browser tests (tests/python/test_explorer.py)
          fio python3-matplotlib  # fio, matplotlib: the bench/quick test (bench/momenta_bench --plot)
          time)  # GNU time: the bench script's peak RSS of a child. Python's own wait4 cannot
                 # give it: Linux starts a child's maxrss at the forking process's peak.
# Everything else the suite and the bench script run is in every Debian root:
# sh, bash, env, timeout, sync, du (coreutils), setpriv (util-linux); git and
# node are optional (the bench says "unknown" / skips DuckDB without them).
source tools/install_missing.sh
install_missing "${packages[@]}"

# MOMENTA_WERROR=1 (CI) and ccache (tools/build_flags.sh).
source tools/build_flags.sh
mapfile -t -O "${#config[@]}" config < <(build_flags)
cmake -S . -B "$build_dir" "${config[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
if [[ $kind == release ]]; then
  echo "setup.sh: built $PWD/$build_dir/tools/momenta; to call it as \`momenta\`:"
  echo "  export PATH=\"$PWD/$build_dir/tools:\$PATH\"   (or: cmake --install $build_dir)"
fi
