"""momenta.dask on a LocalCluster of three worker processes, each with its shards in a folder
of its own: answers over ranges crossing shard boundaries against NumPy long-double scans,
updates then queries, a worker killed mid-query with and without a replica, a manifest
naming a missing shard, and the CLI's manifest read by ShardedArray; workers named with
integers (LocalCluster's) or missing, and docs/dask.md's one-machine cluster of named workers.
Every wait has a short timeout (WAIT): a regression fails, it does not hang."""

import functools
import json
import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest

import momenta

distributed = pytest.importorskip("distributed")
import momenta.dask as md  # noqa: E402
import momenta._shard_runner  # noqa: E402

warnings.simplefilter("ignore", momenta.Notice)
LD = np.longdouble
WAIT = 60  # seconds: every wait of this suite is short, so a regression fails instead of hanging


def shard_create(*args, timeout=WAIT, **kwargs):
    return md.shard_create(*args, timeout=timeout, **kwargs)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=3, processes=True, threads_per_worker=2, dashboard_address=None,
                                       silence_logs=50)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def seed():
    s = int(os.environ.get("MOMENTA_SEED") or np.random.SeedSequence().entropy % (1 << 32))
    print(f"MOMENTA_SEED={s}")
    return s


def workers(client):
    """The three workers' addresses (a killed one restarted by its nanny has a new one)."""
    deadline = time.monotonic() + 60
    while len(client.scheduler_info()["workers"]) != 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    client.wait_for_workers(3, timeout=60)
    return sorted(client.scheduler_info()["workers"])


def placement(client, root):
    return [(w, str(root / f"worker{k}")) for k, w in enumerate(workers(client))]


def ld_moment(x, p, k, c):
    i = np.arange(p, p + x.size, dtype=LD)
    return np.sum((i - LD(c)) ** k * x.astype(LD))


def close(got, want, scale, what):
    assert abs(LD(got) - want) <= LD(1e-10) * (scale + 1e-300), f"{what}: {got} vs {want}"


