"""An array whose buffer is the Ola kind (`momenta build PATH --buffer ola`, buffers/ola/OLA.md)
seen from Python: `order` is the Ola buffer's N − 1, index moments and the statistics made
of them come from it within its bound (1e-9 · Σ over the range widened by R = N·b^L of
min(|i − p| + R, q − p)^t |a_i|), var/min/max from the order-0 tree beside it, batches
equal single calls, and writes keep both right."""

import json
import os
import subprocess

import numpy as np
import pytest

import momenta
from conftest import cli_path

LD = np.longdouble


def reference(a, p, q, t):
    i = np.arange(p, q, dtype=LD) - LD(p)
    return (a[p:q].astype(LD) * i ** t).sum()


def bound(a, p, q, t, reach):
    lo, hi = max(0, p - reach), min(len(a), q + reach)
    d = np.abs(np.arange(lo, hi, dtype=LD) - LD(p))
    w = np.minimum(d + reach, LD(q - p))
    return LD(1e-9) * (w ** t * np.abs(a[lo:hi].astype(LD))).sum() + LD(1e-300)


def test_ola_kind_from_python(tmp_path, rng):
    n = 20000
    data = rng.normal(3, 10, n)
    path = str(tmp_path / "a.npy")
    np.save(path, data)
    subprocess.run([cli_path(), "build", path, "--buffer", "ola", "--order", "5", "--bin", "16"], check=True,
                   capture_output=True)
    a = momenta.open(path, "r+")
    assert a.order == 5
    info = json.loads(subprocess.run([cli_path(), "info", path, "--json"], check=True, capture_output=True,
                                     text=True).stdout)["buffer"]["ola"]
    assert info["nodes"] == 6 and info["bin"] == 16
    reach = 6 * 16 ** info["levels"]  # R = N·b^L
    for _ in range(40):
        p, q = sorted(int(x) for x in rng.integers(0, n + 1, 2))
        if q == p:
            continue
        got = a.moments(5, p, q)
        for t in range(6):
            assert abs(LD(got[t]) - reference(data, p, q, t)) <= bound(data, p, q, t, reach), (p, q, t)
        assert abs(a.var(p, q) - data[p:q].astype(LD).var()) <= 1e-9 * data[p:q].var() + 1e-300
        assert a.min(p, q) == data[p:q].min() and a.max(p, q) == data[p:q].max()
    approx = a.sum(3, n - 5, approx=True)  # from the order-0 tree beside the Ola buffer
    exact_sum = data[3:n - 5].astype(LD).sum()
    assert approx.lower <= exact_sum <= approx.upper
    starts = rng.integers(0, n // 2, 50)
    stops = starts + rng.integers(1, n // 2, 50)
    batch = a.stats(starts, stops, ["sum", "com"])
    for k in range(50):
        assert batch["sum"][k] == a.sum(int(starts[k]), int(stops[k]))
        assert batch["com"][k] == a.com(int(starts[k]), int(stops[k]))
    idx = rng.integers(0, n, 300)
    vals = rng.normal(0, 100, 300)
    a.update(idx, vals)
    data[idx] = vals  # a later update of an index wins, as in NumPy's fancy assignment
    for p, q in [(0, n), (5, 17), (n - 100, n)]:
        got = a.moments(3, p, q)
        for t in range(4):
            assert abs(LD(got[t]) - reference(data, p, q, t)) <= 10 * bound(data, p, q, t, reach), (p, q, t)


def test_create_and_rebuild_an_ola_array_from_python(tmp_path, rng):
    """momenta.create(..., buffer="ola", order=J, bin=B) as `momenta create --buffer ola --order J
    --bin B`: its order is J, `info` names the kind, its answers are within the Ola bound; rebuild
    moves it between kinds; what the Ola buffer cannot be is refused before anything is made."""
    n = 30000
    path = str(tmp_path / "a.npy")
    a = momenta.create(path, n, "f8", order=3, buffer="ola", bin=16)
    assert a.order == 3
    data = rng.normal(-2, 5, n)
    a[0:n] = data
    a.close()
    info = json.loads(subprocess.run([cli_path(), "info", path, "--json"], check=True, capture_output=True,
                                     text=True).stdout)["buffer"]
    assert info["kind"] == "ola" and info["ola"]["nodes"] == 4 and info["ola"]["bin"] == 16
    a = momenta.open(path, "r+")
    reach = 4 * 16 ** info["ola"]["levels"]
    for _ in range(30):
        p, q = sorted(int(x) for x in rng.integers(0, n + 1, 2))
        if q == p:
            continue
        got = a.moments(3, p, q)
        for t in range(4):
            assert abs(LD(got[t]) - reference(data, p, q, t)) <= 10 * bound(data, p, q, t, reach), (p, q, t)
    starts = rng.integers(0, n // 2, 300)  # more than one batch chunk of the Ola buffer alone
    stops = starts + rng.integers(0, n // 2, 300)
    batch = a.stats(starts, stops, ["sum", "moment"], order=2)
    for k in range(300):
        assert batch["sum"][k] == a.sum(int(starts[k]), int(stops[k]))
        assert batch["moment"][k] == a.moment(2, int(starts[k]), int(stops[k]))
    a.rebuild(order=5, buffer="ola", bin=8)
    assert a.order == 5
    for t, m in enumerate(a.moments(5, 100, 20000)):
        assert abs(LD(m) - reference(data, 100, 20000, t)) <= 10 * bound(data, 100, 20000, t, n)
    a.rebuild(order=2)  # back to the default buffer
    assert a.order == 2
    assert abs(LD(a.sum(7, 29000)) - data[7:29000].astype(LD).sum()) <= 1e-9 * np.abs(data[7:29000]).sum()
    a.close()
    for kwargs in ({"buffer": "ola", "order": 8}, {"buffer": "hbb", "bin": 16}, {"buffer": "tree"},
                   {"buffer": "ola", "bin": 1}):
        other = str(tmp_path / "b.npy")
        with pytest.raises(momenta.InvalidArgumentError):
            momenta.create(other, 100, **kwargs)
        assert not os.path.exists(other)
