#!/usr/bin/env bash
# Runs one libFuzzer target, or all of them, for SECONDS each:
#
#   tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   tools/fuzz.sh npy 600
#   tools/fuzz.sh tree 60 -runs=10000000      # stop after 10^7 executions instead
#   tools/fuzz.sh all 5                       # every target, 5 s each (CI)
#
# TARGET is one of tests/fuzz/*_fuzz.cc (npy, log, tree, wire, synopsis, params,
# values, text), or all: each in turn, after building them all; it exits
# non-zero when any target failed and names those. Builds the fuzz build
# (clang, libFuzzer, AddressSanitizer + UndefinedBehaviorSanitizer, asserts
# on) in build-fuzz/, installing clang from
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
# MOMENTA_WERROR=1 (CI): any compiler warning fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=$(cd tests/fuzz && ls ./*_fuzz.cc | sed 's|./||; s|_fuzz.cc||' | tr '\n' ' ')
if (($# < 2)); then
  echo "usage: tools/fuzz.sh TARGET|all SECONDS [libFuzzer flags...]" >&2
  echo "targets: ${all_targets}" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
if [[ $target == all ]]; then
  read -ra targets <<<"$all_targets"
elif [[ -f tests/fuzz/${target}_fuzz.cc ]]; then
  targets=("$target")
else
  echo "fuzz.sh: no target '${target}' (no tests/fuzz/${target}_fuzz.cc)" >&2
  exit 2
fi

packages=(clang libclang-rt-14-dev cmake make pkg-config liburing-dev libboost-dev libcli11-dev)
source tools/install_missing.sh
install_missing "${packages[@]}"

# MOMENTA_WERROR=1 (CI) and ccache (tools/build_flags.sh).
source tools/build_flags.sh
mapfile -t config < <(build_flags)
# RelWithDebInfo with the flags overridden: -O1 -g and no -DNDEBUG (asserts on).
CXX=clang++ cmake -S . -B build-fuzz -DMOMENTA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" "${config[@]}" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Runs target $1 for $seconds, its seeds and past crashers first.
fuzz_one() {
  local corpus=build-fuzz/corpus/$1 artifacts=build-fuzz/artifacts/$1 dict=()
  mkdir -p "$corpus" "$artifacts"
  [[ -f tests/fuzz/$1.dict ]] && dict=(-dict="tests/fuzz/$1.dict")
  "build-fuzz/tests/fuzz/fuzz_$1" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "${extra[@]}" "$corpus" "tests/data/fuzz/$1"
}
extra=("$@")
((${#targets[@]} == 1)) && { fuzz_one "${targets[0]}"; exit; }
failed=()
for t in "${targets[@]}"; do
  echo "fuzz.sh: $t, ${seconds} s" >&2
  fuzz_one "$t" || failed+=("$t")
done
if ((${#failed[@]})); then
  echo "fuzz.sh: failed: ${failed[*]} (inputs in build-fuzz/artifacts/)" >&2
  exit 1
fi
echo "fuzz.sh: all ${#targets[@]} targets ran ${seconds} s each, no failure" >&2
