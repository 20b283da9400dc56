#!/usr/bin/python3
"""Warm batches on one and two threads: a.stats(starts, stops, [sum, mean, var]) of 10^5 ranges
(1..10^5 elements) on one handle, the whole batch on one thread, then split in halves between two,
interleaved five times; prints the medians and their ratio.

    PYTHONPATH=build/python /usr/bin/python3 bench/stats_threads.py ARRAY.npy
"""
import sys, time, threading
import numpy as np, momenta
a = momenta.open(sys.argv[1])
n = len(a) if hasattr(a, "__len__") else a.length
rng = np.random.default_rng(33)
m = 100000
starts = rng.integers(0, n - (1 << 17), m); stops = starts + rng.integers(1, 100000, m)
a.stats(starts, stops, ["sum", "mean", "var"])  # warm
def run(k):
    half = m // k
    def work(i):
        a.stats(starts[i*half:(i+1)*half], stops[i*half:(i+1)*half], ["sum", "mean", "var"])
    t = time.perf_counter()
    ts = [threading.Thread(target=work, args=(i,)) for i in range(k)]
    [x.start() for x in ts]; [x.join() for x in ts]
    return m / (time.perf_counter() - t)
r = {1: [], 2: []}
for _ in range(5):
    for k in (1, 2): r[k].append(run(k))
med = {k: sorted(v)[2] for k, v in r.items()}
print(f"a.stats of 10^5 ranges: 1 thread {med[1]:,.0f}/s, 2 threads {med[2]:,.0f}/s, ratio {med[2]/med[1]:.2f}x (medians of 5, interleaved)")
