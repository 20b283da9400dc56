"""momenta.Client against a running root: a `momenta root` and two `momenta site` processes
reporting files of items (and staying connected, so the root covers them); the client's answers (at a time every site reached)
are within eps of the exact counts and equal what `momenta ask` prints."""

import json
import os
import subprocess
import time

import numpy as np
import pytest

import momenta


@pytest.fixture
def root(cli):
    proc = subprocess.Popen([cli.path, "root", "--listen", "127.0.0.1:0", "--eps", "0.05", "--window", "1000",
                             "--port-file", "port"], stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(500):
            if os.path.exists("port") and open("port").read().strip():
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the root wrote no port file")
        yield "127.0.0.1:" + open("port").read().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_client_answers_within_eps(cli, root, rng):
    streams = {}
    sites = []
    try:
        ask_sites(cli, root, rng, streams, sites)
    finally:
        for proc in sites:
            proc.terminate()
            proc.wait(timeout=30)


def ask_sites(cli, root, rng, streams, procs):
    for name in ("east", "west"):
        times = np.sort(rng.integers(0, 500, 2000))
        items = np.where(rng.random(2000) < 0.25, 42, rng.integers(0, 300, 2000))
        streams[name] = (times, items)
        with open(f"{name}.txt", "w") as f:
            f.writelines(f"{t} {i}\n" for t, i in zip(times, items))
        procs.append(subprocess.Popen([cli.path, "site", "--root", root, "--id", name, "--input", f"{name}.txt"],
                                      stderr=subprocess.DEVNULL))
    at = 499
    all_items = np.concatenate([i for _, i in streams.values()])
    c = len(all_items)  # every time is inside the window (W = 1000) at clock 499
    with momenta.Client(root, timeout=10) as client:
        # The root waits for the sites it holds live; one that has not connected yet it does
        # not know of. So first wait (30 s at most) until both are live.
        for _ in range(3000):
            # (A site whose file has been read is "finished": the root keeps its state.)
            if sorted(s["name"] for s in client.sites()["per_site"]
                      if s["state"] in ("live", "finished")) == ["east", "west"]:
                break
            time.sleep(0.01)
        count = client.count(at=at, wait=20000)
        assert count["as_of"] == at and sorted(count["sites"]) == ["east", "west"]
        assert abs(count["count"] - c) <= 0.05 * c
        item = client.item(42, at=at)
        assert abs(item["count"] - np.sum(all_items == 42)) <= 0.05 * c
        frequent = client.frequent(0.2, at=at)
        assert [e["item"] for e in frequent["items"]] == [42]
        q = client.quantile(0.5, at=at)
        rank = np.sum(all_items <= q["value"])
        assert abs(rank - 0.5 * c) <= 0.05 * c + np.sum(all_items == q["value"])
        sites = client.sites()
        assert sorted(s["name"] for s in sites["per_site"]) == ["east", "west"]
        assert "total" in client.stats()
        text = client.ask(f"at {at} count")
        assert text == cli("ask", root, "count", "--at", at).stdout.rstrip("\n")
        assert count == json.loads(cli("ask", root, "count", "--at", at, "--json").stdout)
        with pytest.raises(momenta.InvalidArgumentError, match="frequent"):
            client.frequent(2.0)
        with pytest.raises(momenta.InvalidArgumentError):
            client.ask("nonsense")
    with pytest.raises(momenta.InvalidArgumentError, match="closed"):
        client.ask("count")
