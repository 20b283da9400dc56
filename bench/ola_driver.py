#!/usr/bin/python3
"""The default buffer (hbb) beside the Ola buffer, through the CLI.

  /usr/bin/python3 bench/ola_driver.py --cli build/tools/momenta --dir DIR [--gib 2] [--rounds 5] [--order 3]

Makes a dense f8 array of --gib GiB of normal values in DIR and a copy, builds
the default buffer (hbb, --order J) on one and the Ola buffer (--buffer ola
--order J, bin chosen so that its file is about the size of the tree file:
equal buffer bytes) on the other, then interleaves, round by round, hbb then
ola:

  build: `momenta build`, the array cold (page cache dropped), wall time;
  query: `momenta query --stat moments --order J` over ranges of 10^3, 10^6,
      10^8 cells and the whole array (random starts, the same for both), cold
      (array and sidecar dropped) and warm (the same query again), each as a
      whole process (wall) and inside it (the query's own elapsed_us), with
      the bytes it read from the array and from the buffer's file;
  update: 10^5 uniformly scattered updates (binary records), the array warm.

Prints a Markdown table of medians (and each kind's buffer size and the
process's peak RSS) and, with --json FILE, one JSON line per measurement.
Needs root (drop_caches). Cleans up unless --keep.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

import numpy as np


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("1\n")


def run(argv, stdin=None):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin, text=True)
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"ola_driver: {' '.join(argv)} failed ({p.returncode}): {err.strip()}")
    return out, wall


def rss_of(argv):
    """Peak RSS (KiB) of one run of argv."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, capture_output=True, text=True, check=True)
    return int(p.stderr.strip().splitlines()[-1])


