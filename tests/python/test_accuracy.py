"""Every statistic over random ranges of NumPy-written files of every dtype, checked against
NumPy in long double with the bound the C++ tests use (DESIGN.md §5): a moment of order k
about c over [p, q) is within 1e-9 · Σ (|i − p| + |p − c|)^k |a_i| of the exact value, the
sum taken over the range's end leaves whole and |a_i| at the largest the cell has held; the
mean within 1e-9 of the data's scale, the variance within 1e-9 of its square; sums of integer
arrays exact; min and max exact. Then again after writes and updates through the log, and
the batch (stats) must give exactly what single calls give."""

import numpy as np
import pytest

import momenta

LD = np.longdouble
DTYPES = ["f8", "f4", "i8", "i4", "i2", "i1", "u8", "u4", "u2", "u1"]
# (order J, leaf span, fan-out) of the buffer: the default, and a deep one with J = 4.
CONFIGS = [(2, None, 64), (4, 256, 4)]
N = 6000


def make_data(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.normal(5, 3, n) * rng.choice([1, 1e3], n)).astype(dt)
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    if dt.itemsize == 8:  # full range half the time, small values otherwise (moments stay exact)
        wide = rng.integers(lo, hi, n, dtype=dt, endpoint=True)
        narrow = rng.integers(max(lo, -1000), 1000, n).astype(dt)
        return np.where(rng.random(n) < 0.5, wide, narrow)
    return rng.integers(lo, hi, n, endpoint=True).astype(dt)


class Reference:
    """The array as NumPy holds it, in long double, with the largest |a_i| each cell held."""

    def __init__(self, data):
        self.dtype = data.dtype
        self.exact = data.astype(object) if data.dtype.kind in "iu" else None
        self.a = data.astype(LD)
        self.held = np.abs(self.a)

    def set(self, idx, values):
        values = np.asarray(values).astype(self.dtype)
        for i, v in zip(np.asarray(idx).reshape(-1), values.reshape(-1)):  # in order: a later one wins
            self.a[i] = LD(v) if self.dtype.kind == "f" else LD(int(v))
            if self.exact is not None:
                self.exact[i] = int(v)
            self.held[i] = max(self.held[i], abs(self.a[i]))

    def moment(self, p, q, k, c, lo, hi):
        i = np.arange(p, q, dtype=LD)
        want = np.sum((i - LD(c)) ** k * self.a[p:q])
        j = np.arange(lo, hi, dtype=LD)
        mag = np.sum((np.abs(j - p) + abs(LD(p) - LD(c))) ** k * self.held[lo:hi])
        return want, LD(1e-9) * mag + LD(1e-12)


def ends(a, p, q):
    leaf = a.leaf_span
    return p // leaf * leaf, min(a.size, -(-q // leaf) * leaf)


