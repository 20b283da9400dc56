"""What serving a sharded array through Dask costs (bench/README.md, "Dask").

    PYTHONPATH=build/python /usr/bin/python3 bench/dask_bench.py [--dir DIR] [--elements N] [--shards S]

One dense f8 array written by NumPy (2^24 elements, 128 MiB, by default; kept in DIR between
runs) is split into S shards (6 by default) on a LocalCluster of worker processes (one thread
each) on this machine, every shard in its worker's own folder. All warm (every range asked
once before timing):

  1. latency: one a.sum(p, q) over a range touching three shards through ShardedArray (three
     pinned tasks, their summaries merged) against the same call on the whole array opened
     in-process (momenta.open), interleaved run by run, and a bare Dask round trip
     (client.submit(noop).result()) for reference; medians and the ratio of this same run.
  2. throughput: a.stats(starts, stops, ["mean"]) of 10^4 random ranges (uniform positions,
     lengths uniform in [1, 10^6], so many cross shard boundaries) with 1, 2 and 3 workers,
     the shards placed round robin on them; the in-process Array.stats of the same ranges
     beside it. Each figure is the median of R rounds (5 by default), min..max beside it.
"""

import argparse
import os
import shutil
import statistics
import sys
import time
import warnings

import numpy as np

import momenta
import momenta.dask as md


def median_spread(xs):
    return statistics.median(xs), min(xs), max(xs)


def noop():
    return 0


def cluster(workers):
    from distributed import Client, LocalCluster
    c = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                     silence_logs=50)
    return c, Client(c)


def sharded(client, src, root, shards, n):
    if os.path.exists(root):
        shutil.rmtree(root)
    ws = sorted(client.scheduler_info()["workers"])
    place = [(w, os.path.join(root, f"worker{k}")) for k, w in enumerate(ws)]
    m = md.shard_create(src, os.path.join(root, "a.json"), -(-n // shards), place, client)
    return md.ShardedArray(m, client)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="bench-dask", help="where the array and shards are kept (default: ./bench-dask)")
    ap.add_argument("--elements", type=int, default=1 << 24)
    ap.add_argument("--shards", type=int, default=6)
    ap.add_argument("--calls", type=int, default=300, help="latency: timed calls of each kind")
    ap.add_argument("--ranges", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args()
    warnings.simplefilter("ignore", momenta.Notice)

    os.makedirs(args.dir, exist_ok=True)
    n = args.elements
    src = os.path.abspath(os.path.join(args.dir, f"dense-{n}.npy"))
    rng = np.random.default_rng(args.seed)
    if not os.path.exists(src):
        print(f"writing {src} ({n * 8 >> 20} MiB, NumPy) ...", file=sys.stderr)
        x = np.lib.format.open_memmap(src + ".tmp", mode="w+", dtype=np.float64, shape=(n,))
        for k in range(0, n, 1 << 22):
            x[k:k + (1 << 22)] = rng.normal(3, 1, min(1 << 22, n - k))
        x.flush()
        del x
        os.replace(src + ".tmp", src)
    one = momenta.open(src)
    per = -(-n // args.shards)
    print(f"array: {n} f8 ({n * 8 >> 20} MiB), {args.shards} shards of {per}; cores: {os.cpu_count()}")

    # 1. latency, with 3 workers.
    c, client = cluster(3)
    try:
        a = sharded(client, src, os.path.join(args.dir, "shards"), args.shards, n)
        p, q = per // 2, per * 3 - per // 3  # shards 0, 1 and 2
        assert abs(a.sum(p, q) - one.sum(p, q)) <= 1e-9 * abs(one.sum(p, q)) + 1e-6
        for _ in range(20):
            a.sum(p, q), one.sum(p, q), client.submit(noop, pure=False).result()
        t_dask, t_one, t_rt = [], [], []
        for _ in range(args.calls):
            t0 = time.perf_counter()
            a.sum(p, q)
            t1 = time.perf_counter()
            one.sum(p, q)
            t2 = time.perf_counter()
            client.submit(noop, pure=False).result()
            t3 = time.perf_counter()
            t_dask.append(t1 - t0)
            t_one.append(t2 - t1)
            t_rt.append(t3 - t2)
        md_, lo, hi = median_spread(t_dask)
        mo, lo1, hi1 = median_spread(t_one)
        mr, lo2, hi2 = median_spread(t_rt)
        print(f"latency sum over 3 shards, {args.calls} interleaved calls:")
        print(f"  ShardedArray (3 workers): median {md_ * 1e3:8.3f} ms  ({lo * 1e3:.3f}..{hi * 1e3:.3f})")
        print(f"  Array in-process        : median {mo * 1e6:8.1f} us  ({lo1 * 1e6:.1f}..{hi1 * 1e6:.1f})")
        print(f"  bare Dask round trip    : median {mr * 1e3:8.3f} ms  ({lo2 * 1e3:.3f}..{hi2 * 1e3:.3f})")
        print(f"  ratio ShardedArray / in-process: {md_ / mo:.0f}x")
    finally:
        client.close()
        c.close()

    # 2. throughput of 10^4 ranges with 1, 2, 3 workers.
    starts = rng.integers(0, n, args.ranges)
    stops = np.minimum(starts + rng.integers(1, 1_000_001, args.ranges), n)
    crossing = int(np.sum(starts // per != (stops - 1) // per))
    print(f"throughput: stats(mean) of {args.ranges} ranges ({crossing} cross a shard boundary), "
          f"median of {args.rounds} rounds:")
    ref = one.stats(starts, stops, ["mean"])["mean"]
    for workers in (1, 2, 3):
        c, client = cluster(workers)
        try:
            a = sharded(client, src, os.path.join(args.dir, f"shards{workers}"), args.shards, n)
            got = a.stats(starts, stops, ["mean"])["mean"]  # warm
            assert np.allclose(got, ref, rtol=1e-12)
            ts, t1s = [], []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                a.stats(starts, stops, ["mean"])
                t1 = time.perf_counter()
                one.stats(starts, stops, ["mean"])
                t2 = time.perf_counter()
                ts.append(t1 - t0)
                t1s.append(t2 - t1)
            m, lo, hi = median_spread([args.ranges / t for t in ts])
            m1, _, _ = median_spread([args.ranges / t for t in t1s])
            print(f"  {workers} worker(s): {m:9.0f} ranges/s ({lo:.0f}..{hi:.0f}); in-process Array.stats "
                  f"{m1:9.0f} ranges/s")
        finally:
            client.close()
            c.close()


if __name__ == "__main__":
    main()
