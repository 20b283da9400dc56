"""Property tests (hypothesis): any range, any index expression, any sequence of updates,
any placement of NaN and infinities, checked against NumPy (long double where it sums).
A failure prints the falsifying example; `--hypothesis-seed=N` replays a run."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import momenta

LD = np.longdouble
SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_names = itertools.count()


def fresh(data, leaf=16, fanout=4):
    """A new array file holding `data`, its buffer built with small leaves (many levels)."""
    path = f"p{next(_names)}.npy"
    np.save(path, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", momenta.Notice)
        with momenta.open(path, "r+") as w:
            w.rebuild(leaf=leaf, fanout=fanout)
        return momenta.open(path)


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    """One f8 array of 3000 cells for the range properties."""
    d = tmp_path_factory.mktemp("fixed")
    data = np.random.default_rng(7).normal(2, 5, 3000)
    np.save(d / "a.npy", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", momenta.Notice)
        with momenta.open(d / "a.npy", "r+") as w:
            w.rebuild(leaf=32, fanout=8)
        a = momenta.open(d / "a.npy")
    yield a, data.astype(LD)
    a.close()


@SETTINGS
@given(p=st.integers(-3500, 3500), q=st.integers(-3500, 3500))
def test_any_range(fixed, p, q):
    a, x = fixed
    n = len(x)
    b, e = (p + n if p < 0 else p), (q + n if q < 0 else q)
    if not 0 <= b <= e <= n:
        with pytest.raises(momenta.OutOfRangeError, match="is not a range of the array"):
            a.sum(p, q)
        return
    s = x[b:e]
    tol = LD(1e-9) * np.sum(np.abs(x)) + LD(1e-12)  # loose: the whole array's Σ|a_i| bounds any end leaves
    assert abs(LD(a.sum(p, q)) - np.sum(s)) <= tol
    assert a.count(p, q) == e - b
    if e > b:
        assert a.min(p, q) == float(np.min(s)) and a.max(p, q) == float(np.max(s))
        assert abs(LD(a.mean(p, q)) - np.mean(s)) <= LD(1e-9) * np.sqrt(np.mean(x * x))


SHAPE = (4, 5, 6)
index_part = st.one_of(st.integers(-7, 7), st.builds(slice, st.one_of(st.none(), st.integers(-8, 8)),
                                                     st.one_of(st.none(), st.integers(-8, 8))))


@pytest.fixture(scope="module")
def cube(tmp_path_factory):
    d = tmp_path_factory.mktemp("cube")
    data = np.arange(np.prod(SHAPE), dtype=np.int64).reshape(SHAPE) * 3 - 50
    np.save(d / "c.npy", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", momenta.Notice)
        a = momenta.open(d / "c.npy")
    yield a, data
    a.close()


@SETTINGS
@given(key=st.lists(index_part, min_size=0, max_size=3).map(tuple), ellipsis=st.booleans())
def test_index_expressions(cube, key, ellipsis):
    """A NumPy index expression is answered when its selection is one run of the flat index
    (the sum of exactly those cells), refused otherwise; with axis=-1, one answer per row."""
    a, data = cube
    if ellipsis:
        key = key + (Ellipsis,)
    flat = np.arange(data.size).reshape(SHAPE)
    try:
        sel = flat[key]
    except IndexError:
        with pytest.raises(momenta.OutOfRangeError):
            a.sum(key)
        return
    cells = np.asarray(sel).reshape(-1)
    run = cells.size == 0 or np.array_equal(cells, np.arange(cells[0], cells[0] + cells.size))
    if run:
        assert a.sum(key) == int(data.reshape(-1)[cells].sum())
        assert a.count(key) == cells.size
    else:
        with pytest.raises(momenta.InvalidArgumentError, match="axis="):
            a.sum(key)
    if np.ndim(sel) >= 1:
        rows = np.asarray(sel).reshape(-1, np.shape(sel)[-1]) if np.shape(sel)[-1] else None
        rows_are_runs = rows is not None and all(np.array_equal(r, np.arange(r[0], r[0] + len(r))) for r in rows)
        if rows_are_runs:
            got = a.sum(key, axis=-1)
            assert np.shape(got) == np.shape(sel)[:-1]
            np.testing.assert_array_equal(got, data[key].sum(axis=-1))
        elif rows is not None:
            with pytest.raises(momenta.InvalidArgumentError):
                a.sum(key, axis=-1)


@SETTINGS
@given(updates=st.lists(st.tuples(st.integers(-300, 299), st.integers(-2**31, 2**31 - 1)), min_size=1,
                        max_size=40),
       runs=st.lists(st.tuples(st.integers(0, 290), st.lists(st.integers(-100, 100), min_size=1, max_size=10)),
                     max_size=4))
def test_updates(updates, runs):
    """Scattered updates (a later one to the same index wins) and runs written through the
    log leave the file, the reader's view and every statistic as the model says."""
    model = np.zeros(300, dtype=np.int32)
    path = f"u{next(_names)}.npy"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", momenta.Notice)
        w = momenta.create(path, 300, "i4", leaf=16, fanout=4)
    with w:
        idx = np.array([i for i, _ in updates])
        vals = np.array([v for _, v in updates])
        w.update(idx, vals, times=1000)
        for i, v in updates:
            model[i] = v
        for p, vals in runs:
            w[p:p + len(vals)] = vals[:300 - p]
            model[p:p + len(vals)] = vals[:300 - p]
        view = np.asarray(w)
        np.testing.assert_array_equal(view, model)
        for p, q in [(0, 300), (5, 17), (16, 32), (100, 299)]:
            assert w.sum(p, q) == int(model[p:q].astype(np.int64).sum())
            assert w.min(p, q) == model[p:q].min() and w.max(p, q) == model[p:q].max()
    with momenta.open(path) as r:
        np.testing.assert_array_equal(np.asarray(r), model)
        assert r.sum() == int(model.astype(np.int64).sum())