def test_answers_across_shard_boundaries_equal_long_double_scans(client, seed, tmp_path):
    rng = np.random.default_rng(seed)
    n, shard = 50_000, 7_000
    data = rng.normal(1e3, 5, n)
    np.save(tmp_path / "src.npy", data)
    m = shard_create(tmp_path / "src.npy", tmp_path / "a.json", shard, placement(client, tmp_path), client)
    a = md.ShardedArray(m, client)
    assert len(a.shards) == 8 and a.shape == (n,) and a.dtype == np.float64
    folders = {os.path.dirname(s.copies[0].path) for s in a.shards}
    assert len(folders) == 3  # one folder per worker
    one = momenta.open(tmp_path / "src.npy")  # the single-array answers
    x = data.astype(LD)
    bounds = [s.start for s in a.shards]
    for trial in range(12):
        b = int(rng.choice(bounds[1:])) + int(rng.integers(-3000, 3000))  # near a boundary
        b = min(max(b, 1), n - 1)  # inside the array (the last shard's start + 3000 may be past its end)
        p, q = sorted((b - int(rng.integers(1, 20000)), b + int(rng.integers(1, 20000))))
        p, q = max(p, 0), min(q, n)
        seg = x[p:q]
        what = f"{p}:{q} (seed {seed})"
        mean = seg.mean()
        close(a.sum(p, q), seg.sum(), np.abs(seg).sum(), what)
        close(a.mean(p, q), mean, abs(mean), what)
        close(a.var(p, q, ddof=1), np.sum((seg - mean) ** 2) / (seg.size - 1), np.sum((seg - mean) ** 2), what)
        assert a.min(p, q) == data[p:q].min() and a.max(p, q) == data[p:q].max(), what
        assert a.count(p, q) == q - p
        c = float(rng.integers(0, n))
        close(a.moment(2, p, q, about=c), ld_moment(seg, p, 2, c),
              np.sum((np.arange(p, q, dtype=LD) - LD(c)) ** 2 * np.abs(seg)), what)
        close(a.com(p, q), ld_moment(seg, p, 1, 0) / seg.sum(), q, what)
        for name, args in (("std", (p, q)), ("spread", (p, q)), ("polyfit", (2, p, q)), ("moments", (None, p, q))):
            got, want = getattr(a, name)(*args), getattr(one, name)(*args)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=f"{name} {what}")
    # A batch: 2,000 ranges, one task per shard touched.
    starts = rng.integers(0, n, 2000)
    stops = np.minimum(starts + rng.integers(1, 15000, 2000), n)
    tasks = []
    run = a._runner.run
    a._runner.run = lambda calls, timeout: tasks.append(len(calls)) or run(calls, timeout)
    got = a.stats(starts, stops, ["sum", "count", "max"])
    a._runner.run = run
    assert tasks == [8]  # one per shard touched, not one per range
    want = one.stats(starts, stops, ["sum", "count", "max"])
    np.testing.assert_allclose(got["sum"], want["sum"], rtol=1e-12)
    assert np.array_equal(got["count"], stops - starts) and np.array_equal(got["max"], want["max"])
    empty = a.stats([5, 7000], [5, 7000], ["sum", "count"])
    assert empty["sum"].tolist() == [0, 0] and empty["count"].tolist() == [0, 0]
    ov, ov1 = a.overview(0, n, 10, ["mean", "min"]), one.overview(0, n, 10, ["mean", "min"])
    np.testing.assert_allclose(ov["mean"], ov1["mean"], rtol=1e-12)
    assert np.array_equal(ov["min"], ov1["min"])
    snapped = a.overview(0, n, 10, ["sum"], snap=True)
    assert np.all(np.isin(snapped["start"], np.r_[bounds, np.arange(0, n, 1)]))
    np.testing.assert_allclose(snapped["sum"], [x[b:e].sum() for b, e in zip(snapped["start"], snapped["stop"])],
                               rtol=1e-12)
    # A shard wholly inside a range is asked for its whole [0, size): the buffer's top answers
    # it and reads no element (test_summaries: test_whole_array_summary_reads_no_element).
    sent = []
    a._runner.run = lambda calls, timeout: sent.extend(calls) or run(calls, timeout)
    a.sum(shard + 5, 4 * shard - 5)  # shards 1, 2, 3
    a._runner.run = run
    assert [c[2][:2] for c in sent] == [(5, shard), (0, shard), (0, shard - 5)]
    s = a.summary()
    assert (s.start, s.stop) == (0, n)
    close(momenta.summary_stat(s, "sum"), x.sum(), np.abs(x).sum(), "whole")
    chunks = a.to_dask_array()
    assert chunks.numblocks == (8,)
    close(float(chunks.sum().compute()), x.sum(), np.abs(x).sum(), "dask array")
    with pytest.raises(IndexError, match="outside the array|not a range"):
        a.sum(0, n + 1)
    with pytest.raises(ValueError, match="empty"):
        a.mean(5, 5)
    assert a.sum(5, 5) == 0


def test_integer_shards_sum_exactly_and_take_nan_free_updates(client, seed, tmp_path):
    rng = np.random.default_rng(seed + 1)
    n = 20_000
    data = rng.integers(2**62, 2**63 - 1, n, dtype=np.int64)
    m = shard_create(data, tmp_path / "i.json", 6_000, placement(client, tmp_path), client)
    a = md.ShardedArray(m, client)
    for _ in range(10):
        p, q = sorted(rng.integers(0, n + 1, 2).tolist())
        assert a.sum(p, q) == sum(int(v) for v in data[p:q])
    # NumPy's functions give NumPy's answers: its int64 sum wraps (the method's is exact).
    assert np.sum(a) == np.sum(data) and type(np.sum(a)) is np.int64 and a.sum() != np.sum(data)
    assert np.mean(a) == pytest.approx(np.mean(data), rel=1e-15)
    with pytest.raises(ValueError, match=r"np.max of a ShardedArray: an int64 max beyond 2\^53"):
        np.max(a)  # the buffer's float64 cannot say which int64 it is, and the elements are on the workers
    with pytest.raises(ValueError, match="does not fit dtype i8"):
        a.update([3], [1.5])
    with pytest.raises(ValueError, match="does not fit dtype i8"):
        a.update([3, 4], [1, 2**63])


