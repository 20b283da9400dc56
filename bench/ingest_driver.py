#!/usr/bin/python3
"""The ingest benchmark, through the CLI as a whole process.

  /usr/bin/python3 bench/ingest_driver.py --cli build/tools/momenta --dir DIR [--gib 8] [--rounds 3]
      [--syncs always,batch,none]   (the update processes' sync policies; default batch)

Makes (or reuses, with --keep) a dense f8 array of --gib GiB in DIR with its
buffer, then runs --rounds rounds, each interleaving momenta with its
reference from the device:

  fio 4 KiB random reads at depth 32 on the array itself (read-only), then
  scattered: 10^6 uniformly random updates, the array and its sidecar cold
      (page cache dropped), one `momenta update --binary` process;
  hot: 4x10^6 updates at random elements of a 64 MiB hot set (16 windows of
      4 MiB), the hot set already resident and written once;
  sequential: 10^6 updates to consecutive elements from a random start, cold;
  fio fdatasync per 4 KiB write (sequential, like a log), then the --follow
  writer: ack latency of lone lines (one line, wait for its ack, next line)
  with --max-delay 0 per sync policy, and the ingest rate of 10^6 lines
  streamed with the default max-delay per sync policy.

For each CLI run: wall time of the whole process (open, parse, apply, close
and its checkpoint: the array synced, so write-back is inside), device bytes
the process caused to be read and dirtied (its rusage: task I/O accounting),
the device's bytes read and written in the meantime (/sys/dev/block/M:m/stat:
everything on the device, other processes included), and the distinct 4 KiB
pages the updates touch. Prints a Markdown table of medians and a JSON
line per measurement (--json FILE). Cleans up unless --keep.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

# momenta_bench/common.py beside this script (the source tree and an install alike).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "momenta_bench"))
from common import spawn  # noqa: E402

PAGE = 4096


def device_stat_path(path):
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    p = f"/sys/dev/block/{major}:{minor}/stat"
    if not os.path.exists(p):
        sys.exit(f"ingest_driver: no {p} for {path} (not a block device's file system?)")
    return p


def device_bytes(stat_path):
    """(bytes read, bytes written) by the device since boot."""
    f = open(stat_path).read().split()
    return int(f[2]) * 512, int(f[6]) * 512


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("1\n")


def run_fio(args):
    out = subprocess.run(["fio", "--output-format=json"] + args, check=True, capture_output=True, text=True).stdout
    job = json.loads(out)["jobs"][0]
    return job


def fio_randread_iops(path, size, runtime):
    job = run_fio([f"--name=rr", f"--filename={path}", f"--size={size}", "--readonly", "--rw=randread", "--bs=4k",
                   "--iodepth=32", "--ioengine=io_uring", "--direct=1", f"--runtime={runtime}", "--time_based"])
    return job["read"]["iops"]


def fio_fdatasync_rate(path, runtime):
    job = run_fio([f"--name=fs", f"--filename={path}", "--size=256M", "--rw=write", "--bs=4k", "--ioengine=psync",
                   "--fdatasync=1", f"--runtime={runtime}", "--time_based"])
    return job["write"]["iops"]


class Workloads:
    def __init__(self, length, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.length = length
        # Values from fresh entropy: an update that stores the value already
        # there changes nothing and costs nothing, so a rerun with the same
        # seed must not find its values in place.
        self.values = np.random.default_rng()

    def records(self, indices):
        rec = np.zeros(len(indices), dtype=[("i", "<u8"), ("v", "<f8")])
        rec["i"] = indices
        rec["v"] = self.values.standard_normal(len(indices))
        return rec

    def scattered(self, n):
        return self.rng.integers(0, self.length, n, dtype=np.uint64)

    def hot(self, n, hot_windows):
        w = self.rng.integers(0, len(hot_windows), n)
        return hot_windows[w] + self.rng.integers(0, (4 << 20) // 8, n, dtype=np.uint64)

    def sequential(self, n):
        start = int(self.rng.integers(0, self.length - n))
        return np.arange(start, start + n, dtype=np.uint64)


def run_counted(argv):
    """Runs argv; (exit code, stdout, stderr, wall s, rusage). The rusage's
    ru_inblock / ru_oublock are the 512-byte blocks the process caused the
    device to read and, as pages it dirtied, to write (task I/O accounting:
    a page written back, dirtied again and written again counts twice)."""
    return spawn(argv, text=True)


def cli_update(cli, array, records_path, stat_path, extra=()):
    r0, w0 = device_bytes(stat_path)
    code, out, err, wall, usage = run_counted(
        [cli, "update", array, "--binary", "--input", records_path, "--json", *extra])
    r1, w1 = device_bytes(stat_path)
    if code != 0:
        sys.exit(f"ingest_driver: momenta update failed ({code}): {err.strip()}")
    inside = json.loads(out.strip().splitlines()[-1])["elapsed_us"] / 1e6
    return {"wall_s": wall, "apply_close_s": inside, "device_read_bytes": r1 - r0, "device_written_bytes": w1 - w0,
            "read_bytes": usage.ru_inblock * 512, "written_bytes": usage.ru_oublock * 512,
            "cpu_s": usage.ru_utime + usage.ru_stime}


def follow_latency(cli, array, sync, n, max_delay="0"):
    """Ack latency of lone lines: write one, wait for its ack, then the next."""
    p = subprocess.Popen([cli, "update", array, "--follow", "--ack", "--sync", sync, "--max-delay", max_delay],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    lat = []
    rng = np.random.default_rng()
    for k in range(n):
        line = f"{int(rng.integers(0, 1 << 20))} {rng.standard_normal()}\n".encode()
        t0 = time.perf_counter()
        p.stdin.write(line)
        ack = p.stdout.readline()
        lat.append(time.perf_counter() - t0)
        if not ack:
            sys.exit(f"ingest_driver: --follow writer ended: {p.stderr.read().decode().strip()}")
    p.stdin.close()
    if p.wait() != 0:
        sys.exit(f"ingest_driver: --follow writer failed: {p.stderr.read().decode().strip()}")
    lat.sort()
    return {"p50_ms": 1e3 * lat[len(lat) // 2], "p99_ms": 1e3 * lat[int(len(lat) * 0.99)]}


def follow_rate(cli, array, sync, text_path, n):
    """10^6 lines streamed through a pipe; the time until the last ack."""
    t0 = time.perf_counter()
    with open(text_path, "rb") as src:
        p = subprocess.Popen([cli, "update", array, "--follow", "--ack", "--sync", sync],
                             stdin=src, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = p.communicate()
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"ingest_driver: --follow writer failed: {err.decode().strip()}")
    acks = out.decode().split("\n")
    acked = sum(int(a.split()[1]) for a in acks if a)
    if acked != n:
        sys.exit(f"ingest_driver: {acked} of {n} lines acknowledged")
    return {"wall_s": wall, "groups": len([a for a in acks if a]), "rate": n / wall}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--gib", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--updates", type=int, default=1_000_000)
    ap.add_argument("--fio-runtime", type=int, default=8)
    ap.add_argument("--latency-lines", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--skip-follow", action="store_true")
    ap.add_argument("--syncs", default="batch",
                    help="sync policies of the update processes, comma-separated (default: batch)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("ingest_driver: needs root (it drops the page cache for cold runs)")
    if shutil.which("fio") is None:
        sys.exit("ingest_driver: fio not found (apt-get install fio)")
    cli = os.path.abspath(a.cli)
    os.makedirs(a.dir, exist_ok=True)
    array = os.path.join(a.dir, "momenta_ingest.npy")
    length = a.gib << 27  # f8 elements
    size = length * 8
    need = (0 if os.path.exists(array) else size) + (1 << 30)
    free = shutil.disk_usage(a.dir).free
    if free < need:
        sys.exit(f"ingest_driver: {a.dir} has {free >> 20} MiB free; the array needs {need >> 20} MiB")
    print(f"ingest_driver: seed {a.seed}; kernel {os.uname().release}; {os.cpu_count()} cores; "
          f"load {open('/proc/loadavg').read().split()[:3]}", flush=True)
    made = []
    try:
        if not os.path.exists(array):
            print(f"ingest_driver: writing a dense {a.gib} GiB f8 array and its buffer", flush=True)
            made.append(array)
            m = np.lib.format.open_memmap(array, mode="w+", dtype="<f8", shape=(length,))
            rng = np.random.default_rng(a.seed)
            for i in range(0, length, 1 << 24):
                m[i:i + (1 << 24)] = rng.standard_normal(min(1 << 24, length - i))
            m.flush()
            del m
            subprocess.run([cli, "build", array], check=True, capture_output=True)
        stat_path = device_stat_path(array)
        with open(array, "rb") as f:
            np.lib.format.read_magic(f)
            np.lib.format.read_array_header_1_0(f)
            data_offset = f.tell()
        wl = Workloads(length, a.seed)
        hot_windows = (wl.rng.choice(length // (1 << 19), 16, replace=False) * (1 << 19)).astype(np.uint64)
        rec_path = os.path.join(a.dir, "momenta_ingest_updates.bin")
        made.append(rec_path)
        rows = []

        syncs = a.syncs.split(",")

        def measure(kind, indices, cold, round_no):
            pages = len(np.unique((data_offset + indices * 8) // PAGE))
            for sync in syncs:
                # Fresh values per run: the values already in place would cost nothing.
                wl.records(indices).tofile(rec_path)
                if cold:
                    drop_caches()
                r = cli_update(cli, array, rec_path, stat_path, ("--sync", sync))
                r.update(kind=kind, sync=sync, round=round_no, updates=len(indices), pages=pages,
                         rate=len(indices) / r["wall_s"])
                rows.append(r)
                print(json.dumps(r), flush=True)

        fio = []
        for round_no in range(a.rounds):
            drop_caches()
            fio.append(fio_randread_iops(array, size, a.fio_runtime))
            print(json.dumps({"kind": "fio randread 4k qd32", "round": round_no, "iops": fio[-1]}), flush=True)
            # The hot set made resident and written once (untimed), then timed.
            wl.records(wl.hot(1 << 20, hot_windows)).tofile(rec_path)
            cli_update(cli, array, rec_path, stat_path)
            measure("hot", wl.hot(4 * a.updates, hot_windows), False, round_no)
            measure("scattered", wl.scattered(a.updates), True, round_no)
            measure("sequential", wl.sequential(a.updates), True, round_no)
        follow = []
        if not a.skip_follow:
            fsync_file = os.path.join(a.dir, "momenta_ingest_fsync.dat")
            made.append(fsync_file)
            text_path = os.path.join(a.dir, "momenta_ingest_lines.txt")
            made.append(text_path)
            idx = wl.scattered(a.updates) % (1 << 20)  # a 8 MiB region: the log is what is measured

            def write_lines():  # values not already in place (fresh per run)
                nonce = int(wl.values.integers(1, 1 << 20)) * a.updates
                with open(text_path, "w") as f:
                    f.writelines(f"{i} {nonce + k}\n" for k, i in enumerate(idx))
            for round_no in range(a.rounds):
                fs = fio_fdatasync_rate(fsync_file, a.fio_runtime)
                follow.append({"kind": "fio fdatasync per 4k write", "round": round_no, "iops": fs})
                print(json.dumps(follow[-1]), flush=True)
                for sync in ("always", "batch", "none"):
                    r = follow_latency(cli, array, sync, a.latency_lines)
                    r.update(kind="ack latency", sync=sync, round=round_no)
                    follow.append(r)
                    print(json.dumps(r), flush=True)
                    write_lines()
                    r = follow_rate(cli, array, sync, text_path, a.updates)
                    r.update(kind="follow rate", sync=sync, round=round_no)
                    follow.append(r)
                    print(json.dumps(r), flush=True)
        med = statistics.median
        fio_med = med(fio)
        print()
        print(f"fio 4 KiB random reads at depth 32 on the array: median {fio_med:,.0f} IOPS "
              f"(rounds: {', '.join(f'{x:,.0f}' for x in fio)})")
        print()
        print("| workload | sync | updates | distinct pages | updates/s (whole process) | x fio randread | "
              "read / update | read / (4 KiB x pages) | written / update | device read, written / update |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for kind, sync in ((k, s) for k in ("scattered", "hot", "sequential") for s in syncs):
            rs = [r for r in rows if r["kind"] == kind and r["sync"] == sync]
            rate = med(r["rate"] for r in rs)
            rd = med(r["read_bytes"] / r["updates"] for r in rs)
            ratio = med(r["read_bytes"] / (PAGE * r["pages"]) for r in rs)
            wr = med(r["written_bytes"] / r["updates"] for r in rs)
            drd = med(r["device_read_bytes"] / r["updates"] for r in rs)
            dwr = med(r["device_written_bytes"] / r["updates"] for r in rs)
            print(f"| {kind} | {sync} | {rs[0]['updates']:,} | {med(r['pages'] for r in rs):,.0f} | {rate:,.0f} | "
                  f"{rate / fio_med:.2f} | {rd:,.0f} B | {ratio:.2f} | {wr:,.0f} B | {drd:,.0f} B, {dwr:,.0f} B |")
        if follow:
            fs = [r["iops"] for r in follow if r["kind"].startswith("fio")]
            print()
            print(f"fio fdatasync per 4 KiB sequential write: median {med(fs):,.0f} writes/s")
            print()
            print("| sync | ack latency p50, lone lines, --max-delay 0 | p99 | x 1/fio fdatasync | "
                  "streamed ingest (10^6 lines, default --max-delay) |")
            print("|---|---:|---:|---:|---:|")
            for sync in ("always", "batch", "none"):
                lat = [r for r in follow if r["kind"] == "ack latency" and r["sync"] == sync]
                rate = [r for r in follow if r["kind"] == "follow rate" and r["sync"] == sync]
                p50 = med(r["p50_ms"] for r in lat)
                print(f"| {sync} | {p50:.3f} ms | {med(r['p99_ms'] for r in lat):.3f} ms | "
                      f"{p50 / (1e3 / med(fs)):.2f} | {med(r['rate'] for r in rate):,.0f} lines/s |")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"fio_randread_iops": fio, "rows": rows, "follow": follow}, f)
    finally:
        for p in made[1:] if a.keep else made:
            if os.path.exists(p):
                os.remove(p)
        if not a.keep:
            shutil.rmtree(array + ".momenta", ignore_errors=True)


if __name__ == "__main__":
    main()
