#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS (issue 12):
#
#   tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   tools/fuzz.sh npy 600
#   tools/fuzz.sh tree 60 -runs=10000000      # stop after 10^7 executions instead
#
# TARGET is one of tests/fuzz/*_fuzz.cc (npy, log, tree, wire, synopsis,
# values, text). Builds the fuzz build (clang, libFuzzer, AddressSanitizer +
# UndefinedBehaviorSanitizer, asserts on) in build-fuzz/, installing clang from
# Debian first when it is missing. The working corpus build-fuzz/corpus/TARGET
# starts from the seeds in tests/data/fuzz/TARGET and grows across runs;
# crashing inputs land in build-fuzz/artifacts/TARGET/. Copy one into
# tests/data/fuzz/TARGET/ (named crash-<what>) once it is fixed: the normal
# suite replays that folder (ctest -R fuzz_replay).
# Each input must finish within 1 s (-timeout=1) and in 2 GiB (-rss_limit_mb);
# leaks are reported (LeakSanitizer). The timeout is wall-clock: on a machine
# shared with compilers, pass -timeout=10 -report_slow_units=1 and run each
# slow-unit-* artifact alone afterwards (tests/fuzz/README.md). The last lines give libFuzzer's final
# statistics: stat::number_of_executed_units is the execution count.
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# < 2)); then
  echo "usage: tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]" >&2
  echo "targets: $(cd tests/fuzz && ls ./*_fuzz.cc | sed 's|./||; s|_fuzz.cc||' | tr '\n' ' ')" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
if [[ ! -f tests/fuzz/${target}_fuzz.cc ]]; then
  echo "fuzz.sh: no target '${target}' (no tests/fuzz/${target}_fuzz.cc)" >&2
  exit 2
fi

packages=(clang libclang-rt-14-dev cmake make pkg-config liburing-dev libboost-dev libcli11-dev)
source tools/install_missing.sh
install_missing "${packages[@]}"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# RelWithDebInfo with the flags overridden: -O1 -g and no -DNDEBUG (asserts on).
CXX=clang++ cmake -S . -B build-fuzz -DMOMENTA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "fuzz_${target}"

corpus=build-fuzz/corpus/${target}
artifacts=build-fuzz/artifacts/${target}
mkdir -p "$corpus" "$artifacts"
dict=()
[[ -f tests/fuzz/${target}.dict ]] && dict=(-dict="tests/fuzz/${target}.dict")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "build-fuzz/tests/fuzz/fuzz_${target}" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$@" "$corpus" "tests/data/fuzz/${target}"