def test_sumsq_and_rms_equal_the_single_arrays(client, seed, tmp_path):
    rng = np.random.default_rng(seed + 5)
    n, shard = 20_000, 3_000
    for dtype in ("i2", "f8"):
        data = rng.integers(-32768, 32767, n, endpoint=True).astype(dtype)
        if dtype == "f8":
            data[[17, 9000]] = [np.nan, np.inf]
        np.save(tmp_path / f"src_{dtype}.npy", data)
        m = md.shard_create(tmp_path / f"src_{dtype}.npy", tmp_path / f"{dtype}.json", shard,
                            placement(client, tmp_path), client)
        a, one = md.ShardedArray(m, client), momenta.open(tmp_path / f"src_{dtype}.npy")
        x = data.astype(LD) ** 2
        for _ in range(8):
            p, q = sorted(rng.integers(0, n, 2).tolist())
            q += 1
            for skipna in (False, True):
                what = f"{dtype} {p}:{q} skipna={skipna} (seed {seed})"
                got, want = a.sumsq(p, q, skipna=skipna), one.sumsq(p, q, skipna=skipna)
                np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=what)
                np.testing.assert_allclose(a.rms(p, q, skipna=skipna), one.rms(p, q, skipna=skipna), rtol=1e-12,
                                           err_msg=what)
                seg = x[p:q][~np.isnan(x[p:q])] if skipna else x[p:q]
                if np.all(np.isfinite(seg)):
                    close(got, np.sum(seg), np.sum(seg), what)
        starts = rng.integers(0, n, 200)
        stops = np.minimum(starts + rng.integers(1, 9000, 200), n)
        got, want = a.stats(starts, stops, ["rms", "sumsq"]), one.stats(starts, stops, ["rms", "sumsq"])
        for name in ("rms", "sumsq"):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-12)
        ov, ov1 = a.overview(100, n, bin_size=1024, stats="rms"), one.overview(100, n, bin_size=1024, stats="rms")
        assert ov["start"].tolist() == ov1["start"].tolist() and ov["stop"][-1] == n
        np.testing.assert_allclose(ov["rms"], ov1["rms"], rtol=1e-12)
        a.close()
        one.close()


def test_updates_then_queries(client, seed, tmp_path):
    rng = np.random.default_rng(seed + 2)
    n = 30_000
    m = shard_create(((n,), "f8"), tmp_path / "e.json", 4_000, placement(client, tmp_path), client)
    a = md.ShardedArray(m, client)
    assert a.sum() == 0 and a.max() == 0
    mirror = np.zeros(n)
    for step in range(5):
        idx = rng.integers(0, n, 500)
        vals = rng.normal(size=500)
        a.update(idx, vals)
        for i, v in zip(idx, vals):  # a later update of an index wins
            mirror[i] = v
        p, q = sorted(rng.integers(0, n + 1, 2).tolist())
        seg = mirror[p:q].astype(LD)
        close(a.sum(p, q), seg.sum(), np.abs(seg).sum(), f"step {step} {p}:{q}")
        assert a.max() == mirror.max()
    a.write(3998, [np.nan, np.inf, 5.0])  # across a shard boundary
    mirror[3998:4001] = [np.nan, np.inf, 5.0]
    assert np.isnan(a.sum()) and a.sum(3999, 4001) == np.inf
    assert a.count(skipna=True) == n - 1
    close(a.sum(0, 3998) + 5.0, mirror[:3998].astype(LD).sum() + 5, np.abs(mirror[:3998]).sum(), "after write")
    a.close()


