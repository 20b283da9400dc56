"""sumsq and rms (Σ a² and sqrt(mean(a²))) from Python: every dtype, both buffer kinds, NaN
and infinities (the tree kind), random ranges (seed printed) against NumPy in long double with x**2 in long double
(np.sum(x.astype(longdouble)**2)), within 1e-9 relative; the batch and axis= forms; overview
in frames of a fixed length (bin_size=, the last one shorter); summaries merged from parts
answering as the whole array does."""

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
            assert isinstance(got, float), what
            same(got, ss, "sumsq " + what)
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
