"""NumPy index expressions resolved to runs of the flat (C-order) index.

momenta answers statistics over half-open runs [p, q) of an array's flat index. An N-D
selection such as ``np.s_[5, 1000:2000]`` of a (channels, time) array is such a run; a box
such as ``np.s_[0:8, 1000:2000]`` is one run per row, which a statistic answers with
``axis=`` (one answer per row). Writes may also select strided boxes, index arrays and
masks: `flat_indices` gives their flat indices.

Errors are momenta's: OutOfRangeError for an index past an axis (as NumPy's IndexError),
InvalidArgumentError for an expression that is not a run (with the way out).
"""

import operator

import numpy as np

from ._errors import InvalidArgumentError, OutOfRangeError


def key_text(key):
    """`key` as NumPy code writes it: [5, 1000:2000], [..., ::2]."""
    def part(k):
        if isinstance(k, slice):
            text = ("" if k.start is None else str(k.start)) + ":" + ("" if k.stop is None else str(k.stop))
            return text + ("" if k.step is None else ":" + str(k.step))
        if k is Ellipsis:
            return "..."
        return repr(k)
    parts = key if isinstance(key, tuple) else (key,)
    text = "[" + ", ".join(part(k) for k in parts) + "]"
    return text if len(text) <= 120 else text[:117] + "...]"


def _strides(shape):
    """Elements between consecutive indices of each axis (C order)."""
    out = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * shape[d + 1]
    return out


def _as_index(x):
    """x as a Python int if it is an integer (int, NumPy integer, anything with __index__)."""
    if isinstance(x, (bool, np.bool_)):
        return None  # a boolean is a mask, not an index (NumPy agrees)
    try:
        return operator.index(x)
    except TypeError:
        return None


def range_problem(b, e, n):
    """Why [b, e) (sides already counted from the end) is no range of n elements, in the
    words of ``momenta query --range`` ("P > Q (500 > 100)", "Q = 2000 is past its end");
    "" when it is one."""
    if b < 0:
        return f"P = {b - n} reaches before its start"
    if e < 0:
        return f"Q = {e - n} reaches before its start"
    if b > n:
        return f"P = {b} is past its end"
    if e > n:
        return f"Q = {e} is past its end"
    if b > e:
        return f"P > Q ({b} > {e})"
    return ""


def flat_range(p, q, n):
    """[p, q) of a flat index of length n, sides counted from the end when negative (as
    ``momenta query --range P:Q``); p None is 0, q None is n. Unlike a NumPy slice (and like
    the CLI's ranges) it is never clipped or emptied: a side past either end and p > q are an
    OutOfRangeError saying which, as a statistic of another range than the one asked would
    be a wrong answer given silently."""
    b = 0 if p is None else _as_index(p)
    e = n if q is None else _as_index(q)
    if b is None or e is None:
        raise InvalidArgumentError(f"range: the sides must be integers, got {p!r}:{q!r}")
    b0, e0 = b, e
    if b < 0:
        b += n
    if e < 0:
        e += n
    if not (0 <= b <= e <= n):
        raise OutOfRangeError(f"range {b0}:{e0} is not a range of the array (length {n}): {range_problem(b, e, n)}")
    return b, e


