"""NumPy's own functions on a momenta.Array: np.sum np.mean np.std np.var np.min np.max with
NumPy's keywords give NumPy's answers — the same type, dtype and shape, the same value (exact
for integers, min and max; floats to rounding) — for several dtypes and shapes, against NumPy
on the same data in memory. The calls the buffer can answer read no element; the others go
through the memmap; every other NumPy function sees the memmap as before."""

import warnings

import numpy as np
import pytest

import momenta

pytestmark = pytest.mark.filterwarnings("ignore::momenta.Notice")  # the buffers built on first open

FUNCS = (np.sum, np.mean, np.std, np.var, np.min, np.max)
SHAPES = ((), (1000,), (6, 50), (3, 4, 25))


def data(rng, dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.normal(1e3, 50, shape).astype(dt)
    info = np.iinfo(dt)
    if dt.itemsize == 8:  # big enough that NumPy's int64 sum wraps
        lo = max(info.min, 0) if dt.kind == "u" else info.min // 4
        return rng.integers(lo, info.max, shape, dtype=dt, endpoint=True)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


def same(got, want, dtype, what):
    """got is NumPy's answer `want`: its type, dtype and shape, and its value (exact for
    integers; floats to the rounding of NumPy's accumulator)."""
    assert type(got) is type(want), f"{what}: {type(got)} vs {type(want)}"
    assert np.asarray(got).dtype == np.asarray(want).dtype, f"{what}: {np.asarray(got).dtype} vs {want.dtype}"
    assert np.shape(got) == np.shape(want), f"{what}: shape {np.shape(got)} vs {np.shape(want)}"
    if np.asarray(want).dtype.kind in "iu":
        assert np.array_equal(got, want), f"{what}: {got} vs {want}"
    else:
        rtol = 2e-5 if np.asarray(want).dtype == np.float32 else 1e-9
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True, err_msg=what)


def calls(ndim, func):
    """Keyword sets NumPy users pass, for an array of `ndim` dimensions."""
    out = [{}, {"axis": None}, {"keepdims": True}]
    if ndim > 0:
        out += [{"axis": -1}, {"axis": ndim - 1, "keepdims": True}]
    if ndim > 1:
        out += [{"axis": 0}, {"axis": (ndim - 2, ndim - 1)}, {"axis": tuple(range(ndim))}]
    if func in (np.std, np.var) and ndim > 0:
        out += [{"ddof": 1}, {"ddof": 1, "axis": -1}]
    if func is np.sum:
        out += [{"dtype": np.float64}, {"dtype": np.int8}, {"dtype": np.uint64, "axis": -1 if ndim else None},
                {"dtype": np.float32}]
    if func is np.mean:
        out += [{"dtype": np.float64}, {"dtype": np.float32, "axis": -1 if ndim else None}]
    return out


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "u8", "i4", "i2", "u1"])
def test_numpy_functions_give_numpys_answers(rng, dtype):
    for shape in SHAPES:
        x = data(rng, dtype, shape)
        np.save("a.npy", x)
        with momenta.open("a.npy") as a:
            for func in FUNCS:
                for kw in calls(len(shape), func):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)  # float32 sums overflowing, as NumPy's
                        want = func(x, **kw)
                        got = func(a, **kw)
                    same(got, want, dtype, f"np.{func.__name__}({dtype}{shape}, {kw})")


def test_the_buffer_answers_without_reading_an_element(rng, monkeypatch):
    x = rng.normal(size=(8, 200))
    np.save("a.npy", x)
    a = momenta.open("a.npy")

    def no_read(*args):
        raise AssertionError("read the elements")
    monkeypatch.setattr(momenta.Array, "numpy", no_read)
    for func in FUNCS:
        same(func(a), func(x), "f8", f"np.{func.__name__}")
        same(func(a, axis=-1, keepdims=True), func(x, axis=-1, keepdims=True), "f8", f"np.{func.__name__} axis=-1")
    same(np.std(a, ddof=1), np.std(x, ddof=1), "f8", "np.std ddof=1")
    with pytest.raises(AssertionError, match="read the elements"):  # axis=0 is not a run of the flat index
        np.sum(a, axis=0)


