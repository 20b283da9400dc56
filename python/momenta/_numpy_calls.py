"""NumPy's own functions called on momenta arrays: NumPy's ``__array_function__`` protocol.

``np.sum np.mean np.var np.std np.min np.max`` (``np.amin``, ``np.amax``) of a
:class:`momenta.Array` or a :class:`momenta.dask.ShardedArray` give NumPy's answers, with
NumPy's keywords, result types and shapes. They are answered from the buffer when the call
allows it: the whole array (``axis=None``) or the last axes (each answer over a run of the
flat index), ``keepdims``, ``ddof`` (an integer below the count), and a ``dtype`` whose sum
the buffer can give (an integer sum wraps as NumPy's does; float64, or float32 of a float32
array). Everything else — another axis, ``out=``, ``where=``, ``initial=``, an empty
reduction, a narrower accumulator, an int64 min or max beyond 2^53 — is NumPy's own
function over the read-only memmap of a momenta.Array (it reads what it reduces), and is
refused, naming the keyword, for a ShardedArray (its elements are on the workers).

Every other NumPy function sees a momenta.Array as its memmap, as before this protocol, and
refuses a ShardedArray (NumPy's TypeError naming the type).
"""

import inspect
import math
import operator
import warnings

import numpy as np

from ._errors import InvalidArgumentError

_NAMES = {np.sum: "sum", np.mean: "mean", np.var: "var", np.std: "std", np.amin: "min", np.amax: "max"}
if hasattr(np, "min"):  # NumPy 2 has np.min apart from np.amin
    _NAMES.setdefault(np.min, "min")
    _NAMES.setdefault(np.max, "max")
_SIGNATURES = {f: inspect.signature(f) for f in _NAMES}
_NO_VALUE = getattr(np, "_NoValue", None)
_EXACT_FLOAT = 2 ** 53  # float64 holds every integer below it


class Unsupported(Exception):
    """A call the buffer cannot answer; the message says why."""


def array_function(a, func, args, kwargs, memmap_of):
    """NumPy's `func(*args, **kwargs)` where `a` is an argument. `memmap_of(x)`: the
    momenta.Array x as its memmap, or None where there is none (a ShardedArray)."""
    if func in _NAMES:
        try:
            return _reduce(a, func, args, kwargs)
        except Unsupported as why:
            if memmap_of(a) is None:
                raise InvalidArgumentError(f"np.{_NAMES[func]} of a {type(a).__name__}: {why}; a sharded array "
                                           "answers from its shards' buffers only (to_dask_array() has NumPy's "
                                           "full semantics)") from None
    new_args, new_kwargs = _replace(args, memmap_of), _replace(kwargs, memmap_of)
    if new_args is args and new_kwargs is kwargs:  # nothing to see as a memmap
        return NotImplemented
    return func(*new_args, **new_kwargs)


def _replace(x, memmap_of):
    """`x` with every momenta array in it (arguments, sequences of them) as its memmap;
    `x` itself when none is."""
    if isinstance(x, (list, tuple)):
        items = [_replace(v, memmap_of) for v in x]
        if all(v is w for v, w in zip(items, x)):
            return x
        return type(x)(items) if isinstance(x, list) or type(x) is tuple else x
    if isinstance(x, dict):
        items = {k: _replace(v, memmap_of) for k, v in x.items()}
        return x if all(items[k] is x[k] for k in x) else items
    view = memmap_of(x) if hasattr(x, "__array_function__") and not isinstance(x, np.ndarray) else None
    return x if view is None else view


def _given(bound, name, default):
    """A keyword's value, `default` when it was not given (or given as NumPy's "no value")."""
    v = bound.get(name, default)
    return default if v is _NO_VALUE else v


