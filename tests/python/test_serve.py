"""`momenta serve` as a whole process (started on port 0 with --port-file): its JSON API
against the CLI's --json answers, momenta.remote against momenta.open, the bounds (500
idle or trickling connections, sizes), paths, tokens, gzip and SIGTERM."""

import gzip
import http.client
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

import numpy as np
import pytest

import momenta


class Server:
    def __init__(self, cli, *args):
        self.port_file = os.path.abspath(f"port-{time.monotonic_ns()}")
        self.proc = subprocess.Popen([cli.path, "serve", *map(str, args), "--listen", "127.0.0.1:0",
                                      "--port-file", self.port_file], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited {self.proc.returncode}: {self.proc.stderr.read()}")
            if time.monotonic() > deadline:
                raise AssertionError("serve did not write its port file within 30 s")
            time.sleep(0.01)
        self.port = int(open(self.port_file).read())
        self.url = f"http://127.0.0.1:{self.port}"

    def get(self, target, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", target, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r, body

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stderr.close()


@pytest.fixture
def data(cli, rng):
    x = np.round(rng.normal(size=20000) * 100, 3)
    x[123] = 1e6
    np.save("a.npy", x)
    np.save("b.npy", np.arange(1000, dtype=np.int64))
    cli("build", "a.npy", "--leaf", "64")
    cli("build", "b.npy")
    return x


@pytest.fixture
def server(cli, data):
    s = Server(cli, "a.npy", "b.npy")
    yield s
    s.stop()


def without_times(line):
    d = json.loads(line)
    d.pop("elapsed_us", None)
    return d


def test_arrays_stats_and_overview_are_the_cli_answers(cli, server):
    r, body = server.get("/api/arrays")
    assert r.status == 200
    names = [a["name"] for a in json.loads(body)["arrays"]]
    assert names == ["a", "b"]
    r, body = server.get("/api/arrays/a/stats?range=10:15000&stat=mean&stat=std&stat=min&stat=max&ddof=1")
    assert r.status == 200, body
    mine = json.loads(cli("query", "a.npy", "--range", "10:15000", "--stat", "mean", "--stat", "std", "--stat", "min",
                          "--stat", "max", "--ddof", "1", "--json").stdout)
    assert json.loads(body)["stats"] == mine["stats"]
    assert json.loads(body)["range"] == [10, 15000]
    r, body = server.get("/api/arrays/a/overview?range=0:20000&bins=100&stat=min&stat=max&stat=mean")
    assert r.status == 200
    lines = cli("query", "a.npy", "--range", "0:20000", "--bins", "100", "--stat", "min", "--stat", "max", "--stat",
                "mean", "--json").stdout.splitlines()
    assert body.decode() == '{"name":"a","range":[0,20000],"bins":[' + ",".join(lines) + "]}\n"


def test_ranges_and_progressive_stream(cli, server):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    text = "0:10\n{\"range\":[5,500],\"stat\":\"max\"}\n-3:\n"
    c.request("POST", "/api/arrays/b/ranges?stat=sum", body=text)
    r = c.getresponse()
    assert r.status == 200
    assert r.read().decode() == cli("query", "b.npy", "--ranges", "-", "--stat", "sum", "--json",
                                    input=text).stdout
    c.request("GET", "/api/arrays/a/progressive?range=3:19990&stat=sum")  # the same connection: keep-alive
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Transfer-Encoding") == "chunked"
    lines = [without_times(x) for x in r.read().decode().splitlines()]
    mine = [without_times(x) for x in cli("query", "a.npy", "--range", "3:19990", "--stat", "sum", "--progressive",
                                          "--json").stdout.splitlines()]
    assert lines == mine and lines[-1]["exact"] is True
    c.close()


def test_remote_arrays_answer_as_local_ones(server, data):
    remote = momenta.remote(server.url)
    a = remote["a"]
    assert a.size == 20000 and a.dtype == np.float64 and a.shape == (20000,)
    with momenta.open("a.npy") as local:
        for p, q in [(0, 20000), (10, 12), (123, 9000)]:
            assert a.mean(p, q) == local.mean(p, q)
            assert a.std(p, q, ddof=1) == local.std(p, q, ddof=1)
            assert a.max(p, q) == local.max(p, q)
            assert a.sum(p, q) == local.sum(p, q)
        np.testing.assert_array_equal(a.moments(2, 100, 200), local.moments(2, 100, 200))
        assert a.moment(1, 100, 200, about=150) == local.moment(1, 100, 200, about=150)
        np.testing.assert_array_equal(a.polyfit(2, 0, 20000), local.polyfit(2, 0, 20000))
        assert a.com(10, 900) == local.com(10, 900) and a.rms(10, 900) == local.rms(10, 900)
        with pytest.raises(momenta.InvalidArgumentError, match="axis"):
            a.sum(axis=0)
        starts, stops = np.array([0, 5, 100]), np.array([10, 5000, 20000])
        got = a.stats(starts, stops, ("mean", "count"))
        want = local.stats(starts, stops, ("mean", "count"))
        np.testing.assert_array_equal(got["mean"], want["mean"])
        np.testing.assert_array_equal(got["count"], want["count"])
        got = a.overview(0, 20000, bins=50, stats=("min", "max", "mean"))
        want = local.overview(0, 20000, bins=50, stats=("min", "max", "mean"))
        for k in ("start", "stop", "min", "max", "mean"):
            np.testing.assert_array_equal(got[k], want[k])
    assert remote["b"].sum() == sum(range(1000))
    np.testing.assert_array_equal(remote["b"].values(10, 13), [10, 11, 12])
    with pytest.raises(momenta.OutOfRangeError, match="length 1000"):
        remote["b"].sum(0, 1001)
    with pytest.raises(momenta.InvalidArgumentError, match="empty"):
        remote["b"].mean(5, 5)
    with pytest.raises(momenta.NotFoundError):
        remote["c"]
    remote.close()


def test_paths_and_errors(server):
    for target, status in [("/api/arrays/..%2F..%2Fetc%2Fpasswd", 404),
                           ("/api/arrays/..%2F..%2Fetc%2Fpasswd/stats?stat=sum", 404),
                           ("/../../etc/passwd", 404), ("/api/arrays/a/stats?stat=nope", 400),
                           ("/api/arrays/a/stats?stat=sum&range=%zz", 400),
                           ("/api/arrays/a/values?range=0:2^20", 400)]:
        r, body = server.get(target)
        assert r.status == status, (target, body)
        assert "error" in json.loads(body)
    r, body = server.get("/api/arrays/a/stats?stat=sum&x=" + "y" * 20000)
    assert r.status == 413, body
    r, body = server.get("/")
    assert r.status == 200 and b"<html" in body


def test_removed_file_is_reported(cli, data):
    np.save("c.npy", np.ones(10))
    s = Server(cli, "c.npy")
    try:
        os.remove("c.npy")
        r, body = s.get("/api/arrays/c/stats?stat=sum")
        assert r.status == 404 and "was removed" in json.loads(body)["error"]
        r, body = s.get("/api/arrays")
        assert r.status == 200 and "error" in json.loads(body)["arrays"][0]
    finally:
        s.stop()
    assert s.proc.returncode == 143


def test_gzip_when_asked(server):
    r, body = server.get("/api/arrays/a/overview?bins=500&stat=mean", {"Accept-Encoding": "gzip"})
    assert r.status == 200 and r.getheader("Content-Encoding") == "gzip"
    _, plain = server.get("/api/arrays/a/overview?bins=500&stat=mean")
    assert gzip.decompress(body) == plain


def test_idle_and_trickling_connections_do_not_stop_a_new_client(server):
    idle = []
    for k in range(500):
        s = socket.create_connection(("127.0.0.1", server.port))
        if k % 2:
            s.sendall(b"GET /api/arrays HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # a header never finished
        idle.append(s)
    try:
        for s in idle[1::2][:50]:
            s.sendall(b"a")  # trickling
        worst = 0.0
        for _ in range(5):
            t0 = time.monotonic()
            with urllib.request.urlopen(server.url + "/api/arrays/b/stats?stat=sum", timeout=5) as r:
                assert json.loads(r.read())["stats"]["sum"] == sum(range(1000))
            worst = max(worst, time.monotonic() - t0)
        print(f"500 idle/trickling connections: a new client answered in at most {worst * 1000:.1f} ms")
        assert worst < 0.1
        rss = int(open(f"/proc/{server.proc.pid}/status").read().split("VmRSS:")[1].split()[0])
        print(f"server resident memory with 500 connections open: {rss} kB")
    finally:
        for s in idle:
            s.close()


def test_sigterm_exits_143_within_a_second(cli, data):
    s = Server(cli, "a.npy")
    conn = socket.create_connection(("127.0.0.1", s.port))  # an idle connection does not hold it
    t0 = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    s.proc.wait(5)
    elapsed = time.monotonic() - t0
    conn.close()
    s.stop()
    assert s.proc.returncode == 143
    assert elapsed < 1.0, elapsed


def test_tokens(cli, data):
    r = subprocess.run([cli.path, "serve", "a.npy", "--listen", "0.0.0.0:0"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2 and "--token-file" in r.stderr
    with open("token", "w") as f:
        f.write("s3cret\n")
    s = Server(cli, "a.npy", "--token-file", "token")
    try:
        r, body = s.get("/api/arrays")
        assert r.status == 401 and "error" in json.loads(body)
        r, body = s.get("/api/arrays", {"Authorization": "Bearer s3cret"})
        assert r.status == 200
        assert momenta.remote(s.url, token="s3cret")["a"].size == 20000
    finally:
        s.stop()


def test_writable_update_and_log(cli, data):
    s = Server(cli, "b.npy", "--writable")
    try:
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        c.request("POST", "/api/arrays/b/update", body="0 1000 5\n1 1001 6\n")
        r = c.getresponse()
        assert r.status == 200, r.read()
        assert json.loads(r.read())["applied"] == 2
        r, body = s.get("/api/arrays/b/stats?range=0:2&stat=sum")
        assert json.loads(body)["stats"]["sum"] == 2001
        r, body = s.get("/api/arrays/b/log?since=5")
        assert body.decode() == cli("log", "b.npy", "--since", "5", "--json").stdout
        locker = subprocess.Popen([cli.path, "update", "b.npy", "--follow"], stdin=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        time.sleep(1.0)
        c.request("POST", "/api/arrays/b/update", body="0 7\n")
        r = c.getresponse()
        answer = r.read()
        locker.stdin.close()
        locker.wait(10)
        locker.stderr.close()
        assert r.status == 409, answer
    finally:
        s.stop()
