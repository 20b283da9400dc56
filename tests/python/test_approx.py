"""Array.sum(p, q, approx=True) and Array.mean(..., approx=True): an Approx whose interval
holds the exact answer (np.sum in long double; exact ints for integer arrays) on adversarial
and random data, read from the buffer alone (the array's cells changed behind the buffer's
back, modification time kept, do not change it), with NaN flagged and bad calls refused."""

import math
import os
from fractions import Fraction

import numpy as np
import pytest

import momenta

pytestmark = pytest.mark.filterwarnings("ignore::momenta.Notice")  # the first open builds the buffer


def _build(path, data):
    np.save(path, data)
    with momenta.open(path, "r+") as a:
        a.rebuild(order=2, leaf=64, fanout=4, ram_budget=1024)
    return momenta.open(path)


def _exact_sum(data, p, q):
    part = data[p:q]
    if part.dtype.kind in "iu":
        return sum(int(v) for v in part)
    with np.errstate(invalid="ignore"):  # inf − inf: NaN, as np.sum says
        return np.sum(part.astype(np.longdouble))


def _holds(approx, exact):
    if isinstance(exact, int):
        return approx.lower <= exact <= approx.upper
    if np.isnan(exact):
        return approx.nan != "no"
    return approx.nan != "certain" and np.longdouble(approx.lower) <= exact <= np.longdouble(approx.upper)


@pytest.mark.parametrize("kind", ["alternating", "spike", "negative", "nan_inf", "i8", "u1", "random"])
def test_interval_holds_the_exact_answer(tmp_path, rng, kind):
    n = 5000
    if kind == "alternating":
        data = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * (1e6 + np.arange(n) % 7)
    elif kind == "spike":
        data = rng.normal(0, 1, n)
        data[64 * 5 + 17] = 1e300
    elif kind == "negative":
        data = -rng.uniform(1, 2, n) * 1e6
    elif kind == "nan_inf":
        data = rng.normal(3, 100, n)
        pick = rng.integers(0, n, 12)
        data[pick[:4]], data[pick[4:8]], data[pick[8:]] = np.nan, np.inf, -np.inf
    elif kind == "i8":
        data = rng.integers(-2**62, 2**62, n, dtype=np.int64)
    elif kind == "u1":
        data = rng.integers(0, 256, n, dtype=np.uint8)
    else:
        data = rng.normal(rng.uniform(-1e3, 1e3), 10 ** rng.uniform(-3, 3), n)
    a = _build(str(tmp_path / "a.npy"), data)
    ranges = [(0, n), (3, 61), (64, 128), (330, 1340), (337, 338)]
    ranges += [tuple(sorted(rng.integers(0, n + 1, 2))) for _ in range(200)]
    for p, q in ranges:
        p, q = int(p), int(q)
        s = a.sum(p, q, approx=True)
        assert isinstance(s, momenta.Approx)
        exact = _exact_sum(data, p, q)
        assert _holds(s, exact), (p, q, s, exact)
        if s.nan != "certain":
            assert s.lower <= s.estimate <= s.upper
        if q > p:
            m = a.mean(p, q, approx=True)
            if isinstance(exact, int):  # compared exactly, as fractions
                assert Fraction(m.lower) <= Fraction(exact, q - p) <= Fraction(m.upper), (p, q, m, exact)
            else:
                assert _holds(m, exact / np.longdouble(q - p)), (p, q, m, exact)


def test_integer_sums_are_ints(tmp_path):
    data = np.arange(10_000, dtype=np.int64) * (2**40)
    a = _build(str(tmp_path / "i.npy"), data)
    s = a.sum(100, 9000, approx=True)
    assert isinstance(s.lower, int) and isinstance(s.upper, int) and isinstance(s.estimate, int)
    assert s.lower <= sum(int(v) for v in data[100:9000]) <= s.upper
    aligned = a.sum(64, 64 * 100, approx=True)  # whole leaves: decided by the nodes
    assert aligned.exact and aligned.lower == aligned.upper == sum(int(v) for v in data[64:6400])


def test_nan_is_flagged(tmp_path):
    data = np.ones(1000)
    data[500] = np.nan
    a = _build(str(tmp_path / "n.npy"), data)
    certain = a.sum(100, 900, approx=True)  # the NaN's leaf (7: 448..511) lies whole inside
    assert certain.nan == "certain" and math.isnan(certain.estimate)
    maybe = a.sum(100, 470, approx=True)    # ends in the NaN's leaf
    assert maybe.nan == "maybe"
    assert a.sum(100, 200, approx=True).nan == "no"


def test_reads_no_array_cell(tmp_path):
    """The cells of an end leaf change behind the buffer's back (modification time put back, so
    the buffer is taken as current): approx answers as before; the ordinary sum sees it."""
    path = str(tmp_path / "a.npy")
    data = np.arange(4000, dtype=np.float64)
    a = _build(path, data)
    before = a.sum(1000, 3000, approx=True)
    plain_before = a.sum(1000, 3000)
    a.close()
    st = os.stat(path)
    raw = np.load(path, mmap_mode="r+")
    raw[1000:1005] = 1e9  # in the first, partial leaf of the range (960..1023)
    raw.flush()
    del raw
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    a = momenta.open(path)
    assert a.sum(1000, 3000, approx=True) == before
    assert a.sum(1000, 3000) != plain_before, "the ordinary sum did not see the change: the check proves nothing"


def test_refusals(tmp_path):
    a = _build(str(tmp_path / "a.npy"), np.ones(100))
    with pytest.raises(momenta.InvalidArgumentError, match="approx"):
        a.sum(0, 10, approx=True, skipna=True)
    with pytest.raises(momenta.OutOfRangeError):
        a.sum(0, 1000, approx=True)
    with pytest.raises(momenta.InvalidArgumentError, match="empty"):
        a.mean(5, 5, approx=True)


def test_damaged_node_is_rebuilt(tmp_path):
    """A leaf of the tree file damaged: approx rebuilds the buffer (a Notice) and answers."""
    path = str(tmp_path / "d.npy")
    data = np.arange(100_000, dtype=np.float64)
    np.save(path, data)
    with pytest.warns(momenta.Notice):
        momenta.open(path).close()  # builds the default buffer: leaves of 16384 cells, order 2
    with open(path + ".momenta/tree", "r+b") as f:
        f.seek(4096 + 3 * (2 * 2 + 20) * 8 + 8)
        f.write(b"AAAAAAAA")
    a = momenta.open(path)
    with pytest.warns(momenta.Notice, match="rebuilding"):
        s = a.sum(41000, 80000, approx=True)
    assert s.lower <= sum(range(41000, 80000)) <= s.upper