def test_as_of_is_one_cut_of_log_time_on_every_shard(client, seed, tmp_path):
    rng = np.random.default_rng(seed + 3)
    n = 12_000
    m = shard_create(((n,), "f8"), tmp_path / "t.json", 5_000, placement(client, tmp_path), client)
    a = md.ShardedArray(m, client)
    states = {}
    mirror = np.zeros(n)
    for t in (1000, 2000, 3000):
        idx = rng.integers(0, n, 300)
        vals = rng.normal(size=300)
        a.update(idx, vals, times=t)
        for i, v in zip(idx, vals):
            mirror[i] = v
        states[t] = mirror.copy()
    for t, state in [(999, np.zeros(n)), *states.items(), (10**6, mirror)]:
        for p, q in [(0, n), (4_321, 10_123), (5_000, 5_001)]:
            seg = state[p:q].astype(LD)
            close(a.sum(p, q, as_of=t), seg.sum(), np.abs(seg).sum(), f"as_of {t} {p}:{q}")
            assert a.max(p, q, as_of=t) == state[p:q].max()
        got = a.stats([0, 100], [n, 9_000], ["sum"], as_of=t)["sum"]
        np.testing.assert_allclose(got, [state.sum(), state[100:9000].sum()], rtol=1e-9, atol=1e-9)


def test_missing_shard_is_named(client, tmp_path):
    m = shard_create(np.arange(1000.0), tmp_path / "m.json", 300, placement(client, tmp_path), client)
    doc = json.loads(open(m).read())
    gone = doc["shards"][2]["path"]
    os.unlink(gone)
    with pytest.raises(md.ShardError, match=r"shard #2 \(600:900\) on tcp://.*" + gone.replace(".", r"\.")):
        md.ShardedArray(m, client)
    doc["shards"][1]["stop"] = 550
    with open(tmp_path / "bad.json", "w") as f:
        json.dump(doc, f)
    with pytest.raises(ValueError, match=r"bad\.json: shard #2: starts at 600, where the shards before it stop \(550\)"):
        md.ShardedArray(str(tmp_path / "bad.json"), client)
    with pytest.raises(FileNotFoundError, match="no such manifest"):
        md.ShardedArray(str(tmp_path / "none.json"), client)
    # shard_create never writes over a shard, and names it.
    os.unlink(m)
    with pytest.raises(md.ShardError, match=r"shard #\d \(\d+:\d+\) on tcp://[^ ]*: [^ ]*/m\.shard0000\d\.npy: exists"):
        shard_create(np.arange(1000.0), tmp_path / "m.json", 300, placement(client, tmp_path), client)
    assert not os.path.exists(m) and not os.path.exists(gone)  # nothing was made
    with pytest.raises(ValueError, match="here: the folder is relative; give its absolute path on that worker"):
        shard_create(np.arange(10.0), tmp_path / "x.json", 5, [(workers(client)[0], "here")], client)


def _kill_during(client, worker, after):
    """Kills `worker`'s process `after` seconds from now (a thread), as a crash would."""
    pid = client.run(os.getpid, workers=[worker])[worker]

    def kill():
        time.sleep(after)
        os.kill(pid, signal.SIGKILL)
    t = threading.Thread(target=kill)
    t.start()
    return t


def _slow(client, worker, seconds):
    client.run(md._tasks.set_delay, seconds, workers=[worker])


def test_worker_killed_mid_query_fails_over_to_its_replica(client, tmp_path):
    data = np.arange(9_000.0)
    m = shard_create(data, tmp_path / "r.json", 3_000, placement(client, tmp_path), client, replicas=1)
    a = md.ShardedArray(m, client, timeout=60)
    victim = a.shards[1].copies[0].worker
    assert a.shards[1].copies[1].worker != victim
    _slow(client, victim, 30)
    killer = _kill_during(client, victim, 1.0)
    t0 = time.monotonic()
    assert a.sum() == data.sum()  # shard 1 answered by its replica
    took = time.monotonic() - t0
    killer.join()
    assert took < 20, took