def _reduce(a, func, args, kwargs):
    name = _NAMES[func]
    try:
        bound = _SIGNATURES[func].bind(*args, **kwargs).arguments
    except TypeError as e:
        raise Unsupported(str(e)) from None  # NumPy's own call names it
    if bound.get("a") is not a:
        raise Unsupported("the array reduced is not the momenta array")
    for k, v in bound.items():
        if k in ("a", "axis", "dtype", "keepdims", "ddof") or v is _NO_VALUE:
            continue
        if (k == "out" and v is None) or (k == "where" and v is True):
            continue
        raise Unsupported(f"{k}= is not answered from the buffer")
    keepdims = bool(_given(bound, "keepdims", False))
    ddof = _given(bound, "ddof", 0)
    numpy_args = {k: _given(bound, k, None) for k in ("axis", "dtype") if k in bound}
    if name in ("var", "std"):
        numpy_args["ddof"] = ddof
    result = _numpy_result_dtype(func, a, numpy_args)  # NumPy's errors for a bad axis or dtype
    axes = _axes(bound.get("axis"), a.ndim)
    reduced = math.prod(a.shape[d] for d in axes)
    if reduced == 0 or a.size == 0:
        raise Unsupported("an empty reduction")
    if axes != tuple(range(a.ndim - len(axes), a.ndim)):
        raise Unsupported(f"axis={bound.get('axis')!r} of shape {a.shape}: each answer is not a run of the "
                          "flat index (the buffer answers axis=None and the last axes)")
    extra = {}
    if name in ("var", "std"):
        try:
            ddof = operator.index(ddof)
        except TypeError:
            raise Unsupported(f"ddof={ddof!r} is not an integer") from None
        if not 0 <= ddof < reduced:
            raise Unsupported(f"ddof={ddof} of {reduced} elements")
        extra["ddof"] = ddof
    _check_accumulator(name, a.dtype, result)
    value = getattr(a, name)(None, axis=None if len(axes) == a.ndim else axes, **extra)
    out = _as_numpy(name, value, a.dtype, result)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else n for d, n in enumerate(a.shape)))
    return out[()] if out.ndim == 0 else out  # a NumPy scalar, as NumPy gives a 0-d answer


def _numpy_result_dtype(func, a, numpy_args):
    """The dtype NumPy's `func` gives for `a`'s dtype and these keywords (a probe on one
    element of `a`'s number of dimensions), raising NumPy's error for a bad axis or dtype."""
    probe = np.zeros((1,) * a.ndim, dtype=a.dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(func(probe, **numpy_args)).dtype


def _axes(axis, ndim):
    """The reduced axes, non-negative and sorted (NumPy's probe has checked them)."""
    if axis is None or axis is _NO_VALUE:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(operator.index(d) % ndim for d in axes)) if ndim else ()


def _check_accumulator(name, source, result):
    """Refuses (Unsupported) a result dtype the buffer's answer cannot be NumPy's in: NumPy
    accumulates in `result`; the buffer's exact integer sums wrap to any integer type as
    NumPy's do, its float answers round to float64, or to float32 for a float32 array."""
    if name in ("min", "max"):
        return
    if name == "sum" and result.kind in "iu":
        if source.kind not in "iu":
            raise Unsupported(f"a {source} array summed as {result} (each element truncated first)")
        return
    if result == np.float64 or (result == np.float32 and source == np.float32):
        return
    raise Unsupported(f"dtype={result} of a {source} array (NumPy rounds each element to it first)")


def _as_numpy(name, value, source, result):
    """The buffer's answer (a Python number or an array of them) as NumPy's: `result`'s dtype,
    an integer sum wrapped as NumPy's fixed-width sum wraps."""
    v = np.asarray(value)
    if name == "sum" and result.kind in "iu":
        if v.dtype == object:
            v = np.array([_wrap(int(x), result) for x in v.reshape(-1)], dtype=result).reshape(v.shape)
        else:
            v = v.astype(np.int64, copy=False).astype(result)  # two's complement: the low bits
        return v
    if name in ("min", "max") and source.kind in "iu":
        if source.itemsize == 8 and np.any(np.abs(v) >= _EXACT_FLOAT):
            raise Unsupported(f"an {source} {name} beyond 2^53 (the buffer answers it as a float64)")
    return v.astype(result)


def _wrap(v, dtype):
    """The exact integer `v` as NumPy's `dtype` holds it after a fixed-width sum."""
    bits = 8 * dtype.itemsize
    v &= (1 << bits) - 1
    if dtype.kind == "i" and v >> (bits - 1):
        v -= 1 << bits
    return v
