#!/usr/bin/env bash
# A short demo of the main job: a sparse 4 GiB array, part of it filled, a few
# range statistics and how long each took, checked against a NumPy scan.
# Runs in a scratch folder (MOMENTA_DEMO_DIR, default: a new folder under /tmp)
# that it removes at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
momenta=$PWD/build/tools/momenta
dir=${MOMENTA_DEMO_DIR:-$(mktemp -d /tmp/momenta-demo.XXXXXX)}
trap 'rm -rf "$dir"' EXIT
array=$dir/demo.npy
py=/usr/bin/python3

step() { printf '\n$ %s\n' "$*" | sed "s|$dir/||g"; "$@"; }

echo "momenta demo (scratch folder $dir)"
# 2^29 f8 elements = 4 GiB of data, created sparse with its moment buffer.
step "$momenta" create "$array" --length 536870912 --dtype f8
step du -h --apparent-size "$array"
step du -h "$array"

# Fill 4 Mi elements from element 300,000,000 on: a noisy sine around 1e6.
"$py" - "$dir/fill.bin" <<'PY'
import sys
import numpy as np
n = 4 << 20
rec = np.empty(n, dtype=[("i", "<u8"), ("v", "<f8")])
rec["i"] = 300_000_000 + np.arange(n, dtype=np.uint64)
rng = np.random.default_rng(7)
rec["v"] = 1e6 + 100 * np.sin(np.arange(n) / 50_000.0) + rng.normal(0, 1, n)
rec.tofile(sys.argv[1])
PY
step "$momenta" update "$array" --input "$dir/fill.bin" --binary
step "$momenta" info "$array"

# Range statistics: answered from the buffer plus two partial leaves.
step "$momenta" query "$array" --range 300001234:303001234 --stat sum --stat mean --stat std --stat min --stat max
step "$momenta" query "$array" --range 300001234:303001234 --stat com --stat polyfit --degree 2
step "$momenta" query "$array" --range 1000:536869000 --stat sum --stat count --json
step "$momenta" set "$array" 301000000 -- -5e6
step "$momenta" query "$array" --range 300001234:303001234 --stat min --stat mean
# Many ranges in one call (one answer per line), and an overview in bins.
printf '300001234:303001234\n{"range": [299000000, 301000000], "stat": ["mean", "max"]}\n0:1000\n' > "$dir/ranges.txt"
step "$momenta" query "$array" --ranges "$dir/ranges.txt" --stat sum
step "$momenta" query "$array" --range 299000000:305000000 --bins 6 --snap --stat mean --stat min --stat max

# The same answers from a full NumPy scan of the memory-mapped file.
printf '\n$ numpy scan of the same range\n'
"$py" - "$array" <<'PY'
import sys, time
import numpy as np
a = np.load(sys.argv[1], mmap_mode="r")
t = time.perf_counter()
x = a[300001234:303001234]
s, m, lo = x.sum(), x.mean(), x.min()
print(f"numpy: sum {s!r} mean {m!r} min {lo!r} ({(time.perf_counter() - t) * 1e3:.1f} ms, warm cache)")
PY
step "$momenta" verify "$array"
