#!/bin/sh
# `momenta build` of an array against fio's sequential read of the same bytes,
# interleaved run by run, caches dropped before each (echo 1 >
# /proc/sys/vm/drop_caches: run as root). Prints each run and the medians.
#
#   bench/build_vs_fio.sh ARRAY.npy [BUILD_DIR]     (default BUILD_DIR: build)
#
# ARRAY.npy: an existing momenta array with data (its data extents are what
# both read). fio reads the array file itself (--direct=1, io_uring) over the
# byte range its data spans, at the block size and depth in FIO_BS / FIO_QD
# (default 1m / 8: what reached this disk's sequential rate, bench/README.md).
# Environment: REPEAT (runs per tool, default 5).
set -eu
array=$1
build=${2:-build}
momenta=$build/tools/momenta
repeat=${REPEAT:-5}
bs=${FIO_BS:-1m}
qd=${FIO_QD:-8}
py=/usr/bin/python3
[ -x "$momenta" ] || { echo "build_vs_fio: no $momenta" >&2; exit 1; }
[ -w /proc/sys/vm/drop_caches ] || { echo "build_vs_fio: needs root (drop_caches)" >&2; exit 1; }

# The byte range of the array's data: first to last data extent (SEEK_DATA/SEEK_HOLE).
range=$("$py" - "$array" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
end = os.fstat(fd).st_size
first = last = None
at = 4096
total = 0
while at < end:
    try:
        d = os.lseek(fd, at, os.SEEK_DATA)
    except OSError:
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    first = d if first is None else first
    last = h
    total += h - d
    at = h
print(first, last, total)
PY
)
set -- $range
first=$1; last=$2; data=$3
echo "data: $data bytes in [$first, $last); fio --bs=$bs --iodepth=$qd over the extents' bytes"

results=$(mktemp)
trap 'rm -f "$results"' EXIT
i=0
while [ "$i" -lt "$repeat" ]; do
  sync; echo 1 > /proc/sys/vm/drop_caches
  # fio: one job per data extent would be exact; the extents of a momenta
  # bench array are few, so read them in order with --rw=read over the span
  # and count only bytes of data (holes read as zeros cost no device time).
  f=$(fio --name=b --filename="$array" --ioengine=io_uring --direct=1 --rw=read --bs="$bs" \
        --iodepth="$qd" --offset="$first" --size=$((last - first)) --output-format=json 2>/dev/null |
      "$py" -c 'import json,sys; r=json.load(sys.stdin)["jobs"][0]["read"]; print(r["runtime"]/1e3)')
  sync; echo 1 > /proc/sys/vm/drop_caches
  s=$(date +%s.%N)
  "$momenta" build "$array" >/dev/null
  e=$(date +%s.%N)
  m=$(echo "$e - $s" | bc)
  echo "run $((i + 1)): fio ${f} s, momenta build ${m} s" | tee -a "$results" >&2
  i=$((i + 1))
done
"$py" - "$results" "$data" <<'PY'
import statistics, sys
fio, mom, ratio = [], [], []
for line in open(sys.argv[1]):
    w = line.split()
    f, m = float(w[3]), float(w[7])
    fio.append(f); mom.append(m); ratio.append(f / m)
data = int(sys.argv[2])
med = statistics.median
print(f"fio {med(fio):.2f} s ({data / med(fio) / 1e6:.0f} MB/s of data), momenta build {med(mom):.2f} s "
      f"({data / med(mom) / 1e6:.0f} MB/s): build / fio {med(ratio):.0%} (runs {min(ratio):.0%}-{max(ratio):.0%})")
PY