def test_calls_the_buffer_cannot_answer_go_through_the_memmap(rng):
    x = rng.normal(size=(5, 40))
    x[1, 3] = np.nan
    x[2, 7] = np.inf
    np.save("a.npy", x)
    a = momenta.open("a.npy")
    out = np.zeros(40)
    assert np.sum(a, axis=0, out=out) is out
    np.testing.assert_array_equal(out, np.sum(x, axis=0))
    mask = x > 0
    for func in FUNCS:
        same(func(a), func(x), "f8", f"np.{func.__name__} with NaN and inf")  # NaN, as NumPy
        same(func(a, where=mask, **({} if func in (np.sum, np.mean, np.std, np.var) else {"initial": -1e9}
                                    if func is np.max else {"initial": 1e9})),
             func(x, where=mask, **({} if func in (np.sum, np.mean, np.std, np.var) else {"initial": -1e9}
                                    if func is np.max else {"initial": 1e9})), "f8", f"np.{func.__name__} where=")
    same(np.sum(a, initial=5.0), np.sum(x, initial=5.0), "f8", "np.sum initial=")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(np.var(a, ddof=200), np.var(x, ddof=200), "f8", "np.var ddof >= n")
        same(np.std(a, ddof=0.5), np.std(x, ddof=0.5), "f8", "np.std ddof=0.5")
        same(np.mean(a, axis=()), np.mean(x, axis=()), "f8", "np.mean axis=()")
    f = rng.normal(size=30) * 1e3
    np.save("f.npy", f)
    b = momenta.open("f.npy")
    same(np.sum(b, dtype=np.int64), np.sum(f, dtype=np.int64), "f8", "floats summed as int64")
    np.save("e.npy", np.zeros((0, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        e = momenta.open("e.npy")
        same(np.mean(e, axis=-1), np.mean(np.zeros((0, 3)), axis=-1), "f8", "an empty reduction")
        same(np.mean(e), np.mean(np.zeros((0, 3))), "f8", "the mean of nothing")
    big = np.array([2**62, 2**62 + 1, -(2**62)], dtype=np.int64)  # min and max beyond 2^53: exact
    np.save("i.npy", big)
    c = momenta.open("i.npy")
    same(np.max(c), np.max(big), "i8", "int64 max beyond 2^53")
    same(np.min(c), np.min(big), "i8", "int64 min beyond 2^53")


def test_numpy_errors_are_numpys(rng):
    np.save("a.npy", rng.normal(size=(3, 4)))
    a = momenta.open("a.npy")
    with pytest.raises(np.AxisError):
        np.sum(a, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        np.mean(a, axis=(1, 1))
    with pytest.raises(TypeError):
        np.min(a, dtype=np.float64)  # np.min takes no dtype
    with pytest.raises(TypeError):
        np.sum(a, bogus=1)


def test_integer_sums_wrap_as_numpys_while_the_method_is_exact():
    x = np.full(8, 2**62, dtype=np.int64)  # Σ = 2^65: NumPy's int64 sum wraps to 0
    np.save("a.npy", x)
    a = momenta.open("a.npy")
    assert np.sum(a) == np.sum(x) == 0 and type(np.sum(a)) is np.int64
    assert a.sum() == 2**65
    assert np.sum(a, dtype=np.float64) == 2.0**65  # NumPy's float64 sum of the same
    assert np.mean(a) == 2.0**62 == np.mean(x)


def test_other_numpy_functions_see_the_memmap(rng):
    x = rng.normal(size=(4, 6))
    np.save("a.npy", x)
    a = momenta.open("a.npy")
    assert np.array_equal(np.concatenate([a, a]), np.concatenate([x, x]))
    assert np.median(a) == np.median(x) and np.array_equal(np.sort(a, axis=None), np.sort(x, axis=None))
    assert np.shares_memory(a, a.numpy()) and np.allclose(np.average(a, axis=0), np.average(x, axis=0))
    assert np.ptp(a) == np.ptp(x) and np.array_equal(np.cumsum(a), np.cumsum(x))
