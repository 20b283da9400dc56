"""sumsq and rms (Σ a² and sqrt(mean(a²))) from Python: every dtype, both buffer kinds, NaN
and infinities (the tree kind), random ranges (seed printed) against NumPy in long double with x**2 in long double
(np.sum(x.astype(longdouble)**2)), within 1e-9 relative; the batch and axis= forms; overview
in frames of a fixed length (bin_size=, the last one shorter); summaries merged from parts
answering as the whole array does. Integer dtypes: sumsq exact (a Python int equal to
sum(int(v)**2) wherever that is below 2**127, else its float), and rms from it, at the dtype's
extremes, after updates, through the CLI, batches, overviews and merged summaries."""

import json
import math

import numpy as np
import pytest

import momenta

LD = np.longdouble
DTYPES = ["f8", "f4", "i8", "i4", "i2", "i1", "u8", "u4", "u2", "u1"]
N = 4000


def make_data(rng, dtype, n, nonfinite=True):
    """Random data of dtype; floats with NaN and ±inf unless nonfinite=False (the Ola kind holds
    finite values only)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = (rng.normal(5, 3, n) * rng.choice([1, 1e3], n)).astype(dt)
        special = rng.random(n) if nonfinite else np.ones(n)
        x[special < 0.01] = np.nan
        x[(special >= 0.01) & (special < 0.015)] = np.inf
        x[(special >= 0.015) & (special < 0.02)] = -np.inf
        return x
    info = np.iinfo(dt)
    return rng.integers(int(info.min), int(info.max), n, dtype=dt, endpoint=True)


def want(x, skipna):
    """(sumsq, rms) as NumPy answers them with x**2 in long double (None for the rms of an empty
    range)."""
    y = x.astype(LD) ** 2
    if y.size == 0:  # an empty range's rms is an error, with skipna too (as the mean's)
        return LD(0), None
    if skipna:
        kept = y[~np.isnan(y)]
        return np.sum(kept), (np.sqrt(np.mean(kept)) if kept.size else LD(np.nan))
    return np.sum(y), np.sqrt(np.mean(y))


def exact_sumsq(x):
    """Σ a² of an integer array as a Python int when below 2**127 (what the buffer answers as an
    integer); None for floats or past it."""
    if x.dtype.kind not in "iu":
        return None
    s = sum(int(v) * int(v) for v in x.tolist())
    return s if s < 2**127 else None


def same(got, expected, what):
    if np.isnan(expected):
        assert np.isnan(got), f"{what}: {got}, want nan"
    elif np.isinf(expected):
        assert got == expected, f"{what}: {got}, want {expected}"
    else:
        assert abs(LD(got) - expected) <= LD(1e-9) * abs(expected), f"{what}: {got}, want {expected}"


@pytest.mark.parametrize("buffer", ["hbb", "ola"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_ranges_match_numpy(tmp_path, rng, dtype, buffer):
    data = make_data(rng, dtype, N, nonfinite=buffer == "hbb")
    path = tmp_path / "a.npy"
    extra = {"bin": 16} if buffer == "ola" else {}
    a = momenta.create(path, N, dtype, order=2, leaf=64, fanout=4, buffer=buffer, **extra)
    a[:] = data
    cuts = [(0, N), (5, 5), (0, 1)] + [tuple(sorted(rng.integers(0, N + 1, 2).tolist())) for _ in range(60)]
    for p, q in cuts:
        for skipna in (False, True):
            ss, rms = want(data[p:q], skipna)
            what = f"{dtype} {buffer} {p}:{q} skipna={skipna}"
            got = a.sumsq(p, q, skipna=skipna)
            exact = exact_sumsq(data[p:q])
            if exact is None:
                assert isinstance(got, float), what
                same(got, ss, "sumsq " + what)
            else:
                assert isinstance(got, int) and got == exact, f"sumsq {what}: {got}, want {exact}"
            if rms is None:
                with pytest.raises(momenta.InvalidArgumentError, match="rms: the range is empty"):
                    a.rms(p, q, skipna=skipna)
            else:
                same(a.rms(p, q, skipna=skipna), rms, "rms " + what)
    # The batch gives what single calls give.
    starts = rng.integers(0, N, 50)
    stops = np.minimum(starts + rng.integers(1, 500, 50), N)
    got = a.stats(starts, stops, ["sumsq", "rms"])
    for k, (p, q) in enumerate(zip(starts.tolist(), stops.tolist())):
        assert got["sumsq"][k] == a.sumsq(p, q) or (np.isnan(got["sumsq"][k]) and np.isnan(a.sumsq(p, q)))
        assert got["rms"][k] == a.rms(p, q) or (np.isnan(got["rms"][k]) and np.isnan(a.rms(p, q)))
    assert "sumsq" in momenta.STATISTICS and "rms" in momenta.STATISTICS


def test_axis_rows_of_a_matrix(tmp_path, rng):
    data = rng.normal(0, 10, (30, 40))
    a = momenta.create(tmp_path / "m.npy", (30, 40))
    a[:] = data
    got = a.rms(axis=1)
    assert got.shape == (30,)
    np.testing.assert_allclose(got, np.sqrt(np.mean(data ** 2, axis=1)), rtol=1e-12)
    np.testing.assert_allclose(a.sumsq(axis=1), np.sum(data ** 2, axis=1), rtol=1e-12)


def test_overview_in_frames_of_a_fixed_length(tmp_path, rng):
    data = rng.integers(-32768, 32767, 10_000, dtype=np.int16, endpoint=True)
    a = momenta.create(tmp_path / "rec.npy", data.size, "i2", leaf=64, fanout=4)
    a[:] = data
    ov = a.overview(1000, 4500, bin_size=1024, stats=["count", "rms"])
    assert ov["start"].tolist() == [1000, 2024, 3048, 4072]
    assert ov["stop"].tolist() == [2024, 3048, 4072, 4500]  # the last one shorter
    assert ov["count"].tolist() == [1024, 1024, 1024, 428]
    x = data.astype(LD)
    for b, e, r in zip(ov["start"], ov["stop"], ov["rms"]):
        same(r, np.sqrt(np.mean(x[b:e] ** 2)), f"frame {b}:{e}")
    assert a.overview(10, 13, bin_size=9, stats="count")["count"].tolist() == [3]
    snapped = a.overview(0, 300, bin_size=100, stats="count", snap=True)
    assert snapped["start"].tolist() == [0, 128, 192] and snapped["stop"].tolist() == [128, 192, 320]
    assert snapped["asked_stop"].tolist() == [100, 200, 300]
    with pytest.raises(momenta.InvalidArgumentError, match="either bins"):
        a.overview(0, 100, 4, bin_size=10)
    with pytest.raises(momenta.InvalidArgumentError, match="either bins"):
        a.overview(0, 100)
    with pytest.raises(momenta.InvalidArgumentError, match="bin_size 0"):
        a.overview(0, 100, bin_size=0)
    with pytest.raises(momenta.InvalidArgumentError, match="non-empty"):
        a.overview(5, 5, bin_size=3)
    # bins= still cuts equal bins, as before.
    assert a.overview(0, 10, 3, stats="count")["count"].tolist() == [3, 3, 4]


@pytest.mark.parametrize("dtype", ["f8", "i2", "u8"])
def test_merged_summaries_answer_as_the_whole_array(tmp_path, rng, dtype):
    data = make_data(rng, dtype, N)
    if data.dtype.kind == "f":
        data[np.isinf(data)] = 1.0  # one NaN case below is enough
    a = momenta.create(tmp_path / "a.npy", N, dtype, leaf=64, fanout=4)
    a[:] = data
    for _ in range(10):
        cuts = sorted(rng.integers(0, N + 1, 4).tolist())
        parts = [a.summary(b, e) for b, e in zip(cuts, cuts[1:])]
        merged = momenta.merge_summaries(parts)
        p, q = cuts[0], cuts[-1]
        for skipna in (False, True):
            ss, rms = want(data[p:q], skipna)
            same(momenta.summary_stat(merged, "sumsq", skipna=skipna), ss, f"merged sumsq {p}:{q}")
            if rms is not None:
                same(momenta.summary_stat(merged, "rms", skipna=skipna), rms, f"merged rms {p}:{q}")
                np.testing.assert_allclose(momenta.summary_stat(merged, "rms", skipna=skipna),
                                           a.rms(p, q, skipna=skipna), rtol=1e-12)


@pytest.mark.parametrize("buffer", ["hbb", "ola"])
@pytest.mark.parametrize("dtype", ["f8", "i2", "u8"])
def test_approx_bounds_hold_the_exact_answer(tmp_path, rng, dtype, buffer):
    data = make_data(rng, dtype, N, nonfinite=False)
    extra = {"bin": 16} if buffer == "ola" else {}
    a = momenta.create(tmp_path / "a.npy", N, dtype, order=2, leaf=64, fanout=4, buffer=buffer, **extra)
    a[:] = data
    x = data.astype(LD) ** 2
    for _ in range(30):
        p, q = sorted(rng.integers(0, N + 1, 2).tolist())
        q = max(q, p + 1)
        for name, exact in (("sumsq", np.sum(x[p:q])), ("rms", np.sqrt(np.mean(x[p:q])))):
            got = getattr(a, name)(p, q, approx=True)
            assert isinstance(got, momenta.Approx) and got.nan == "no", f"{name} {p}:{q}"
            slack = LD(q - p + 2) * LD(2.0) ** -64 * exact  # the reference's own rounding
            assert LD(got.lower) <= exact + slack and exact - slack <= LD(got.upper), f"{name} {p}:{q}: {got} {exact}"
            assert got.lower <= got.estimate <= got.upper
    with pytest.raises(momenta.InvalidArgumentError, match="rms: the range is empty"):
        a.rms(5, 5, approx=True)
    assert a.sumsq(5, 5, approx=True).estimate == 0


def extreme_data(rng, dtype, n):
    """Integers of dtype at and near its extremes, small ones and zeros, mixed."""
    info = np.iinfo(np.dtype(dtype))
    lo, hi = int(info.min), int(info.max)
    pick = rng.integers(0, 5, n).tolist()
    near = rng.integers(0, 3, n).tolist()
    small = rng.integers(max(lo, -1000), min(hi, 1000), n, endpoint=True).tolist()
    wide = rng.integers(lo, hi, n, dtype=np.dtype(dtype), endpoint=True).tolist()
    x = [(lo + near[k], hi - near[k], small[k], wide[k], 0)[pick[k]] for k in range(n)]
    return np.array(x, dtype=dtype)


def check_exact(got_sumsq, got_rms, x, what):
    """sumsq and rms of the integers x as the buffer answers them: exact while below 2**127."""
    ints = [int(v) for v in x.tolist()]
    s = sum(v * v for v in ints)
    if s < 2**127:
        assert isinstance(got_sumsq, int) and got_sumsq == s, f"sumsq {what}: {got_sumsq}, want {s}"
    else:
        assert isinstance(got_sumsq, float) and math.isclose(got_sumsq, s, rel_tol=2**-52), f"sumsq {what}"
    if ints:
        want_rms = math.sqrt(s / len(ints))  # the exact ratio, correctly rounded, then sqrt
        assert math.isclose(got_rms, want_rms, rel_tol=2**-51), f"rms {what}: {got_rms}, want {want_rms}"


@pytest.mark.parametrize("dtype", ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"])
def test_integer_sumsq_is_exact_at_the_extremes(tmp_path, rng, cli, dtype):
    n = 3000
    data = extreme_data(rng, dtype, n)
    a = momenta.create(tmp_path / "a.npy", n, dtype, order=2, leaf=64, fanout=4)
    a[:] = data
    cuts = [(0, n), (0, 1), (5, 5), (64, 128)] + [tuple(sorted(rng.integers(0, n + 1, 2).tolist()))
                                                 for _ in range(40)]

    def check_all(what):
        for p, q in cuts:
            rms = a.rms(p, q) if q > p else 0.0
            check_exact(a.sumsq(p, q), rms, data[p:q], f"{dtype} {p}:{q} {what}")
        starts = np.array([p for p, q in cuts if q > p])
        stops = np.array([q for p, q in cuts if q > p])
        got = a.stats(starts, stops, ["sumsq", "rms"])
        for k, (p, q) in enumerate(zip(starts.tolist(), stops.tolist())):
            check_exact(got["sumsq"][k] if isinstance(got["sumsq"][k], (int, float)) else int(got["sumsq"][k]),
                        float(got["rms"][k]), data[p:q], f"{dtype} batch {p}:{q} {what}")
        parts = [a.summary(b, e) for b, e in ((0, 700), (700, 1500), (1500, n))]
        merged = momenta.merge_summaries(parts)
        check_exact(momenta.summary_stat(merged, "sumsq"), momenta.summary_stat(merged, "rms"), data,
                    f"{dtype} merged {what}")

    check_all("built")
    # One update, then a batch (the gathered node deltas), each moving cells between extremes.
    data[17] = extreme_data(rng, dtype, 1)[0]
    a[17] = data[17]
    check_all("after one update")
    idx = rng.choice(n, 400, replace=False)
    data[idx] = extreme_data(rng, dtype, 400)
    a.update(idx, data[idx])
    check_all("after a batch of updates")
    a.close()

    # The CLI: --stat sumsq --stat rms in text and JSON (JSON integers are exact), --ranges, --bins.
    p, q = cuts[4]
    q = max(q, p + 1)
    line = cli("query", tmp_path / "a.npy", "--range", f"{p}:{q}", "--stat", "sumsq", "--stat", "rms").stdout.split()
    got = json.loads(cli("query", tmp_path / "a.npy", "--range", f"{p}:{q}", "--stat", "sumsq", "--stat", "rms",
                         "--json").stdout)["stats"]
    check_exact(got["sumsq"] if isinstance(got["sumsq"], int) else float(got["sumsq"]), float(got["rms"]),
                data[p:q], f"{dtype} cli --json {p}:{q}")
    assert line[line.index("sumsq") + 1] == str(got["sumsq"]) or float(line[line.index("sumsq") + 1]) == got["sumsq"]
    ranges = "".join(f"{b}:{e}\n" for b, e in cuts if e > b)
    out = cli("query", tmp_path / "a.npy", "--ranges", "-", "--stat", "sumsq", "--stat", "rms", "--json", input=ranges).stdout
    answers = [json.loads(x) for x in out.splitlines() if x.startswith("{") and '"stats"' in x]
    assert len(answers) == len([c for c in cuts if c[1] > c[0]]), out[:500]
    for (b, e), got in zip([c for c in cuts if c[1] > c[0]], answers):
        check_exact(got["stats"]["sumsq"] if isinstance(got["stats"]["sumsq"], int) else float(got["stats"]["sumsq"]),
                    float(got["stats"]["rms"]), data[b:e], f"{dtype} cli --ranges {b}:{e}")
    # --progressive: the bounds hold the exact answer; the last line is it.
    lines = [json.loads(x) for x in cli("query", tmp_path / "a.npy", "--range", f"{p}:{q}", "--stat", "sumsq",
                                        "--progressive", "--json").stdout.splitlines()]
    s = sum(int(v) * int(v) for v in data[p:q].tolist())
    for x in lines:
        assert float(x["lower"]) <= s * (1 + 2**-52) and s * (1 - 2**-52) <= float(x["upper"]), (x, s)
    assert lines[-1]["exact"] and (lines[-1]["estimate"] == s if s < 2**127 else
                                   math.isclose(lines[-1]["estimate"], s, rel_tol=2**-52))
    out = cli("query", tmp_path / "a.npy", "--range", f"0:{n}", "--bins", "7", "--stat", "sumsq", "--json").stdout
    bins = [json.loads(x) for x in out.splitlines() if '"range"' in x]
    assert len(bins) == 7, out
    for k, got in enumerate(bins):
        b, e = got["range"]
        s = sum(int(v) * int(v) for v in data[b:e].tolist())
        if s < 2**127:
            assert got["stats"]["sumsq"] == s, f"{dtype} cli --bins #{k}"
        else:
            assert math.isclose(float(got["stats"]["sumsq"]), s, rel_tol=2**-52)


def test_summary_bytes_of_the_format_before_exact_squares_are_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(100, dtype=np.int32))
    with pytest.warns(momenta.Notice, match="building the moment buffer"):
        b = bytearray(momenta.open(tmp_path / "a.npy").summary(10, 20).to_bytes())
    assert momenta.summary_stat(momenta.Summary.from_bytes(bytes(b)), "sumsq") == sum(v * v for v in range(10, 20))
    b[4] = 1  # version 1: nodes without the exact sum of squares
    with pytest.raises(momenta.NotSupportedError, match=r"summary bytes: version 1 \(this build reads 2\)"):
        momenta.Summary.from_bytes(bytes(b))