def check_range(a, ref, p, q, order, rng):
    tag = f"range {p}:{q} of {a.dtype}"
    x = ref.a[p:q]
    n = q - p
    lo, hi = ends(a, p, q)
    assert a.count(p, q) == n, tag
    # sum: exact for integers, else the order-0 bound
    s = a.sum(p, q)
    if ref.exact is not None:
        assert isinstance(s, int) and s == sum(ref.exact[p:q].tolist()), tag
    else:
        want, tol = ref.moment(p, q, 0, p, lo, hi)
        assert abs(LD(s) - want) <= tol, f"{tag}: sum {s} want {want}"
    # index moments about p and about a center near the range
    centers = [p, p + int(rng.integers(-3, n + 4))]
    for c in centers:
        for k in range(order + 1):
            got = a.moment(k, p, q, about=c)
            want, tol = ref.moment(p, q, k, c, lo, hi)
            assert abs(LD(got) - want) <= tol, f"{tag}: moment {k} about {c}: got {got} want {want} (tol {tol})"
        ms = a.moments(None, p, q, about=c)
        assert ms.shape == (order + 1,)
        for k in range(order + 1):
            want, tol = ref.moment(p, q, k, c, lo, hi)
            assert abs(LD(ms[k]) - want) <= tol, f"{tag}: moments[{k}] about {c}"
    if n == 0:
        for f in (a.mean, a.var, a.std, a.min, a.max):
            with pytest.raises(momenta.InvalidArgumentError, match="the range is empty"):
                f(p, q)
        return
    mean = np.sum(x) / n
    scale = np.sum(x * x) / n
    var = np.sum((x - mean) ** 2) / n
    assert abs(LD(a.mean(p, q)) - mean) <= LD(1e-9) * np.sqrt(scale) + LD(1e-12), tag
    var_tol = LD(1e-9) * scale + LD(1e-12)
    assert abs(LD(a.var(p, q)) - var) <= var_tol, f"{tag}: var {a.var(p, q)} want {var}"
    assert abs(LD(a.std(p, q)) - np.sqrt(var)) <= np.sqrt(var_tol), tag
    if n > 1:
        assert abs(LD(a.var(p, q, ddof=1)) - var * n / (n - 1)) <= var_tol * n / (n - 1), tag
    assert a.min(p, q) == float(np.min(x)), tag
    assert a.max(p, q) == float(np.max(x)), tag
    # center of mass and spread, from M0..M2 about p, where the weights are well conditioned
    m = [ref.moment(p, q, k, p, lo, hi) for k in range(3)]
    (m0, d0), (m1, d1), (m2, d2) = m
    if abs(m0) > 1e6 * d0:
        mu1, mu2 = m1 / m0, m2 / m0
        com_tol = (d1 + abs(mu1) * d0) / abs(m0) * LD(1.01) + LD(1e-9)
        assert abs(LD(a.com(p, q)) - (p + mu1)) <= com_tol, f"{tag}: com"
        v = mu2 - mu1 * mu1
        v_tol = (d2 + 2 * abs(mu1) * d1 + (abs(mu2) + 2 * mu1 * mu1) * d0) / abs(m0) * LD(1.01) + LD(1e-9)
        if v > 10 * v_tol:
            assert abs(LD(a.spread(p, q)) ** 2 - v) <= 2 * v_tol + LD(1e-9) * v, f"{tag}: spread"
    # polyfit against NumPy's least squares (float64), compared as fitted values
    for degree in range(min(order, 2) + 1):
        if n <= degree + 2:
            continue
        got = a.polyfit(degree, p, q)
        t = np.arange(n, dtype=np.float64)
        want = np.polynomial.polynomial.polyfit(t, x.astype(np.float64), degree)
        fit_got = np.polynomial.polynomial.polyval(t, got)
        fit_want = np.polynomial.polynomial.polyval(t, want)
        tol = 1e-7 * float(np.max(np.abs(x))) + 1e-9
        assert np.max(np.abs(fit_got - fit_want)) <= tol, f"{tag}: polyfit {degree}: {got} vs {want}"