def test_worker_killed_mid_query_without_replica_is_a_shard_error(client, tmp_path):
    m = shard_create(np.arange(9_000.0), tmp_path / "k.json", 3_000, placement(client, tmp_path), client)
    a = md.ShardedArray(m, client, timeout=60)
    victim = a.shards[0].copies[0].worker
    _slow(client, victim, 30)
    killer = _kill_during(client, victim, 1.0)
    t0 = time.monotonic()
    with pytest.raises(md.ShardError, match=r"shard #0 \(0:3000\): worker " + victim + " died"):
        a.sum()
    assert time.monotonic() - t0 < 20
    killer.join()


def test_a_silent_worker_is_a_shard_error_within_the_timeout(client, tmp_path):
    m = shard_create(np.arange(100.0), tmp_path / "s.json", 50, placement(client, tmp_path), client)
    a = md.ShardedArray(m, client)
    slow = a.shards[1].copies[0].worker
    _slow(client, slow, 3)
    t0 = time.monotonic()
    with pytest.raises(md.ShardError, match=r"shard #1 \(50:100\) on .*no answer within 1 s"):
        a.sum(timeout=1)
    assert time.monotonic() - t0 < 2.5
    _slow(client, slow, 0)


def test_the_cli_manifest_is_read(client, cli, tmp_path):
    data = np.random.default_rng(7).normal(size=10_000)
    np.save(tmp_path / "src.npy", data)
    ws = workers(client)
    args = ["shard", "create", tmp_path / "src.npy", "--manifest", tmp_path / "c.json", "--shard-length", "3000"]
    for k, w in enumerate(ws):
        args += ["--placement", f"{w}={tmp_path / f'cli{k}'}"]
    cli(*args)
    a = md.ShardedArray(str(tmp_path / "c.json"), client)
    assert len(a.shards) == 4 and [s.copies[0].worker for s in a.shards] == [ws[0], ws[1], ws[2], ws[0]]
    close(a.sum(1000, 9000), data[1000:9000].astype(LD).sum(), np.abs(data).sum(), "cli manifest")
    assert a.max() == data.max()


def _readme_dask_blocks():
    """The "Beyond one machine" section's Python blocks (README.md or docs/*.md, doc_sections):
    the one-machine cluster, the example."""
    from doc_sections import blocks, section
    _, text = section("Beyond one machine: sharded arrays served by Dask")
    local, example = blocks(text, "python")
    return local, example


def test_the_readme_example_runs_on_one_machine_with_named_workers(tmp_path, capfd, monkeypatch):
    """The documents' one-machine LocalCluster (workers named disk-a, disk-b), then its example as
    written with that client and scratch folders for /data: no hang, and nothing on the user's
    terminal from the workers (their notices) or from Dask (a large object in the graph)."""
    local, example = _readme_dask_blocks()
    np.save("big.npy", np.random.default_rng(0).normal(size=10**6))
    code = example.replace('Client("tcp://HOST:8786")', "client").replace("/data/a", str(tmp_path / "a"))
    code = code.replace("/data/b", str(tmp_path / "b"))
    namespace = {"__name__": "__readme__"}
    monkeypatch.setattr(md, "shard_create", functools.partial(md.shard_create, timeout=WAIT))
    distributed.worker._warn_dumps_warned[0] = False  # Dask warns once per process
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            exec(compile(local, "docs/dask.md one machine", "exec"), namespace)
            names = sorted(w["name"] for w in namespace["client"].scheduler_info()["workers"].values())
            assert names == ["disk-a", "disk-b"]
            exec(compile(code, "docs/dask.md Beyond one machine", "exec"), namespace)
    finally:
        if "client" in namespace:
            namespace["client"].close()
        if "cluster" in namespace:
            namespace["cluster"].close(timeout=30)
    noise = [str(w.message) for w in said if issubclass(w.category, (momenta.Notice, UserWarning))
             and ("Large object" in str(w.message) or "momenta" in str(w.message) or "shard" in str(w.message))]
    assert noise == []
    err = capfd.readouterr().err
    assert "Notice" not in err and "Large object" not in err, err[-3000:]


