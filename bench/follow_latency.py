#!/usr/bin/env python3
"""From an update's acknowledgment to the root's count: how long a logged
update takes to be counted by the distributed monitor.

A root, one `momenta site --log` following an array's update log and one
`momenta update --follow --ack` writer, all started by this driver (the site
and the window follower before the array exists). For each sample the driver
sends one line that sets a fresh element (so it logs exactly one record),
waits for its acknowledgment ("SEQ COUNT" on the writer's stdout), and then
polls the root over one query connection ("count" lines) until the count
includes it; the delay from the acknowledgment to that answer is the
latency. The same is measured for `momenta window --log --follow` (the delay
from the acknowledgment to its first report counting the update). Samples
are spaced by a random pause (seeded), so a sample may land anywhere in the
site's heartbeat.

  /usr/bin/python3 bench/follow_latency.py --cli build/tools/momenta --samples 300 --heartbeat 200ms
"""
import argparse
import json
import os
import random
import select
import socket
import subprocess
import sys
import tempfile
import time

# momenta_bench/common.py beside this script: the p50 and p99 every bench reports.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "momenta_bench"))
from common import median, p99  # noqa: E402


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.005)
    sys.exit(f"follow_latency: timed out waiting for {what}")


class QueryConnection:
    """One connection to the root's query port; an answer ends with an empty line."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def ask(self, line):
        self.sock.sendall(line.encode() + b"\n")
        while b"\n\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                sys.exit("follow_latency: the root closed the query connection")
            self.buf += chunk
        answer, self.buf = self.buf.split(b"\n\n", 1)
        return answer.decode()


def count_of(answer):
    for word in answer.split("\n")[0].split():
        if word.startswith("count="):
            return float(word[6:])
    return None


class LineReader:
    """Whole lines from a child's stdout, without blocking longer than asked."""

    def __init__(self, f):
        self.fd = f.fileno()
        self.buf = b""

    def lines(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if r:
            chunk = os.read(self.fd, 65536)
            self.buf += chunk
        *whole, self.buf = self.buf.split(b"\n")
        return [l.decode() for l in whole]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/tools/momenta")
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--heartbeat", default="200ms", help="the site's --heartbeat")
    ap.add_argument("--seed", type=int, default=20261204)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cli = os.path.abspath(a.cli)
    with tempfile.TemporaryDirectory() as d:
        arr = os.path.join(d, "a.npy")
        port_file = os.path.join(d, "port")
        procs = []
        try:
            root = subprocess.Popen([cli, "root", "--listen", "127.0.0.1:0", "--port-file", port_file,
                                     "--eps", "0.01", "--window", "1h"], stderr=subprocess.DEVNULL)
            procs.append(root)
            port = int(wait_for(lambda: os.path.exists(port_file) and open(port_file).read().strip(), 10, "the root"))
            site = subprocess.Popen([cli, "site", "--root", f"127.0.0.1:{port}", "--id", "s", "--log", arr,
                                     "--heartbeat", a.heartbeat], stderr=subprocess.DEVNULL)
            procs.append(site)
            window = subprocess.Popen([cli, "window", "--log", arr, "--follow", "--window", "1h", "--eps", "0.01",
                                       "--json", "--top", "0", "--quantiles", "0.5"],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            procs.append(window)
            time.sleep(0.3)  # both are waiting for the array now
            subprocess.run([cli, "create", arr, "--length", str(10 * a.samples + 10)], check=True,
                           stdout=subprocess.DEVNULL)
            writer = subprocess.Popen([cli, "update", arr, "--follow", "--ack"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            procs.append(writer)
            acks, reports = LineReader(writer.stdout), LineReader(window.stdout)
            q = QueryConnection(port)
            root_ms, window_ms = [], []
            for n in range(1, a.samples + 1):
                time.sleep(rng.uniform(0.0, 0.25))
                writer.stdin.write(f"{n} {n}\n".encode())
                writer.stdin.flush()
                wait_for(lambda: acks.lines(0.05), 10, f"the acknowledgment of update {n}")
                acked = time.monotonic()
                root_done = window_done = None
                deadline = acked + 10
                while (root_done is None or window_done is None) and time.monotonic() < deadline:
                    if root_done is None:
                        c = count_of(q.ask("count"))
                        if c is not None and c >= n:
                            root_done = time.monotonic()
                    if window_done is None:
                        for l in reports.lines(0.001):
                            if json.loads(l)["count"] >= n:
                                window_done = time.monotonic()
                if root_done is None or window_done is None:
                    sys.exit(f"follow_latency: update {n} not counted within 10 s")
                root_ms.append((root_done - acked) * 1000)
                window_ms.append((window_done - acked) * 1000)
        finally:
            for p in reversed(procs):
                p.terminate()
            for p in procs:
                p.wait()
    print(f"samples={a.samples} heartbeat={a.heartbeat} seed={a.seed}")
    for name, xs in (("root count (site --log)", root_ms), ("window --log --follow", window_ms)):
        print(f"{name}: p50={median(xs):.1f} ms p99={p99(xs):.1f} ms max={max(xs):.1f} ms")


if __name__ == "__main__":
    main()
