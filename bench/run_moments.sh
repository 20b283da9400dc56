#!/bin/sh
# Runs the moment-buffer benchmark: fio's floors on the same file
# system first, then bench/moments_driver (1 TiB sparse array, 8 GiB of data:
# build, cold queries with the disk tier on and off, scans in C++ and NumPy,
# warm updates, Verify), which prints the markdown table at the end.
#
#   bench/run_moments.sh [BUILD_DIR [DRIVER_FLAGS...]]   (default BUILD_DIR: build)
#
# Environment:
#   MOMENTA_BENCH_DIR   folder for the files (default: the current one)
#   MOMENTA_BENCH_KEEP  1: keep the array, its buffer and fio's file, and reuse them
#   MOMENTA_BENCH_SEED  seed of the driver (default 20240601)
#   FIO_RUNTIME         seconds per fio measurement (default 10)
#   FIO_GIB             size of fio's file in GiB (default 4)
#
# Needs fio and /usr/bin/python3 with NumPy (Debian: fio, python3-numpy).
# About 10-15 minutes on a 2-core virtual machine; needs ~8 GiB + 2 GiB free
# for the array and FIO_GIB + 1 GiB for fio's file.
set -eu

build=${1:-build}
[ $# -gt 0 ] && shift
driver=$build/bench/moments_driver
here=$(cd "$(dirname "$0")" && pwd)
runtime=${FIO_RUNTIME:-10}
fio_gib=${FIO_GIB:-4}
keep=${MOMENTA_BENCH_KEEP:-0}
py=/usr/bin/python3

[ -x "$driver" ] || { echo "run_moments: no $driver (build first, or pass the build dir)" >&2; exit 1; }
command -v fio >/dev/null || { echo "run_moments: fio not found (apt-get install fio)" >&2; exit 1; }
[ -x "$py" ] || { echo "run_moments: $py not found (apt-get install python3)" >&2; exit 1; }
"$py" -c 'import numpy' 2>/dev/null || { echo "run_moments: NumPy missing (apt-get install python3-numpy)" >&2; exit 1; }

dir=$(cd "${MOMENTA_BENCH_DIR:-.}" && pwd)
export MOMENTA_BENCH_DIR="$dir"
file=$dir/momenta_moments_fio.dat
size=$((fio_gib * 1024 * 1024 * 1024))

echo "run_moments: revision $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
     "$(git -C "$here/.." status --porcelain -- buffers storage 2>/dev/null | wc -l) files changed in buffers/ storage/;" \
     "kernel $(uname -r); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"

trap 'rm -f "$file.part"; [ "$keep" = 1 ] || rm -f "$file"' EXIT
trap 'exit 130' INT TERM

# fio's file is reused only when complete: the right size, every block on disk.
if [ ! -f "$file" ] || [ "$(stat -c %s "$file")" -ne "$size" ] ||
   [ "$(stat -c %b "$file")" -lt $((size / 512)) ]; then
  free_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
  if [ "$free_kib" -lt $(((fio_gib + 1) * 1024 * 1024)) ]; then
    echo "run_moments: $dir has $((free_kib / 1024)) MiB free; fio's file needs ${fio_gib} GiB + 1 GiB" >&2
    exit 1
  fi
  rm -f "$file" "$file.part"
  # Random bytes, fully written (holes or zeros would read without the disk);
  # renamed into place only once complete.
  echo "run_moments: writing fio's ${fio_gib} GiB file"
  fio --name=layout --filename="$file.part" --size="$size" --rw=write --bs=1M --ioengine=psync \
      --end_fsync=1 --refill_buffers=1 --output-format=terse >/dev/null
  mv "$file.part" "$file"
fi

fio_json() {  # extra fio arguments -> fio's JSON on stdout
  fio --name=momenta --filename="$file" --size="$size" --ioengine=io_uring --direct=1 \
      --runtime="$runtime" --time_based --output-format=json "$@" 2>/dev/null
}
echo "run_moments: fio --rw=read --bs=1M --iodepth=32 --ioengine=io_uring --direct=1 (${runtime} s)"
seq_mbs=$(fio_json --rw=read --bs=1M --iodepth=32 |
  "$py" -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["read"]["bw_bytes"] / 1e6)')
p50() {
  "$py" -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"] / 1e3)'
}
echo "run_moments: fio --rw=randread --bs=4k --iodepth=1 (${runtime} s)"
rand_us=$(fio_json --rw=randread --bs=4k --iodepth=1 | p50)
echo "run_moments: fio --rw=randread --bs=64k --iodepth=1 (${runtime} s)"
rand64_us=$(fio_json --rw=randread --bs=64k --iodepth=1 | p50)
echo "run_moments: fio: sequential ${seq_mbs} MB/s, randread p50 4k ${rand_us} us, 64k ${rand64_us} us"

"$driver" --fio-seq-mbs="$seq_mbs" --fio-rand-p50-us="$rand_us" --fio-rand64k-p50-us="$rand64_us" \
          --numpy-script="$here/scan_numpy.py" --python="$py" "$@"
