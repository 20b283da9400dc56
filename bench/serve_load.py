#!/usr/bin/env python3
"""`momenta serve` under load: what HTTP adds to an overview, and how many single
statistics a second it answers.

1. A sparse 1 TiB array (2^37 f8, a few values written) in 2,000 bins (mean, min, max),
   warm: in-process (momenta.open(...).overview) against one keep-alive HTTP connection
   to `momenta serve` (GET .../overview, the body read whole), interleaved, p50 and p99
   of each.
2. Single `stats` requests (a random 1000-element range's mean, the same URL for ab) from
   32 keep-alive clients: Debian's `ab -k -c 32` (apache2-utils) when installed, else 32
   Python threads each with its own connection (slower: the GIL and the client share the
   server's cores).

  PYTHONPATH=build/python /usr/bin/python3 bench/serve_load.py --cli build/tools/momenta
  (--dir DIR for the array, default a temporary folder; --rounds N; --requests N)

The client runs on the server's machine: on two cores both share them, so the figures
are a floor for a server with cores of its own.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "momenta_bench"))
from common import median, p99  # noqa: E402

import momenta  # noqa: E402


def start_server(cli, path, threads):
    port_file = path + ".port"
    proc = subprocess.Popen([cli, "serve", path, "--listen", "127.0.0.1:0", "--port-file", port_file,
                             "--threads", str(threads)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not os.path.exists(port_file):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("serve_load: momenta serve did not start")
        time.sleep(0.02)
    return proc, int(open(port_file).read())


def overview_rounds(a, port, name, n, rounds):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    target = f"/api/arrays/{name}/overview?range=0:{n}&bins=2000&stat=mean&stat=min&stat=max"
    local, remote = [], []
    for _ in range(3):  # warm both
        a.overview(0, n, bins=2000, stats=("mean", "min", "max"))
        conn.request("GET", target)
        conn.getresponse().read()
    for _ in range(rounds):
        t0 = time.perf_counter()
        a.overview(0, n, bins=2000, stats=("mean", "min", "max"))
        local.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        conn.request("GET", target)
        r = conn.getresponse()
        body = r.read()
        remote.append(time.perf_counter() - t0)
        assert r.status == 200, body[:200]
    conn.close()
    return local, remote, len(body)


def stats_with_ab(port, name, requests):
    url = f"http://127.0.0.1:{port}/api/arrays/{name}/stats?range=123456789:123457789&stat=mean"
    out = subprocess.run(["ab", "-q", "-k", "-c", "32", "-n", str(requests), url], capture_output=True, text=True,
                         check=True).stdout
    rate = float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1))
    failed = int(re.search(r"Failed requests:\s+(\d+)", out).group(1))
    p50 = re.search(r"\n\s+50%\s+(\d+)", out)
    p99_ms = re.search(r"\n\s+99%\s+(\d+)", out)
    return {"tool": "ab -k -c 32", "requests": requests, "per_s": rate, "failed": failed,
            "p50_ms": int(p50.group(1)) if p50 else None, "p99_ms": int(p99_ms.group(1)) if p99_ms else None}


def stats_with_threads(port, name, requests):
    done = []
    target = f"/api/arrays/{name}/stats?range=123456789:123457789&stat=mean"

    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", port)
        for _ in range(requests // 32):
            c.request("GET", target)
            c.getresponse().read()
        done.append(k)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(32)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"tool": "32 Python threads", "requests": requests // 32 * 32,
            "per_s": requests // 32 * 32 / (time.perf_counter() - t0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    work = args.dir or tempfile.mkdtemp(prefix="serve_load-")
    path = os.path.join(work, "tera.npy")
    n = 2 ** 37
    try:
        with momenta.create(path, shape=n) as a:
            for k in range(64):
                a[k * (n // 64): k * (n // 64) + 1000] = [float(k + i % 7) for i in range(1000)]
        proc, port = start_server(args.cli, path, args.threads)
        try:
            with momenta.open(path) as a:
                local, remote, size = overview_rounds(a, port, "tera", n, args.rounds)
            load = stats_with_ab(port, "tera", args.requests) if shutil.which("ab") else \
                stats_with_threads(port, "tera", args.requests)
            rss_kb = int(open(f"/proc/{proc.pid}/status").read().split("VmRSS:")[1].split()[0])
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
        result = {
            "overview_2000_bins_of_1TiB": {
                "in_process_ms": {"p50": median(local) * 1e3, "p99": p99(local) * 1e3},
                "http_keepalive_ms": {"p50": median(remote) * 1e3, "p99": p99(remote) * 1e3},
                "ratio_p50": median(remote) / median(local), "body_bytes": size, "rounds": args.rounds},
            "single_stats_32_clients": load,
            "server_rss_kb": rss_kb,
            "server_exit": proc.returncode,
        }
        print(json.dumps(result, indent=2))
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
