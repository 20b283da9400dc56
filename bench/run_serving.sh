#!/bin/sh
# Runs the serving benchmark: fio's random-read rate on the same
# file system (16 KiB at depth 32: the bound of a batch of cold queries), then
# bench/serving's serve_driver on an existing array with its buffer (its
# coldfio part runs fio too: each cold query's reads, one batch at a time).
#
#   bench/run_serving.sh [BUILD_DIR [ARRAY [DRIVER_FLAGS...]]]
#
# ARRAY defaults to moments_driver's kept 1 TiB array in MOMENTA_BENCH_DIR
# (make it once: MOMENTA_BENCH_KEEP=1 bench/run_moments.sh). Environment:
#   MOMENTA_BENCH_DIR   folder of the array and of fio's file (default: the current one)
#   FIO_RUNTIME         seconds per fio measurement (default 10)
#   FIO_GIB             size of fio's file in GiB (default 4; kept with MOMENTA_BENCH_KEEP=1)
# fio runs twice, before and after the driver; the bound uses the lower rate.
set -eu

build=${1:-build}
[ $# -gt 0 ] && shift
dir=$(cd "${MOMENTA_BENCH_DIR:-.}" && pwd)
array=${1:-$dir/momenta_moments_bench.npy}
[ $# -gt 0 ] && shift
driver=$build/bench/serve_driver
cli=$build/tools/momenta
runtime=${FIO_RUNTIME:-10}
fio_gib=${FIO_GIB:-4}
keep=${MOMENTA_BENCH_KEEP:-0}
py=/usr/bin/python3
file=$dir/momenta_serving_fio.dat
size=$((fio_gib * 1024 * 1024 * 1024))

[ -x "$driver" ] || { echo "run_serving: no $driver (build first, or pass the build dir)" >&2; exit 1; }
[ -f "$array" ] || { echo "run_serving: no array $array (MOMENTA_BENCH_KEEP=1 bench/run_moments.sh makes one)" >&2; exit 1; }
command -v fio >/dev/null || { echo "run_serving: fio not found (apt-get install fio)" >&2; exit 1; }

trap 'rm -f "$file.part"; [ "$keep" = 1 ] || rm -f "$file"' EXIT
trap 'exit 130' INT TERM
if [ ! -f "$file" ] || [ "$(stat -c %s "$file")" -ne "$size" ]; then
  free_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
  if [ "$free_kib" -lt $(((fio_gib + 1) * 1024 * 1024)) ]; then
    echo "run_serving: $dir has $((free_kib / 1024)) MiB free; fio's file needs ${fio_gib} GiB + 1 GiB" >&2
    exit 1
  fi
  echo "run_serving: writing fio's ${fio_gib} GiB file"
  fio --name=layout --filename="$file.part" --size="$size" --rw=write --bs=1M --ioengine=psync \
      --end_fsync=1 --refill_buffers=1 --output-format=terse >/dev/null
  mv "$file.part" "$file"
fi
iops() {
  fio --name=momenta --filename="$file" --size="$size" --ioengine=io_uring --direct=1 --rw=randread --bs=16k \
      --iodepth=32 --runtime="$runtime" --time_based --output-format=json 2>/dev/null |
    "$py" -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["read"]["iops"])'
}
echo "run_serving: revision $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown);" \
     "kernel $(uname -r); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
before=$(iops)
echo "run_serving: fio randread 16 KiB qd 32: $before IOPS"
"$driver" --array="$array" --cli="$cli" --fio="$(command -v fio)" --fio-iops="$before" "$@"
after=$(iops)
echo "run_serving: fio randread 16 KiB qd 32 after the driver: $after IOPS (the table's bound used $before)"