def sidecar_bytes(path, name):
    f = os.path.join(path + ".momenta", name)
    return os.path.getsize(f) if os.path.exists(f) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--gib", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--order", type=int, default=3)
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--json")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("ola_driver: stopped (SIGTERM); cleaning up"))
    if os.geteuid() != 0:
        sys.exit("ola_driver: needs root (it drops the page cache for cold runs)")
    length = a.gib << 27
    need = 2 * (length * 8) + (1 << 30)
    os.makedirs(a.dir, exist_ok=True)
    free = shutil.disk_usage(a.dir).free
    if free < need:
        sys.exit(f"ola_driver: {a.dir} has {free >> 20} MiB free; the two arrays need {need >> 20} MiB")
    print(f"ola_driver: seed {a.seed}; kernel {os.uname().release}; {os.cpu_count()} cores; "
          f"load {open('/proc/loadavg').read().split()[:3]}", flush=True)
    paths = {"hbb": os.path.join(a.dir, "ola_bench_hbb.npy"), "ola": os.path.join(a.dir, "ola_bench_ola.npy")}
    rows = []
    try:
        m = np.lib.format.open_memmap(paths["hbb"], mode="w+", dtype="<f8", shape=(length,))
        rng = np.random.default_rng(a.seed)
        for i in range(0, length, 1 << 24):
            m[i:i + (1 << 24)] = rng.standard_normal(min(1 << 24, length - i))
        m.flush()
        del m
        shutil.copyfile(paths["hbb"], paths["ola"])
        # Equal buffer bytes: the tree file's size decides the Ola bin (its
        # file is about 8·n/(b − 1) bytes, explicit levels).
        subprocess.run([a.cli, "build", paths["hbb"], "--order", str(a.order)], check=True, capture_output=True)
        tree_bytes = sidecar_bytes(paths["hbb"], "tree")
        bin_ = max(2, round(8 * length / max(tree_bytes, 1)) + 1)
        build_args = {"hbb": ["--order", str(a.order)],
                      "ola": ["--buffer", "ola", "--order", str(a.order), "--bin", str(bin_)]}
        lengths = [10 ** 3, 10 ** 6, 10 ** 8, length]
        lengths = [n for n in lengths if n <= length]
        for round_no in range(a.rounds):
            for kind in ("hbb", "ola"):
                drop_caches()
                _, wall = run([a.cli, "build", paths[kind]] + build_args[kind])
                rows.append({"kind": kind, "what": "build", "round": round_no, "wall_s": wall})
            starts = {n: int(rng.integers(0, length - n + 1)) for n in lengths}
            for n in lengths:
                for kind in ("hbb", "ola"):
                    q = [a.cli, "query", paths[kind], "--stat", "moments", "--order", str(a.order), "--range",
                         f"{starts[n]}:{starts[n] + n}", "--json"]
                    for temp in ("cold", "warm"):
                        if temp == "cold":
                            drop_caches()
                        out, wall = run(q)
                        j = json.loads(out.strip().splitlines()[-1])
                        rows.append({"kind": kind, "what": f"query {temp}", "n": n, "round": round_no,
                                     "wall_s": wall, "query_us": j["elapsed_us"],
                                     "array_bytes": j["array_bytes_read"], "buffer_bytes": j["tier_bytes_read"]})
            rec = np.zeros(10 ** 5, dtype=[("i", "<u8"), ("v", "<f8")])
            rec["i"] = rng.integers(0, length, len(rec), dtype=np.uint64)
            rec["v"] = np.random.default_rng().standard_normal(len(rec))
            rec_path = os.path.join(a.dir, "ola_bench_updates.bin")
            rec.tofile(rec_path)
            for kind in ("hbb", "ola"):
                _, wall = run([a.cli, "update", paths[kind], "--binary", "--input", rec_path])
                rows.append({"kind": kind, "what": "update", "round": round_no, "wall_s": wall,
                             "rate": len(rec) / wall})
        sizes = {"hbb": sidecar_bytes(paths["hbb"], "tree"),
                 "ola": sidecar_bytes(paths["ola"], "ola") + sidecar_bytes(paths["ola"], "tree")}
        rss = {k: rss_of([a.cli, "query", paths[k], "--stat", "moments", "--order", str(a.order), "--range",
                          f"0:{length}"]) for k in ("hbb", "ola")}
    finally:
        if not a.keep:
            for p in paths.values():
                for f in (p, os.path.join(a.dir, "ola_bench_updates.bin")):
                    if os.path.exists(f):
                        os.remove(f)
                shutil.rmtree(p + ".momenta", ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")

    def med(kind, what, key, n=None):
        v = [r[key] for r in rows if r["kind"] == kind and r["what"] == what and r.get("n") == n]
        return statistics.median(v) if v else float("nan")

    print(f"\n{a.gib} GiB f8, order {a.order}, {a.rounds} rounds; Ola bin {bin_}; buffer files: hbb "
          f"{sizes['hbb'] / 2**20:.2f} MiB, ola {sizes['ola'] / 2**20:.2f} MiB (its file plus the order-0 tree); "
          f"peak RSS of a whole-array query: hbb {rss['hbb']} KiB, ola {rss['ola']} KiB\n")
    print("| measure | hbb | ola | ola/hbb |")
    print("|---|---|---|---|")
    b_h, b_o = med("hbb", "build", "wall_s"), med("ola", "build", "wall_s")
    print(f"| build (cold), s | {b_h:.2f} | {b_o:.2f} | {b_o / b_h:.2f} |")
    for n in lengths:
        for temp in ("cold", "warm"):
            for key, label, scale in (("wall_s", "process ms", 1e3), ("query_us", "query µs", 1)):
                h, o = med("hbb", f"query {temp}", key, n) * scale, med("ola", f"query {temp}", key, n) * scale
                print(f"| {n:.0e} cells {temp}, {label} | {h:.1f} | {o:.1f} | {o / h:.2f} |")
            h = med("hbb", f"query {temp}", "array_bytes", n) + med("hbb", f"query {temp}", "buffer_bytes", n)
            o = med("ola", f"query {temp}", "array_bytes", n) + med("ola", f"query {temp}", "buffer_bytes", n)
            if temp == "cold":
                print(f"| {n:.0e} cells, KiB read (array + buffer) | {h / 1024:.1f} | {o / 1024:.1f} | "
                      f"{o / max(h, 1):.2f} |")
    u_h, u_o = med("hbb", "update", "rate"), med("ola", "update", "rate")
    print(f"| 10^5 scattered updates, /s | {u_h:.0f} | {u_o:.0f} | {u_o / u_h:.2f} |")


if __name__ == "__main__":
    main()
