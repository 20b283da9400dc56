"""What the Python package adds to the engine (bench/README.md, "Python").

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--dir DIR] [--elements N] [--rounds R]

On one dense f8 array written by NumPy (2^26 elements, 512 MiB, by default; kept in DIR
between runs), all warm (every range asked once before timing):

  1. per call: a warm a.sum(p, q) from Python against the same library calls (Summarize,
     ComputeStat) timed in C++ inside the extension, over the same 2000 ranges; the overhead is
     the difference per call (target <= 5 us);
  2. many ranges: a.stats(starts, stops, ["mean", "var"]) of 10^5 warm ranges (target >= 10^5
     ranges/s) against the same batch timed in C++, and the same 10^5 ranges through NumPy
     slices of the memmap (x[p:q].mean(), x[p:q].var()) for comparison.

Each figure is the median of R rounds (7 by default) with the contenders interleaved in each
round; the spread (min..max) is printed beside it. Ranges are uniform in position with lengths
uniform in [1, 10^5] (stats) or [1, 2^20] (per call).
"""

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

import momenta


def median_spread(xs):
    return statistics.median(xs), min(xs), max(xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="bench-python", help="where the array is kept (default: ./bench-python)")
    ap.add_argument("--elements", type=int, default=1 << 26)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--ranges", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--leaf", type=int, default=0, help="rebuild the buffer with this leaf span first (0: as it is)")
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, f"dense-{args.elements}.npy")
    rng = np.random.default_rng(args.seed)
    if not os.path.exists(path):
        print(f"writing {path} ({args.elements * 8 >> 20} MiB, NumPy) ...", file=sys.stderr)
        x = np.lib.format.open_memmap(path + ".tmp", mode="w+", dtype=np.float64, shape=(args.elements,))
        for k in range(0, args.elements, 1 << 22):
            x[k:k + (1 << 22)] = rng.normal(3, 1, min(1 << 22, args.elements - k))
        x.flush()
        del x
        os.replace(path + ".tmp", path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", momenta.Notice)
        if args.leaf:
            with momenta.open(path, "r+") as w:
                if w.leaf_span != args.leaf:
                    w.rebuild(leaf=args.leaf)
        a = momenta.open(path)  # builds the buffer the first time
    x = a.numpy()
    n = a.size
    print(f"array {path}: {n} f8, leaf span {a.leaf_span}, order {a.order}, io {a.io}; seed {args.seed}")

    # ---- 1. per call -----------------------------------------------------------------
    # Two sets of 2000 ranges: long ones (up to 2^20 elements: nodes and two end pieces), and
    # short ones inside one leaf (one small read: the engine's cheapest call, where the
    # package's own cost shows best).
    h = a._h
    calls = 2000
    for label, longest in (("ranges of 1..2^20", 1 << 20), ("ranges of 1..16", 16)):
        p = rng.integers(0, n - longest, calls)
        q = p + rng.integers(1, longest, calls, endpoint=True)
        pl, ql = p.tolist(), q.tolist()
        for i in range(calls):  # warm: every end piece and node in the page cache
            a.sum(pl[i], ql[i])
        py_us, cpp_us = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for i in range(calls):
                a.sum(pl[i], ql[i])
            py_us.append((time.perf_counter() - t0) / calls * 1e6)
            cpp_us.append(h._time_stat(0, p, q, 1) / calls * 1e6)
        over = [a_ - b_ for a_, b_ in zip(py_us, cpp_us)]
        print(f"{label}:")
        m, lo, hi = median_spread(py_us)
        print(f"  a.sum(p, q) from Python, warm: {m:8.2f} us/call  ({lo:.2f}..{hi:.2f})")
        m, lo, hi = median_spread(cpp_us)
        print(f"  the same calls in C++, warm:   {m:8.2f} us/call  ({lo:.2f}..{hi:.2f})")
        m, lo, hi = median_spread(over)
        print(f"  overhead of the package:       {m:8.2f} us/call  ({lo:.2f}..{hi:.2f} per round)  target <= 5 us")

    # ---- 2. many ranges -----------------------------------------------------------------
    k = args.ranges
    starts = rng.integers(0, n - 100_000, k)
    stops = starts + rng.integers(1, 100_000, k)
    a.stats(starts, stops, ["mean", "var"])  # warm
    py_rate, cpp_rate, np_rate = [], [], []
    sl, el = starts.tolist(), stops.tolist()
    for r in range(args.rounds):
        t0 = time.perf_counter()
        got = a.stats(starts, stops, ["mean", "var"])
        py_rate.append(k / (time.perf_counter() - t0))
        cpp_rate.append(k / h._time_stats(starts, stops, [2, 3]))
        if r < 3:  # NumPy's pass is slow: three rounds
            t0 = time.perf_counter()
            means = np.empty(k)
            variances = np.empty(k)
            for i in range(k):
                s = x[sl[i]:el[i]]
                means[i] = s.mean()
                variances[i] = s.var()
            np_rate.append(k / (time.perf_counter() - t0))
            if r == 0:  # the answers agree
                assert np.allclose(got["mean"], means, rtol=1e-9, atol=1e-9)
                assert np.allclose(got["var"], variances, rtol=1e-8, atol=1e-9)
    for label, rates in (("a.stats(...) from Python", py_rate), ("the same batch in C++", cpp_rate),
                         ("NumPy slices of the memmap", np_rate)):
        m, lo, hi = median_spread(rates)
        print(f"{label:28s} {m:10,.0f} ranges/s  ({lo:,.0f}..{hi:,.0f})")
    print(f"(10^5 target: {'met' if statistics.median(py_rate) >= 1e5 else 'not met'}; mean+var of "
          f"{k} ranges of 1..10^5 elements)")
    a.close()


if __name__ == "__main__":
    main()