cell = st.one_of(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), st.just(np.nan), st.just(np.inf),
                 st.just(-np.inf))


def same(got, want):
    """Equal as NumPy answers compare: NaN is NaN, infinities by sign, finite within 1e-9."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    for g, w in zip(got.reshape(-1), want.reshape(-1)):
        if np.isnan(w):
            assert np.isnan(g), (got, want)
        elif np.isinf(w):
            assert g == w, (got, want)
        else:
            assert abs(g - w) <= 1e-9 * max(1.0, abs(w)) * 1e3, (got, want)


@SETTINGS
@given(cells=st.lists(cell, min_size=1, max_size=120), bounds=st.tuples(st.integers(0, 120), st.integers(0, 120)))
def test_nan_and_infinity_placement(cells, bounds):
    """NaN and ±inf anywhere: sum mean var std min max as np.sum np.mean np.var np.std
    np.min np.max, skipna as the nan* functions (count: the non-NaN cells), the index
    statistics NaN whenever a non-finite cell is not skipped (polyfit: any NaN)."""
    x = np.array(cells, dtype=np.float64)
    p, q = sorted(min(b, len(x)) for b in bounds)
    a = fresh(x, leaf=8, fanout=2)
    s = x[p:q]
    with a, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN warnings
        same(a.sum(p, q), np.sum(s.astype(LD)))
        same(a.sum(p, q, skipna=True), np.nansum(s.astype(LD)))
        assert a.count(p, q) == q - p and a.count(p, q, skipna=True) == int(np.sum(~np.isnan(s)))
        if q > p:
            same(a.mean(p, q), np.mean(s.astype(LD)))
            same(a.mean(p, q, skipna=True), np.nanmean(s.astype(LD)))
            same(a.var(p, q), np.var(s.astype(LD)))
            same(a.var(p, q, skipna=True), np.nanvar(s.astype(LD)))
            same(a.std(p, q, skipna=True), np.nanstd(s.astype(LD)))
            same(a.min(p, q), np.min(s))
            same(a.max(p, q), np.max(s))
            same(a.min(p, q, skipna=True), np.nanmin(s))
            same(a.max(p, q, skipna=True), np.nanmax(s))
            finite = np.isfinite(s).all()
            i = np.arange(p, q, dtype=LD)
            if finite:
                same(a.moment(1, p, q), np.sum((i - p) * s.astype(LD)))
            else:
                assert np.isnan(a.moment(1, p, q)) and np.isnan(a.moments(2, p, q)).all()
            no_inf = not np.isinf(s).any()
            if no_inf:  # skipna: NaN cells weigh nothing
                same(a.moment(2, p, q, skipna=True), np.nansum((i - p) ** 2 * s.astype(LD)))
            else:
                assert np.isnan(a.moment(2, p, q, skipna=True))
            if q - p > 1 and not finite:
                assert np.isnan(a.polyfit(1, p, q, skipna=True)).all()
        # the batch answers the same
        got = a.stats([p], [q], ["sum", "count"], skipna=True)
        same(got["sum"][0], a.sum(p, q, skipna=True))
        assert got["count"][0] == a.count(p, q, skipna=True)
