#!/bin/sh
# Runs fio and io_bench's io_uring cases on the same file with the same
# patterns, alternating them case by case, and prints a markdown table with
# the momenta / fio ratio.
#
#   bench/fio_compare.sh [BUILD_DIR]          (default BUILD_DIR: build)
#
# Environment (as for io_bench):
#   MOMENTA_BENCH_DIR   folder for the data file (default: the current one)
#   MOMENTA_BENCH_GIB   data file size in GiB (default 4)
#   MOMENTA_BENCH_KEEP  1: keep the data file afterwards
#   MOMENTA_BENCH_HUGEPAGES  0: io_bench reads into plain 4 KiB pages, like fio
#   RUNTIME             seconds per measurement, both tools (default 5)
#   REPEAT              measurements per case and tool (default 1); with more
#                       than one the table shows medians, and the ratio is the
#                       median of each run's own momenta / fio, with its range
#   WAIT_IDLE           1: before each measurement wait (up to a minute) until
#                       the disk holding the file moves < 5 MB/s (reads and
#                       writes) for 3 s, for machines where other jobs share it
#
# fio runs --ioengine=io_uring --direct=1, like momenta's io_uring backend
# on aligned requests. Needs fio and /usr/bin/python3 (JSON parsing).
set -eu

build=${1:-build}
io_bench=$build/bench/io_bench
runtime=${RUNTIME:-5}
repeat=${REPEAT:-1}
keep=${MOMENTA_BENCH_KEEP:-0}
py=/usr/bin/python3

[ -x "$io_bench" ] || { echo "fio_compare: no $io_bench (build first, or pass the build dir)" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio_compare: fio not found (apt-get install fio)" >&2; exit 1; }
[ -x "$py" ] || { echo "fio_compare: $py not found (apt-get install python3)" >&2; exit 1; }

dir=$(cd "${MOMENTA_BENCH_DIR:-.}" && pwd)
file=$dir/momenta_io_bench.dat
export MOMENTA_BENCH_DIR="$dir"

# io_bench makes (or reuses) the data file and checks free space; an empty
# filter runs no benchmark.
MOMENTA_BENCH_KEEP=1 "$io_bench" --benchmark_filter='^$' >/dev/null
results=$(mktemp)
trap 'rm -f "$results"; [ "$keep" = 1 ] || rm -f "$file"' EXIT
trap 'exit 130' INT TERM
size=$(stat -c %s "$file")

wait_idle() {
  [ "${WAIT_IDLE:-0}" = 1 ] || return 0
  st=/sys/dev/block/$(stat -c '%Hd:%Ld' "$file")/stat
  [ -r "$st" ] || return 0  # no block device behind the file system
  tries=0
  while [ "$tries" -lt 20 ]; do
    a=$(awk '{printf "%.0f", $3 + $7}' "$st"); sleep 3; b=$(awk '{printf "%.0f", $3 + $7}' "$st")  # sectors read + written
    [ $(( (b - a) * 512 / 3 )) -lt 5000000 ] && return 0
    tries=$((tries + 1))
  done
  echo "fio_compare: the disk stayed busy; measuring anyway" >&2
}

run_fio() {  # rw bs_kib qd -> "bytes_per_s iops"
  fio --name=momenta --filename="$file" --ioengine=io_uring --direct=1 --rw="$1" \
      --bs="$2"k --iodepth="$3" --size="$size" --runtime="$runtime" --time_based \
      --output-format=json 2>/dev/null |
    "$py" -c 'import json, sys; r = json.load(sys.stdin)["jobs"][0]["read"]; print(r["bw_bytes"], r["iops"])'
}

run_momenta() {  # benchmark block_kib qd -> "bytes_per_s items_per_s label"
  MOMENTA_BENCH_KEEP=1 MOMENTA_BENCH_MIN_TIME="$runtime" "$io_bench" \
      --benchmark_filter="^$1/backend:2/block_kib:$2/qd:$3/" --benchmark_format=json 2>/dev/null |
    "$py" -c 'import json, sys
b = json.load(sys.stdin)["benchmarks"][0]
print(b["bytes_per_second"], b["items_per_second"], b.get("label", ""))'
}

for case in "read 128 1" "read 128 32" "read 1024 1" "read 1024 32" "randread 4 1" "randread 4 32"; do
  set -- $case
  if [ "$1" = read ]; then bm=BM_SequentialRead; else bm=BM_RandomRead; fi
  i=0
  while [ "$i" -lt "$repeat" ]; do
    wait_idle
    fio_run=$(run_fio "$1" "$2" "$3")
    wait_idle
    momenta_run=$(run_momenta "$bm" "$2" "$3")
    echo "$1 $2 $3 fio $fio_run" >>"$results"
    echo "$1 $2 $3 momenta $momenta_run" >>"$results"
    # Every measurement on stderr (bytes/s, IOPS), so outliers can be seen.
    echo "fio_compare: $1 bs=${2}KiB qd=$3 run $((i + 1))/$repeat:" \
         "fio $(echo "$fio_run" | cut -d' ' -f1-2)  momenta $(echo "$momenta_run" | cut -d' ' -f1-2)" >&2
    i=$((i + 1))
  done
done

"$py" - "$results" "$size" "$runtime" "$repeat" <<'EOF'
import statistics, sys
path, size, runtime, repeat = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
runs = {}
label = ""
for line in open(path):
    f = line.split()
    key, tool = (f[0], int(f[1]), int(f[2])), f[3]
    runs.setdefault(key, {"fio": [], "momenta": []})[tool].append((float(f[4]), float(f[5])))
    if tool == "momenta" and len(f) > 6: label = " ".join(f[6:])
med = statistics.median
print(f"file {size / 2**30:.1f} GiB, {runtime} s per run, {repeat} run(s) per case; "
      f"momenta backend: {label}\n")
print("| pattern | block | qd | fio MB/s | fio IOPS | momenta MB/s | momenta IOPS | momenta / fio |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for (rw, kib, qd), r in runs.items():
    fb, fi = med(x[0] for x in r["fio"]), med(x[1] for x in r["fio"])
    mb, mi = med(x[0] for x in r["momenta"]), med(x[1] for x in r["momenta"])
    per_run = [m[0] / f[0] for f, m in zip(r["fio"], r["momenta"])]
    ratio = f"{med(per_run):.0%}"
    if repeat > 1:
        ratio += f" ({min(per_run):.0%}–{max(per_run):.0%})"
    pattern = "sequential" if rw == "read" else "random"
    print(f"| {pattern} | {kib} KiB | {qd} | {fb / 1e6:.0f} | {fi:.0f} | {mb / 1e6:.0f} | {mi:.0f} | {ratio} |")
EOF