def _axes(key, shape, allow_steps):
    """Per axis of `shape`: (start, stop, step, dropped) for a basic index expression
    (integers, slices, Ellipsis); stop is clamped so that len(range(start, stop, step)) is
    the extent. None when `key` is not a basic index expression."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is None for k in key):
        raise InvalidArgumentError("index: np.newaxis (None) adds no elements to select; leave it out")
    ellipses = sum(1 for k in key if k is Ellipsis)
    if ellipses > 1:
        raise InvalidArgumentError("index: an index can only have a single ellipsis ('...')")
    for k in key:
        if k is not Ellipsis and not isinstance(k, slice) and _as_index(k) is None:
            return None  # an array, a mask, a list: not basic
    if ellipses:
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        fill = len(shape) - (len(key) - 1)
        key = key[:at] + (slice(None),) * max(fill, 0) + key[at + 1:]
    if len(key) > len(shape):
        raise OutOfRangeError(f"index: too many indices for an array of {len(shape)} dimensions: {len(key)} were given")
    key = key + (slice(None),) * (len(shape) - len(key))
    axes = []
    for d, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if part is not None and _as_index(part) is None:
                    raise InvalidArgumentError(f"index: slice parts must be integers or None, got {k!r}")
            start, stop, step = k.indices(n)
            if step != 1 and not allow_steps:
                raise InvalidArgumentError(
                    f"index: the slice {k.start}:{k.stop}:{k.step} of axis {d} has step {step}; statistics "
                    "are over runs of consecutive elements (step 1)")
            stop = start + len(range(start, stop, step)) * step
            axes.append((start, stop, step, False))
        else:
            i = _as_index(k)
            if not -n <= i < n:
                raise OutOfRangeError(f"index {i} is out of bounds for axis {d} with size {n}")
            i = i + n if i < 0 else i
            axes.append((i, i + 1, 1, True))
    return axes


def _extent(a):
    start, stop, step, _ = a
    return len(range(start, stop, step))


def _run_of_box(axes, shape, strides):
    """(p, q) of the box `axes` (steps 1) if its elements are one run of the flat index,
    else None. An empty box is the empty run at its first corner."""
    ext = [_extent(a) for a in axes]
    first = sum(a[0] * s for a, s in zip(axes, strides))
    if any(e == 0 for e in ext):
        total = 1
        for n in shape:
            total *= n
        first = min(first, total)
        return first, first
    partial = [d for d, (e, n) in enumerate(zip(ext, shape)) if e != n]
    if partial and any(ext[d] != 1 for d in range(partial[-1])):
        return None
    count = 1
    for e in ext:
        count *= e
    return first, first + count


def run_of(key, shape, with_shape=False):
    """(p, q): the run of the flat index that `key` selects from an array of `shape` (and,
    `with_shape`, the selection's shape: (p, q, shape)). InvalidArgumentError when the
    selection is not one run (naming axis= as the way to ask for one answer per row)."""
    axes = _axes(key, shape, allow_steps=False)
    if axes is None:
        raise InvalidArgumentError(
            "index: statistics take integers, slices and '...' (a run of the flat index), not index arrays "
            f"or masks: {key_text(key)}")
    run = _run_of_box(axes, shape, _strides(shape))
    if run is None:
        raise InvalidArgumentError(
            f"index: {key_text(key)} selects several runs of the flat index; give axis= to answer each row "
            "(e.g. axis=-1), or a range that is one run")
    if with_shape:
        return run + (tuple(_extent(a) for a in axes if not a[3]),)
    return run


def runs_of(key, shape, axis):
    """(starts, stops, out_shape): for a box `key` and the reduced axes `axis` (an int or a
    tuple, counted over the selection's dimensions as NumPy's axis=), one run per element of
    the other, leading, axes: int64 arrays of shape out_shape."""
    axes = _axes(key, shape, allow_steps=False)
    if axes is None:
        raise InvalidArgumentError(f"index: axis= takes integers, slices and '...', not index arrays: {key_text(key)}")
    kept = [d for d, a in enumerate(axes) if not a[3]]  # the selection's dimensions
    r = len(kept)
    wanted = axis if isinstance(axis, tuple) else (axis,)
    reduced = set()
    for ax in wanted:
        i = _as_index(ax)
        if i is None or not -r <= i < r:
            raise OutOfRangeError(f"axis {ax!r} is out of bounds for a selection of {r} dimensions")
        reduced.add(i + r if i < 0 else i)
    m = len(reduced)
    if reduced != set(range(r - m, r)):
        raise InvalidArgumentError(
            f"axis={axis!r}: the reduced axes must be the last ones of the selection (each answer is over a "
            "run of the flat index)")
    strides = _strides(shape)
    lead = kept[: r - m]
    first_reduced = kept[r - m] if m else len(shape)
    # The run of one row: the box from the first reduced axis on (leading axes at their start).
    tail = [(a if d >= first_reduced else (a[0], a[0] + 1, 1, True)) for d, a in enumerate(axes)]
    out_shape = tuple(_extent(axes[d]) for d in lead)
    if 0 in out_shape:  # no rows: nothing to answer (NumPy gives an empty array too)
        empty = np.zeros(out_shape, dtype=np.int64)
        return empty, empty, out_shape
    run = _run_of_box(tail, shape, strides)
    if run is None:
        raise InvalidArgumentError(
            f"axis={axis!r}: each row of {key_text(key)} along the reduced axes is not a run of the flat index")
    p, q = run
    length = q - p
    starts = np.full(out_shape, p, dtype=np.int64)
    for j, d in enumerate(lead):
        view = [1] * len(lead)
        view[j] = out_shape[j]
        starts = starts + (np.arange(out_shape[j], dtype=np.int64) * strides[d]).reshape(view)
    return starts, starts + length, out_shape


def flat_indices(key, shape):
    """The flat indices `key` selects from an array of `shape`, as an int64 array of the
    selection's shape (what an assignment a[key] = v changes): basic expressions with any
    step, an integer array or list (axis 0 of a 1-d array), a tuple of integer arrays (one
    per axis), a boolean mask of the array's shape."""
    strides = _strides(shape)
    axes = _axes(key, shape, allow_steps=True)
    if axes is not None:
        out = np.zeros((), dtype=np.int64)
        for d, a in enumerate(axes):
            if a[3]:  # an integer index: a fixed offset, no dimension
                out = out + a[0] * strides[d]
            else:
                out = out[..., None] + np.arange(a[0], a[1], a[2], dtype=np.int64) * strides[d]
        return out
    arrays = key if isinstance(key, tuple) else (key,)
    arrays = [np.asarray(k) for k in arrays]
    if len(arrays) == 1 and arrays[0].dtype == np.bool_:
        mask = arrays[0]
        if mask.shape != tuple(shape):
            raise OutOfRangeError(f"index: a boolean mask of shape {mask.shape} for an array of shape {tuple(shape)}")
        return np.flatnonzero(mask).astype(np.int64)
    if any(a.dtype.kind not in "iu" for a in arrays):
        raise InvalidArgumentError(f"index: not an index NumPy-style assignment takes here: {key_text(key)}")
    if len(arrays) != len(shape):
        raise InvalidArgumentError(
            f"index: index arrays must be given for every axis ({len(shape)}), got {len(arrays)}")
    fixed = []
    for d, (a, n) in enumerate(zip(arrays, shape)):
        a = a.astype(np.int64)
        bad = (a < -n) | (a >= n)
        if bad.any():
            raise OutOfRangeError(f"index {int(a[bad].flat[0])} is out of bounds for axis {d} with size {n}")
        fixed.append(np.where(a < 0, a + n, a))
    fixed = np.broadcast_arrays(*fixed)
    out = np.zeros(fixed[0].shape, dtype=np.int64)
    for a, s in zip(fixed, strides):
        out += a * s
    return out