def test_integer_worker_names_are_matched_and_big_arguments_scattered(client, tmp_path, caplog):
    """The module's cluster is LocalCluster(n_workers=3, processes=True), as a user starts it:
    its workers are named with the integers 0, 1, 2. A placement naming them (as ints, or as the
    CLI's text "0") is matched at once; one naming no worker fails at once, listing the workers.
    A big ndarray's shards and a big batch's ranges go by scatter (no "large object" warning);
    the workers' notices of the buffers they built come back and are logged, not shown."""
    assert sorted(w["name"] for w in client.scheduler_info()["workers"].values()) == [0, 1, 2]
    distributed.worker._warn_dumps_warned[0] = False  # Dask warns once per process
    data = np.random.default_rng(5).normal(size=3 * 2**18)  # 6 MiB: shards of 2 MiB each
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=r"placement: no worker named disk-a \(workers: 0 \(tcp://[^)]*\), "
                                         r"1 \(tcp://[^)]*\), 2 \(tcp://[^)]*\)\)"):
        shard_create(data, tmp_path / "x.json", 2**18, [("disk-a", str(tmp_path / "a"))], client)
    assert time.monotonic() - t0 < 10 and not os.path.exists(tmp_path / "a")  # at once, nothing made
    caplog.set_level("INFO", logger="momenta.dask")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        m = shard_create(data, tmp_path / "i.json", 2**18, [(0, str(tmp_path / "a")), (1, str(tmp_path / "b"))],
                         client, replicas=1)  # unmatched, it would wait its whole timeout and fail
        a = md.ShardedArray(m, client, timeout=WAIT)
        assert [s.copies[0].worker for s in a.shards] == ["0", "1", "0"]
        assert np.mean(a) == pytest.approx(data.mean(), rel=1e-12) and np.max(a) == data.max()
        np.testing.assert_allclose(np.std(a, ddof=1), np.std(data, ddof=1), rtol=1e-10)
        assert type(np.sum(a)) is np.float64 and type(np.min(a)) is np.float64
        starts = np.arange(300_000)  # 2.3 MiB of starts, and of stops
        got = a.stats(starts, starts + 7, ["sum"])["sum"]
        np.testing.assert_allclose(got[:1000], [data[i:i + 7].sum() for i in range(1000)], rtol=1e-12)
        x = client.compute(a.to_dask_array().sum()).result(timeout=WAIT)  # its chunks on workers 0 and 1
        np.testing.assert_allclose(x, data.sum(), rtol=1e-12)
        s = shard_create(np.arange(10.0), tmp_path / "s.json", 5, [("2", str(tmp_path / "c"))], client)
        assert md.ShardedArray(s, client, timeout=WAIT).sum() == 45.0  # "2", as the CLI writes it, is worker 2
        bare = workers(client)[1][len("tcp://"):]  # HOST:PORT, which Dask reads as tcp://HOST:PORT
        s = shard_create(np.arange(4.0), tmp_path / "h.json", 2, [(bare, str(tmp_path / "d"))], client)
        assert md.ShardedArray(s, client, timeout=WAIT).sum() == 6.0
    assert [str(w.message) for w in said if "Large object" in str(w.message) or w.category is momenta.Notice] == []
    built = [r.getMessage() for r in caplog.records if r.name == "momenta.dask"]
    assert len([t for t in built if "building the moment buffer" in t]) == 10, built  # 3 shards × 2 copies + 2 + 2
    with pytest.raises(momenta.InvalidArgumentError, match=r"np.sum of a ShardedArray: out= is not answered"):
        np.sum(a, out=np.zeros(()))
    with pytest.raises(TypeError, match="no implementation found for 'numpy.concatenate'"):
        np.concatenate([a, a])


