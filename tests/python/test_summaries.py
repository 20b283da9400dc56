"""momenta.Summary, merge_summaries and summary_stat: the summaries of random pieces of a
range, merged, answer every statistic as the array answers the whole range."""

import os
import pickle

import numpy as np
import pytest

import momenta

STATS = ["sum", "count", "mean", "var", "std", "min", "max", "moment", "moments", "com", "spread", "polyfit"]


def _same(got, want, what):
    if isinstance(want, int) and not isinstance(want, bool):
        assert type(got) is int and got == want, what
        return
    g, w = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert g.shape == w.shape, what
    assert np.array_equal(np.isnan(g), np.isnan(w)), what
    fin = np.isfinite(w)
    assert np.array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)]), what
    np.testing.assert_allclose(g[fin], w[fin], rtol=1e-11, atol=1e-9 * np.max(np.abs(w[fin]), initial=0), err_msg=what)


def _answer(a, stat, p, q, **kw):
    """The array's own answer, or the exception it raises."""
    try:
        if stat == "moment":
            return a.moment(kw.get("order", 1), p, q, about=kw.get("about"), skipna=kw.get("skipna", False))
        if stat == "moments":
            return a.moments(kw.get("order"), p, q, about=kw.get("about"), skipna=kw.get("skipna", False))
        if stat == "polyfit":
            return a.polyfit(kw.get("degree", 1), p, q, skipna=kw.get("skipna", False))
        extra = {"ddof": kw["ddof"]} if stat in ("var", "std") and "ddof" in kw else {}
        return getattr(a, stat)(p, q, skipna=kw.get("skipna", False), **extra)
    except momenta.Error as e:
        return e


def _pieces(rng, p, q, n):
    cuts = np.sort(rng.integers(p, q + 1, size=n))
    edges = [p, *cuts.tolist(), q]
    return list(zip(edges[:-1], edges[1:]))


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i2", "u1", "u8"])
def test_merged_pieces_answer_as_the_array(rng, dtype):
    n = 5000
    if dtype[0] == "f":
        data = rng.normal(1e3, 10, n).astype(dtype)
        data[rng.integers(0, n, 5)] = np.nan
        data[rng.integers(0, n, 3)] = np.inf
        data[rng.integers(0, n, 3)] = -np.inf
    elif dtype == "u8":
        data = rng.integers(2**62, 2**64 - 1, n, dtype=np.uint64)  # sums past int64: exact ints
    else:
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    np.save("a.npy", data)
    a = momenta.open("a.npy")
    for trial in range(25):
        p, q = sorted(rng.integers(0, n + 1, 2).tolist())
        parts = [a.summary(b, e) for b, e in _pieces(rng, p, q, int(rng.integers(0, 6)))]
        parts = [pickle.loads(pickle.dumps(s)) for s in parts]
        merged = momenta.merge_summaries(parts)
        assert (merged.start, merged.stop, merged.count, merged.dtype) == (p, q, q - p, dtype)
        for skipna in (False, True):
            for stat in STATS:
                kw = {"skipna": skipna}
                if stat in ("moment", "moments"):
                    kw.update(order=int(rng.integers(0, 3)), about=float(rng.integers(0, n)))
                if stat == "polyfit":
                    kw["degree"] = int(rng.integers(0, 3))
                if stat in ("var", "std"):
                    kw["ddof"] = int(rng.integers(0, 2))
                want = _answer(a, stat, p, q, **kw)
                what = f"{dtype} {stat} {p}:{q} {kw} trial {trial}"
                if isinstance(want, Exception):
                    with pytest.raises(type(want)):
                        momenta.summary_stat(merged, stat, **kw)
                    continue
                _same(momenta.summary_stat(merged, stat, **kw), want, what)


def test_whole_array_summary_reads_no_element(rng):
    np.save("a.npy", rng.normal(size=100_000))
    a = momenta.open("a.npy")
    assert a._h._summary_read_bytes(0, a.size, True) == 0
    s = a.summary()
    assert (s.start, s.stop, s.has_extremes) == (0, a.size, True)
    assert momenta.summary_stat(s, "max") == a.max()


def test_summary_bytes_round_trip_and_refuse_damage():
    np.save("a.npy", np.arange(100.0))
    s = momenta.open("a.npy").summary(10, 20)
    b = s.to_bytes()
    again = momenta.Summary.from_bytes(b)
    assert momenta.summary_stat(again, "sum") == sum(range(10, 20))
    bad = bytearray(b)
    bad[40] ^= 1
    with pytest.raises(momenta.CorruptionError, match="check"):
        momenta.Summary.from_bytes(bytes(bad))
    with pytest.raises(momenta.CorruptionError, match="bytes where order"):
        momenta.Summary.from_bytes(b[:-8])
    with pytest.raises(momenta.CorruptionError, match="not a momenta summary"):
        momenta.Summary.from_bytes(b"nonsense")