def random_ranges(rng, n, count):
    out = []
    for _ in range(count):
        kind = rng.integers(4)
        if kind == 0:  # short, anywhere
            p = int(rng.integers(0, n + 1))
            q = min(n, p + int(rng.integers(0, 50)))
        elif kind == 1:  # ends at leaf-ish boundaries
            p, q = sorted(int(v) for v in rng.integers(0, n // 256 + 1, 2) * 256)
            q = min(q, n)
        else:
            p, q = sorted(int(v) for v in rng.integers(0, n + 1, 2))
        out.append((p, q))
    out += [(0, n), (0, 0), (n, n), (0, 1), (n - 1, n)]
    return out


@pytest.mark.parametrize("config", CONFIGS, ids=["J2-default-leaf", "J4-leaf256-fanout4"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_ranges_every_dtype(dtype, config, rng):
    order, leaf, fanout = config
    data = make_data(rng, dtype, N)
    np.save("a.npy", data)
    if leaf is not None:
        with momenta.open("a.npy", "r+") as w:
            w.rebuild(order, leaf=leaf, fanout=fanout)
    with momenta.open("a.npy") as a:
        assert a.dtype == np.dtype(dtype) and a.shape == (N,) and a.order == order
        assert np.array_equal(np.asarray(a), data)
        ref = Reference(data)
        ranges = random_ranges(rng, N, 20)
        for p, q in ranges:
            check_range(a, ref, p, q, order, rng)
        check_batch(a, ranges)

    # Writes through the log: runs (a[p:q] = v) and scattered updates, then the same checks.
    with momenta.open("a.npy", "r+") as w:
        for _ in range(3):
            p = int(rng.integers(0, N - 100))
            vals = make_data(rng, dtype, int(rng.integers(1, 100)))
            w[p:p + len(vals)] = vals
            ref.set(np.arange(p, p + len(vals)), vals)
            idx = rng.integers(0, N, 500)
            vals = make_data(rng, dtype, 500)
            w.update(idx, vals)
            ref.set(idx, vals)
        for p, q in random_ranges(rng, N, 10):
            check_range(w, ref, p, q, order, rng)
    with momenta.open("a.npy") as a:  # a reader sees what the writer left, replayed nothing
        for p, q in random_ranges(rng, N, 10):
            check_range(a, ref, p, q, order, rng)
        np.testing.assert_array_equal(np.asarray(a), ref.a.astype(np.dtype(dtype)))


def check_batch(a, ranges):
    """stats() over many ranges answers exactly what one call per range answers (asked the
    same way: min and max make a query read its end pieces directly, so they go apart)."""
    starts = np.array([p for p, _ in ranges])
    stops = np.array([q for _, q in ranges])
    nonempty = stops - starts >= 2  # var with ddof=1 and a line need two cells
    names = ["sum", "count", "moment", "moments"]
    got = a.stats(starts, stops, names, order=1)
    for k, (p, q) in enumerate(ranges):
        assert got["sum"][k] == a.sum(p, q)
        assert got["count"][k] == q - p
        assert got["moment"][k] == a.moment(1, p, q)
        np.testing.assert_array_equal(got["moments"][k], a.moments(1, p, q))
    got = a.stats(starts[nonempty], stops[nonempty], ["mean", "var", "std", "polyfit", "com"], ddof=1, degree=1)
    got.update(a.stats(starts[nonempty], stops[nonempty], ["min", "max"]))
    for k, (p, q) in enumerate(np.array(ranges)[nonempty]):
        p, q = int(p), int(q)
        assert got["mean"][k] == a.mean(p, q)
        assert got["var"][k] == a.var(p, q, ddof=1) and got["std"][k] == a.std(p, q, ddof=1)
        assert got["min"][k] == a.min(p, q) and got["max"][k] == a.max(p, q)
        try:
            com = a.com(p, q)
        except momenta.InvalidArgumentError:  # weights summing to 0
            com = np.nan
        assert got["com"][k] == com or (np.isnan(com) and np.isnan(got["com"][k]))
        np.testing.assert_array_equal(got["polyfit"][k], a.polyfit(1, p, q))


def test_integer_sums_exact_past_int64(rng):
    """Sums of i8/u8 arrays are exact Python ints, also in stats() where one leaves int64."""
    data = np.full(1000, np.iinfo(np.uint64).max, dtype=np.uint64)
    np.save("u.npy", data)
    with momenta.open("u.npy") as a:
        assert a.sum() == 1000 * (2**64 - 1)
        got = a.stats([0, 0], [1, 1000], ["sum", "mean"])["sum"]
        assert got.dtype == object and got[0] == 2**64 - 1 and got[1] == 1000 * (2**64 - 1)
    data = np.full(10, np.iinfo(np.int64).min, dtype=np.int64)
    np.save("i.npy", data)
    with momenta.open("i.npy") as a:
        assert a.sum(0, 10) == 10 * -(2**63)
        got = a.stats([0, 3], [1, 3], "sum")["sum"]
        assert got.dtype == np.int64 and got[0] == -(2**63) and got[1] == 0


def test_large_mean_variance(rng):
    """1e9 + N(0, 1) keeps its variance (the value moments are shifted near the mean)."""
    data = 1e9 + rng.normal(0, 1, 50000)
    np.save("a.npy", data)
    with momenta.open("a.npy") as a:
        for _ in range(20):
            p, q = sorted(int(v) for v in rng.integers(0, 50000, 2))
            if q - p < 2:
                continue
            x = data[p:q].astype(LD)
            var = np.var(x)
            assert abs(LD(a.var(p, q)) - var) <= LD(1e-9) * var, (p, q)