def test_a_manifest_naming_no_worker_of_the_cluster_fails_at_once(client, tmp_path):
    m = shard_create(np.arange(100.0), tmp_path / "n.json", 50, placement(client, tmp_path), client)
    doc = json.loads(open(m).read())
    doc["shards"][1]["worker"] = "disk-z"
    t0 = time.monotonic()
    with pytest.raises(md.ShardError, match=r"shard #1 \(50:100\): no worker named disk-z \(workers: 0 \(tcp://"):
        md.ShardedArray(doc, client, timeout=30)
    assert time.monotonic() - t0 < 10  # at once, not after the timeout
    doc["shards"][1]["replicas"] = [{"worker": doc["shards"][0]["worker"], "path": doc["shards"][0]["path"]}]
    a = md.ShardedArray(doc, client, timeout=30, check=False)  # the replica is there: it answers
    assert a.sum(0, 50) == sum(range(50))
    with pytest.raises(FileExistsError, match="n.json: exists"):
        shard_create(np.arange(100.0), m, 50, placement(client, tmp_path), client)
    with pytest.raises(momenta.NotFoundError, match="none.npy"):
        shard_create(tmp_path / "none.npy", tmp_path / "o.json", 50, placement(client, tmp_path), client)


def test_a_tasks_notices_come_back_with_its_value_and_are_reissued(tmp_path, caplog):
    """What a worker's shard array says (a buffer built) is returned with the task's value, not
    printed on the worker; a query re-issues it as a momenta.Notice, a create logs it."""
    np.save(tmp_path / "n.npy", np.arange(10.0))
    value, said = md._tasks.call(md._tasks.shard_info, str(tmp_path / "n.npy"))
    md._tasks.shard_close(str(tmp_path / "n.npy"))
    assert value["length"] == 10 and len(said) == 1 and "building the moment buffer of" in said[0], said
    with pytest.warns(momenta.Notice, match="building the moment buffer of"):
        momenta._shard_runner.Runner._say(said, forward=True)
    caplog.set_level("INFO", logger="momenta.dask")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        momenta._shard_runner.Runner._say(said, forward=False)
    assert [r.getMessage() for r in caplog.records] == said


def test_integer_sumsq_is_exact_across_shards(client, seed, tmp_path):
    """sumsq of int64 and uint64 data at the types' extremes, sharded: the exact Python int
    sum(int(v)**2) wherever it is below 2**127 (else its float), single calls and batches alike;
    summary rows carry the exact sum of squares between the workers and the client."""
    rng = np.random.default_rng(seed + 7)
    n, shard = 9_000, 2_000
    for dtype in ("i8", "u8"):
        info = np.iinfo(np.dtype(dtype))
        data = rng.integers(-1000 if dtype == "i8" else 0, 1000, n).astype(dtype)
        data[rng.integers(0, n, 40)] = info.max - rng.integers(0, 3, 40).astype(dtype)
        data[rng.integers(0, n, 40)] = info.min
        np.save(tmp_path / f"x_{dtype}.npy", data)
        m = md.shard_create(tmp_path / f"x_{dtype}.npy", tmp_path / f"x_{dtype}.json", shard,
                            placement(client, tmp_path), client)
        a = md.ShardedArray(m, client)
        cuts = [(0, n), (1990, 2010), (100, 150)] + [tuple(sorted(rng.integers(0, n, 2).tolist())) for _ in range(10)]
        cuts = [(p, max(q, p + 1)) for p, q in cuts]
        got_batch = a.stats(np.array([p for p, _ in cuts]), np.array([q for _, q in cuts]), ["sumsq"])["sumsq"]
        for k, (p, q) in enumerate(cuts):
            s = sum(int(v) * int(v) for v in data[p:q].tolist())
            what = f"{dtype} {p}:{q} (seed {seed})"
            for got in (a.sumsq(p, q), got_batch[k]):
                if s < 2**127:
                    assert int(got) == s and not isinstance(got, float), what
                else:
                    assert isinstance(got, float) and abs(got - s) <= s * 2**-52, what
        a.close()