def test_merge_refuses_gaps_dtypes_and_others():
    np.save("a.npy", np.arange(100.0))
    np.save("b.npy", np.arange(100, dtype=np.int32))
    a, b = momenta.open("a.npy"), momenta.open("b.npy")
    with pytest.raises(momenta.InvalidArgumentError, match=r"summary #1 \(20:30\) does not start at 10"):
        momenta.merge_summaries([a.summary(0, 10), a.summary(20, 30)])
    with pytest.raises(momenta.InvalidArgumentError, match="dtype i4"):
        momenta.merge_summaries([a.summary(0, 10), b.summary(10, 20)])
    with pytest.raises(momenta.InvalidArgumentError, match="no summaries"):
        momenta.merge_summaries([])
    with pytest.raises(momenta.InvalidArgumentError, match="not a momenta.Summary"):
        momenta.merge_summaries([a.summary(0, 10), 5])
    moved = b.summary(0, 10).moved(10)
    m = momenta.merge_summaries([b.summary(0, 10), moved])
    assert momenta.summary_stat(m, "sum") == 2 * sum(range(10))
    with pytest.raises(momenta.InvalidArgumentError, match="extremes"):
        momenta.summary_stat(a.summary(0, 10, extremes=False), "min")
    with pytest.raises(momenta.InvalidArgumentError, match="unknown statistic"):
        momenta.summary_stat(m, "median")
    assert momenta.summary_stat(a.summary(5, 5), "sum") == 0.0


def test_summary_as_of_puts_back_what_changed_after_the_time():
    with momenta.create("t.npy", 100) as a:
        a.update([1, 2, 3], [1.0, 2.0, 3.0], times=1000)
        a.update([2, 50], [20.0, 50.0], times=2000)
        a.update([3], [-1.0], times=3000)
        want = {999: (0.0, 0.0, 0.0), 1000: (6.0, 3.0, 0.0), 2999: (74.0, 50.0, 0.0), 3000: (70.0, 50.0, -1.0)}
        for t, (total, top, low) in want.items():
            s = a.summary(as_of=t)
            assert (momenta.summary_stat(s, "sum"), momenta.summary_stat(s, "max")) == (total, top)
            pieces = momenta.merge_summaries([a.summary(0, 3, as_of=t), a.summary(3, 100, as_of=t)])
            assert momenta.summary_stat(pieces, "min") == low
            assert momenta.summary_stat(a.summary(2, 3, as_of=t), "sum") == {999: 0, 1000: 2, 2999: 20, 3000: 20}[t]
        a.update([5], [7.0], times=500)  # stamped before records already logged
        with pytest.raises(ValueError, match="the log's times go back, so no state is as of 1000"):
            a.summary(as_of=1000)
        assert momenta.summary_stat(a.summary(as_of=4000), "sum") == 77.0


def test_a_range_reports_the_pages_it_read(rng):
    """[10, 300) over leaves of 128 f8: its two end pieces ([0, 10), the shorter side of
    [10, 128), and [256, 300)) lie in one page of the array, read and reported once (as
    ``momenta query --json`` reports it), not once per piece. The array's pages are
    dropped first: a piece whose pages are cached is summed from a mapping, read nowhere."""
    with momenta.create("b.npy", 40_000, leaf=128, fanout=4) as a:
        a[:] = rng.normal(size=40_000)
    fd = os.open("b.npy", os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    with momenta.open("b.npy") as a:
        read = a._h._summary_read_bytes(10, 300, False)
        if read == 0:
            pytest.skip("the kernel kept the array's pages cached after POSIX_FADV_DONTNEED")
        assert read == 4096


@pytest.mark.parametrize("p, q, why", [(500, 100, r"P > Q \(500 > 100\)"), (0, 10**9, "Q = 1000000000 is past its end"),
                                       (-5000, 3, "P = -5000 reaches before its start")])
def test_a_range_that_is_no_range_says_why_as_the_cli_does(p, q, why):
    """Python's ranges follow the CLI's one rule (never clipped or emptied, unlike a NumPy
    slice) and say what is wrong in its words, on the fast path and the general one."""
    np.save("c.npy", np.arange(1000.0))
    with momenta.open("c.npy") as a:
        for call in (lambda: a.sum(p, q), lambda: a.mean(p, q), lambda: a.stats([p], [q], ["sum"])):
            with pytest.raises(momenta.OutOfRangeError, match="is not a range of the array|is outside the array"):
                call()
        with pytest.raises(momenta.OutOfRangeError, match=why):
            a.sum(p, q)
        with pytest.raises(momenta.OutOfRangeError, match=why):
            a.mean(p, q)
