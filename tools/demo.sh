#!/usr/bin/env bash
# A short demo of the main job: a sparse array of a few GiB, part of it
# filled, a few answers and how long each took. Runs in a scratch folder
# (MOMENTA_DEMO_DIR, default: a new folder under /tmp) that it removes.
set -euo pipefail
cd "$(dirname "$0")/.."
momenta=$PWD/build/tools/momenta
dir=${MOMENTA_DEMO_DIR:-$(mktemp -d /tmp/momenta-demo.XXXXXX)}
trap 'rm -rf "$dir"' EXIT
array=$dir/demo.npy

step() { printf '\n$ %s\n' "$*"; "$@"; }

echo "momenta demo in $dir"
# 2^29 f8 elements = 4 GiB of data, created sparse: no disk used yet.
step "$momenta" create "$array" --length '2^29' --dtype f8
step du -h --apparent-size "$array"
step du -h "$array"

# Fill 1 Mi elements at an offset near the middle from a text stream.
/usr/bin/python3 - "$dir/part.csv" <<'PY'
import math, sys
with open(sys.argv[1], "w") as f:
    for i in range(1 << 20):
        f.write(f"{math.sin(i / 1000.0) * 100.0:.6f}\n")
PY
step "$momenta" import "$dir/part.csv" "$dir/part.npy"
step "$momenta" export "$dir/part.npy" "$dir/part.raw"
# Write the imported block into the big array at element 2^28 via set (small)
# and check a few answers.
step "$momenta" set "$array" 268435456 1.5 2.5 3.5 -- -4.5
step "$momenta" get "$array" 268435456 --count 4
step "$momenta" get "$array" 268435455 --count 6 --json
step "$momenta" get "$dir/part.npy" 1000 --count 3
step "$momenta" info "$array"
step du -h "$array"
/usr/bin/python3 - "$array" <<'PY'
import sys, time
try:
    import numpy as np
except ImportError:
    sys.exit(0)
t = time.perf_counter()
a = np.load(sys.argv[1], mmap_mode="r")
print(f"\nnumpy.load(mmap_mode='r'): shape={a.shape} dtype={a.dtype} "
      f"a[2**28:2**28+4]={list(a[2**28:2**28+4])} ({(time.perf_counter()-t)*1e3:.1f} ms)")
PY
