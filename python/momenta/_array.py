"""momenta.Array: an array file with its moment buffer and update log, seen from NumPy."""

import os
import threading
from typing import NamedTuple

import numpy as np

from . import _momenta, _numpy_calls
from ._errors import InvalidArgumentError, OutOfRangeError
from ._select import flat_indices, flat_range, run_of, runs_of
from ._statistics import _MEAN, _NONE, _RMS, _STAT_CODES, _SUM, _SUMSQ, Statistics, _center, _count  # noqa: F401
_APPROX = (_SUM, _MEAN, _SUMSQ, _RMS)  # the statistics the buffer alone bounds (approx=True)
_END_STATS = ("first", "last")  # a range's end elements: read from the array, not from a summary
_IO = ("auto", "uring", "mmap", "pread")


class Approx(NamedTuple):
    """A sum or mean known from the buffer alone: the exact answer lies in [lower, upper]
    (floats rounded outward; exact ints for an integer array's sum), unless nan is "maybe"
    (the answer may also be NaN) or "certain" (it is NaN; the three numbers are NaN).
    exact: the buffer's nodes alone decide the answer (no cell of the range is unknown)."""
    estimate: float
    lower: float
    upper: float
    exact: bool = False
    nan: str = "no"


def _text(value, what):
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what}: expected a string, got {value!r}")
    return value


def _choice(value, what, choices):
    if value not in choices:
        raise InvalidArgumentError(f"{what}: {value!r} is none of {', '.join(choices)}")
    return value


def _path(path):
    try:
        return os.fsdecode(os.fspath(path))
    except TypeError:
        raise InvalidArgumentError(f"path: expected a str or os.PathLike, got {path!r}") from None


def _dtype_name(dtype):
    """The momenta name ("f8", "u1", ...) of anything numpy.dtype takes."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise InvalidArgumentError(f"dtype: {dtype!r} is not a NumPy dtype ({e})") from None
    if dt.byteorder == ">":
        raise InvalidArgumentError(f"dtype: {dt.str} is big-endian; momenta stores little-endian dtypes")
    name = f"{dt.kind}{dt.itemsize}"
    if name not in ("f8", "f4", "i8", "i4", "i2", "i1", "u8", "u4", "u2", "u1"):
        raise InvalidArgumentError(f"dtype: {dt} is not one of f8 f4 i8 i4 i2 i1 u8 u4 u2 u1")
    return name


def _shape(shape):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise InvalidArgumentError(f"shape: expected an int or a tuple of ints, got {shape!r}") from None
    out = []
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 0 or d >= 1 << 63:
            raise InvalidArgumentError(f"shape: {shape!r} is not a tuple of non-negative ints")
        out.append(int(d))
    return out


def _values(values, what="values"):
    """`values` as a 1-d int64, uint64 or float64 array (the kinds the extension takes);
    whether each fits the array's dtype is the library's check."""
    v = np.asarray(values)
    kind = v.dtype.kind
    if kind == "O":  # Python ints too large for one NumPy integer type, or not numbers
        items = list(v.flat)
        if not all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in items):
            raise InvalidArgumentError(f"{what}: expected numbers, got {values!r}"[:200])
        if all(-(1 << 63) <= x < 1 << 63 for x in items):
            v = np.array(items, dtype=np.int64).reshape(v.shape)
        elif all(0 <= x < 1 << 64 for x in items):
            v = np.array(items, dtype=np.uint64).reshape(v.shape)
        else:
            bad = next(x for x in items if not -(1 << 63) <= x < 1 << 64)
            raise InvalidArgumentError(f"{what}: value '{bad}' does not fit any 64-bit integer")
        kind = v.dtype.kind
    if kind in "b":
        v = v.astype(np.int64)
    elif kind == "i":
        v = v.astype(np.int64, copy=False)
    elif kind == "u":
        v = v.astype(np.uint64, copy=False)
    elif kind == "f":
        v = v.astype(np.float64, copy=False)
    else:
        raise InvalidArgumentError(f"{what}: expected numbers, got an array of {v.dtype}")
    return v


def _flag(value, what):
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{what}: expected True or False, got {value!r}")
    return bool(value)


def _time(time):
    """A log time in ms, or the wall clock for None."""
    if time is None:
        return _momenta.kLogTimeNow
    t = _count(time, "time", lo=-(1 << 63) + 1, hi=(1 << 63) - 1)
    return t


class Array(Statistics):
    """An array file (a NumPy ``.npy``) with its moment buffer and update log.

    Made by :func:`momenta.open` or :func:`momenta.create`. ``np.asarray(a)`` is a read-only,
    zero-copy view of the file; writes go through the log and the buffer (``a[i] = v``,
    ``a[p:q] = values``, :meth:`update`); the statistics are answered from the buffer in time
    that does not grow with the range. A read-only array may be shared by threads.

    Ranges: ``a.sum(p, q)`` with two integers is the half-open run [p, q) of the flat
    (C-order) index, either side negative counted from the end; a single argument is a NumPy
    index expression whose selection is such a run (``a.sum(np.s_[5, 1000:2000])``), or a box
    of runs with ``axis=`` (one answer per row); no argument is the whole array.
    """

    def __init__(self, handle):
        self._h = handle
        info = handle.info()
        self._path = info["path"]
        self._dtype = np.dtype(info["dtype"]).newbyteorder("<")
        self._shape = tuple(int(d) for d in info["shape"])
        self._size = int(info["length"])
        self._data_offset = int(info["data_offset"])
        self._order = int(info["order"])
        self._leaf_span = int(info["leaf_span"])
        self._writable = bool(info["writable"])
        self._sidecar = info["sidecar"]
        self._io = info["io"]
        self._view = None
        self._view_lock = threading.Lock()

    # ---- what it is ----------------------------------------------------------------

    path = property(lambda self: self._path, doc="The array file's path.")
    shape = property(lambda self: self._shape, doc="The shape, as the .npy header says.")
    dtype = property(lambda self: self._dtype, doc="The element type, a numpy.dtype.")
    size = property(lambda self: self._size, doc="Elements in all (the flat index's length).")
    ndim = property(lambda self: len(self._shape))
    nbytes = property(lambda self: self._size * self._dtype.itemsize)
    mode = property(lambda self: "r+" if self._writable else "r", doc="'r' (a reader) or 'r+' (the writer).")
    order = property(lambda self: self._order, doc="J: the buffer keeps index moments 0..J.")
    leaf_span = property(lambda self: self._leaf_span, doc="Elements per leaf of the buffer.")
    sidecar = property(lambda self: self._sidecar, doc="The folder of the buffer and the log.")
    io = property(lambda self: self._io, doc="The I/O backend in use (pread, mmap, io_uring).")
    closed = property(lambda self: self._h.closed)
    applied_sequence = property(lambda self: self._h.applied_sequence,
                                doc="The last log sequence applied to the array and the buffer.")

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    def __repr__(self):
        state = "closed" if self.closed else self.mode
        return f"<momenta.Array {self._path!r} shape={self._shape} dtype={self._dtype} mode={state}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def commit(self):
        """Makes the writes so far durable per the sync policy (sync='batch': one fdatasync
        of the log). Writes are visible to readers as soon as they return; commit() is what
        makes them survive a crash of the machine."""
        self._h.commit()

    def rebuild(self, order=None, *, ram_budget=None, leaf=None, fanout=64, disk_tier=True, buffer="hbb",
                bin=None):  # noqa: A002 (bin: the CLI's --bin)
        """Rebuilds the buffer from the array (a writer), as ``momenta build``: one pass over
        the data (holes skipped), the new buffer replacing the old atomically (readers reopen
        it). order: J (default: the buffer's), the other flags (buffer="hbb"|"ola", bin) as
        :func:`create`. Ctrl-C stops it and keeps the old buffer. Returns the bytes of data read."""
        order = _count(order, "order", 0, 8, none=self._order)
        ola, order, bin = _buffer_kind(buffer, order, bin)
        read = self._h.rebuild(order, _count(ram_budget, "ram_budget", none=0), _count(leaf, "leaf", lo=1, none=0),
                               _count(fanout, "fanout", 2, 64), _flag(disk_tier, "disk_tier"), ola, bin)
        info = self._h.info()
        self._order = int(info["order"])
        self._leaf_span = int(info["leaf_span"])
        return read

    def close(self):
        """Commits and checkpoints a writer (reopening then replays nothing), then releases
        the array. Idempotent; views from numpy() stay valid."""
        self._h.close()

    # ---- NumPy ---------------------------------------------------------------------

    def numpy(self):
        """A read-only numpy.memmap of the file's elements: no byte is copied or read until
        used, so opening a terabyte array costs no memory. It sees every write made through
        momenta (the same page cache). Do not write through it: writes must go through
        the log (a[i] = v, update)."""
        with self._view_lock:
            if self._view is None:
                if self._size == 0:
                    view = np.empty(self._shape, dtype=self._dtype)
                    view.flags.writeable = False
                else:
                    view = np.memmap(self._path, dtype=self._dtype, mode="r", offset=self._data_offset,
                                     shape=self._shape, order="C")
                self._view = view
            return self._view

    def __array__(self, dtype=None, copy=None):
        """The memmap view itself (NumPy's protocol); a copy only when asked for one, or for
        another dtype (copy=False then refuses, as NumPy 2 does)."""
        view = self.numpy()
        if copy:
            return np.array(view, dtype=dtype, copy=True)
        if dtype is not None and np.dtype(dtype) != view.dtype:
            if copy is False:
                raise InvalidArgumentError(f"{self._path}: a {dtype} array of {view.dtype} cells needs a copy")
            return view.astype(dtype)
        return view

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's functions: np.sum np.mean np.var np.std np.min np.max answered from the buffer
        where the call allows it, else (and every other function) over the memmap view; see
        momenta._numpy_calls."""
        return _numpy_calls.array_function(self, func, args, kwargs, _memmap_of)

    def __getitem__(self, key):
        """Elements read from the file, as NumPy indexes the view (a basic index gives a
        read-only view, an index array a copy)."""
        try:
            return self.numpy()[key]
        except IndexError as e:
            raise OutOfRangeError(f"{self._path}: {e}") from None
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError(f"{self._path}: {e}") from None

    # ---- writes ----------------------------------------------------------------------

    def __setitem__(self, key, value):
        """a[key] = value through the log and the buffer: a run (a[p:q], a[5, 10:20]) is one
        Write, anything else (steps, index arrays, masks) one Apply of its elements. Each
        value must fit the dtype exactly (300 into u1, 1.5 or NaN into an integer dtype are
        refused, and nothing is written)."""
        time = _momenta.kLogTimeNow
        try:
            p, q, shape = run_of(key, self._shape, with_shape=True)
        except InvalidArgumentError:
            idx = flat_indices(key, self._shape)
            vals = _broadcast(value, idx.shape)
            self._h.apply(idx.reshape(-1), vals, None, time)
            return
        self._h.write(p, _broadcast(value, shape, q - p), time)

    def write(self, first, values, time=None):
        """a.flat[first:first + len(values)] = values, stamped `time` (ms; None: now)."""
        first = _count(first, "first")
        self._h.write(first, _values(values).reshape(-1), _time(time))

    def update(self, indices, values, times=None):
        """a.flat[indices[k]] = values[k], in order (a later update of an index wins), in one
        Apply: all are checked (index in range, value fits) before any changes. `values`
        broadcasts to the indices' shape; `times` (ms since the epoch) is None for the wall
        clock, one time for all, or one per update. Negative indices count from the end."""
        idx = _flat_sides(np.asarray(indices), self._size, f"{self._path}: update: indices")
        vals = _broadcast(values, np.shape(indices))
        if times is None:
            self._h.apply(idx, vals, None, _momenta.kLogTimeNow)
        elif np.ndim(times) == 0:
            self._h.apply(idx, vals, None, _time(times))
        else:
            t = np.asarray(times)
            if t.dtype.kind not in "iu":
                raise InvalidArgumentError(f"update: times must be integers (ms), got an array of {t.dtype}")
            t = np.broadcast_to(t, np.shape(indices)).astype(np.int64).reshape(-1)
            self._h.apply(idx, vals, t, _momenta.kLogTimeNow)

    # ---- statistics ------------------------------------------------------------------

    def _stat(self, code, key, q, axis, skipna=False, ddof=0, order=-1, about=_NONE, degree=1, approx=None):
        """One statistic (Statistics): approx=True answers sum, mean, sumsq and rms from the
        buffer alone."""
        if approx is not None:
            if code not in _APPROX:
                raise TypeError(f"{_momenta.kStatNames[code]}() got an unexpected keyword argument 'approx'")
            if approx:
                return self._approx(code, _momenta.kStatNames[code], key, q, axis, skipna)
        skipna = bool(skipna)
        if axis is None and type(key) is int and type(q) is int:
            try:  # the fast path: a flat range, nothing to resolve
                return self._h.stat(code, key, q, skipna, ddof, order, about, degree)
            except TypeError:
                pass  # an int outside int64: flat_range names it
        if axis is None:
            p, q = self._flat(key, q)
            return self._h.stat(code, p, q, skipna, ddof, order, about, degree)
        starts, stops, out_shape = runs_of(Ellipsis if key is None else key, self._shape, axis)
        if q is not None:
            raise InvalidArgumentError("axis= takes one index expression, not a flat range p, q")
        if out_shape == ():
            return self._h.stat(code, int(starts), int(stops), skipna, ddof, order, about, degree)
        (out,) = self._h.stats(starts.reshape(-1), stops.reshape(-1), [code], skipna, ddof, order, about, degree,
                               False)
        return out.reshape(out_shape + out.shape[1:])

    def _approx(self, code, what, p, q, axis, skipna):
        if axis is not None or skipna:
            raise InvalidArgumentError(f"{what}: approx=True answers a flat range p, q (no axis=, no skipna)")
        p, q = self._flat(p, q)
        return Approx(*self._h.approx(code, p, q))

    def _flat(self, key, q):
        """The flat range [p, q) that (key, q) names: two sides (negative from the end), the
        whole array (None), or one index expression that selects a run of the flat index."""
        if q is not None:
            return flat_range(key, q, self._size)
        if key is None:
            return 0, self._size
        return run_of(key, self._shape)

    # ---- summaries -------------------------------------------------------------------

    def summary(self, p=None, q=None, *, extremes=True, as_of=None):
        """The range summary of [p, q) (ranges as the statistics take them, without axis=): a
        small picklable :class:`momenta.Summary` placed at p, not the elements. Summaries of
        adjacent ranges merge with :func:`momenta.merge_summaries` into the summary of their
        union, from which :func:`momenta.summary_stat` answers every statistic as this array
        would. A range of whole leaves (the whole array included) reads no element.
        extremes=False skips what min and max need (the end pieces' direct reads).
        as_of=T (ms): the range as it stood once every update stamped at or before T had been
        applied and none after, rebuilt from the update log (buffers/summarize_as_of.h: the
        elements updated since put back; refused where the log no longer reaches T or its
        times go back)."""
        if q is not None:
            p, q = flat_range(p, q, self._size)
        elif p is None:
            p, q = 0, self._size
        else:
            p, q = run_of(p, self._shape)
        if as_of is not None:
            return self._h.summary_as_of(p, q, _flag(extremes, "extremes"), _time(as_of))
        return self._h.summary(p, q, _flag(extremes, "extremes"))

    # ---- many at once ----------------------------------------------------------------

    def stats(self, starts, stops, stats=("mean",), *, skipna=False, ddof=0, order=None, about=None, degree=1):
        """Each statistic of `stats` over every range [starts[k], stops[k]) of the flat index
        (sides negative counted from the end), in one batch: reads of up to 256 ranges go out
        together at depth. Returns {name: array}: float64 of the ranges' shape, with a last
        axis of K+1 for moments and D+1 for polyfit; int64 for count and for the sum of an
        integer array (an object array of exact ints if a sum is outside int64).
        `order` is moment's k (default 1) and moments' K (default J). "first" and "last" are
        each range's end elements, in the array's dtype (an empty range is an error)."""
        names, codes, skipna, ddof, order, about, degree = _batch_params(stats, skipna, ddof, order, about, degree)
        b, e, shape = _batch_sides(starts, stops, self._size)
        answers = self._answer_bins(b, e, names, codes, skipna, ddof, order, about, degree, False)
        return {n: answers[n].reshape(shape + answers[n].shape[1:]) for n in names}

    def overview(self, p, q, bins=None, stats=("mean", "min", "max"), *, bin_size=None, snap=False, skipna=False,
                 ddof=0, order=None, about=None, degree=1):
        """[p, q) in `bins` equal bins (edges p + ⌊i·(q − p)/bins⌋, 1 <= bins <= q − p), each
        answered, as ``momenta query --range P:Q --bins K``: {"start", "stop", name: array}.
        bin_size=N instead of bins: bins of N elements from p, the last one shorter when N does
        not divide q − p (``--bin-size N``; frames of a fixed length).
        snap=True moves each edge to the nearest leaf boundary (ties down), so no element is
        read; "asked_start"/"asked_stop" are then the bins before snapping, and a bin that
        snapping emptied answers NaN where a statistic needs a count.
        "first" and "last" are each bin's first and last element (with min and max, the M4
        lines that draw a bin exactly at one pixel per bin), read from the array: two
        elements per bin, never a scan; an array of the array's dtype (float64 with NaN where
        snapping emptied a bin)."""
        edges = _bin_edges(p, q, bins, self._size, bin_size)
        names, codes, skipna, ddof, order, about, degree = _batch_params(stats, skipna, ddof, order, about, degree)
        asked = edges
        if snap:
            s = self._leaf_span
            below = edges // s * s
            above = np.minimum(below + s, self._size)
            edges = np.where(above - edges < edges - below, above, below)
        starts, stops = edges[:-1].copy(), edges[1:].copy()
        answers = self._answer_bins(starts, stops, names, codes, skipna, ddof, order, about, degree, snap)
        result = {"start": starts, "stop": stops}
        if snap:
            result["asked_start"] = asked[:-1].copy()
            result["asked_stop"] = asked[1:].copy()
        result.update((name, answers[name]) for name in names)
        return result

    def _answer_bins(self, starts, stops, names, codes, skipna, ddof, order, about, degree, empty_nan):
        """{name: array} over the ranges [starts[k], stops[k]): the summaries' statistics in one
        batch, first and last from the ranges' end elements."""
        summarized = [(n, c) for n, c in zip(names, codes) if n not in _END_STATS]
        outs = self._h.stats(starts, stops, [c for _, c in summarized], skipna, ddof, order, about, degree,
                             empty_nan) if summarized else []
        answers = dict(zip([n for n, _ in summarized], outs))
        for name in names:
            if name in _END_STATS:
                answers[name] = self._end_elements(starts, stops, name == "first", empty_nan)
        return answers

    def _end_elements(self, starts, stops, first, empty_nan=True):
        """Each range's first (or last) element, read through the memmap view: one element per
        range. An empty range (snapping emptied a bin) gives NaN with empty_nan, the answers then
        float64; without, it is an error naming the range."""
        flat = self.numpy().reshape(-1)
        full = stops > starts
        at = np.where(full, starts if first else stops - 1, 0)
        values = flat[at] if flat.size else np.zeros(at.shape, dtype=flat.dtype)
        if full.all():
            return np.asarray(values)
        if not empty_nan:
            k = int(np.argmin(full))
            raise InvalidArgumentError(f"{'first' if first else 'last'}: the range {starts[k]}:{stops[k]} is empty")
        return np.where(full, values.astype(np.float64), np.nan)


def _memmap_of(x):
    """The memmap view of a momenta.Array, None for anything else."""
    return x.numpy() if isinstance(x, Array) else None


def _batch_params(names, skipna, ddof, order, about, degree, skipna_of=bool):
    """A batch's statistics (a name or a list of names) as their codes, and its options
    checked: (names, codes, skipna, ddof, order, about, degree); skipna through `skipna_of`."""
    if isinstance(names, str):
        names = [names]
    codes = []
    for name in names:
        if name not in _STAT_CODES:
            raise InvalidArgumentError(f"stats: unknown statistic {name!r} ({' '.join(_momenta.kStatNames)})")
        codes.append(_STAT_CODES[name])
    if not codes:
        raise InvalidArgumentError("stats: no statistic asked")
    return (list(names), codes, skipna_of(skipna), _count(ddof, "ddof"), _count(order, "order", none=-1),
            _center(about), _count(degree, "degree"))


def _bin_edges(p, q, bins, n, bin_size=None):
    """An overview's bin edges: p + ⌊i·(q − p)/bins⌋ for i = 0..bins over the flat range (p, q)
    of an array of n elements, 1 <= bins <= q − p checked, as int64. bin_size=N instead: p,
    p + N, p + 2N, ..., q (the last bin shorter), N >= 1 and a non-empty range checked."""
    p, q = flat_range(p, q, n)
    if (bins is None) == (bin_size is None):
        raise InvalidArgumentError("overview: give either bins (how many) or bin_size (elements per bin)")
    if bin_size is not None:
        size = _count(bin_size, "bin_size")
        if size < 1 or q <= p:
            raise InvalidArgumentError(f"overview: bin_size {size}: the range {p}:{q} holds {q - p} elements; "
                                       "give bin_size >= 1 over a non-empty range")
        return np.append(np.arange(p, q, size, dtype=np.int64), np.int64(q))
    bins = _count(bins, "bins")
    if not 1 <= bins <= q - p:
        raise InvalidArgumentError(
            f"overview: bins {bins}: the range {p}:{q} holds {q - p} elements; give 1 <= bins <= {q - p}")
    width = q - p
    if width * bins < 1 << 63:
        return p + (np.arange(bins + 1, dtype=np.int64) * width) // bins
    return np.array([p + width * i // bins for i in range(bins + 1)], dtype=np.int64)  # exact past int64


def _batch_sides(starts, stops, n):
    """The ranges of a batch (stats): starts and stops broadcast together, then checked and made
    flat uint64 sides as _flat_sides does. Returns (starts, stops, their common shape)."""
    try:
        b, e = np.broadcast_arrays(np.asarray(starts), np.asarray(stops))
    except ValueError:
        raise InvalidArgumentError("stats: starts and stops do not broadcast to one shape") from None
    return _flat_sides(b, n, "stats: starts"), _flat_sides(e, n, "stats: stops"), b.shape


def _flat_sides(x, n, what):
    """Flat indices or range sides as int64, negative ones counted from the end (as
    flat_range); `what` names them in errors ("stats: starts", "a.npy: update: indices")."""
    if x.dtype.kind not in "iu":
        if x.size == 0:
            x = x.astype(np.int64)
        else:
            raise InvalidArgumentError(f"{what} must be integers, got an array of {x.dtype}")
    if x.dtype == np.uint64 and x.size and x.max() >= 1 << 63:
        raise OutOfRangeError(f"{what}: {int(x.max())} is past the end (length {n})")
    x = x.astype(np.int64).reshape(-1)
    return np.where(x < 0, x + n, x)


def _broadcast(value, shape, count=None):
    """`value` as the flat array of `shape` an assignment writes."""
    v = _values(value)
    try:
        v = np.broadcast_to(v, shape)
    except ValueError:
        raise InvalidArgumentError(
            f"could not broadcast values of shape {v.shape} into the selection's shape {tuple(shape)}") from None
    v = np.ascontiguousarray(v).reshape(-1)
    if count is not None and v.size != count:
        raise InvalidArgumentError(f"{v.size} values for {count} elements")
    return v


def open(path, mode="r", io="auto", sidecar=None, sync="batch"):  # noqa: A001 (as h5py.File, numpy.load)
    """Opens an array file with its moment buffer, as the CLI does: mode "r" a reader (no
    lock; several threads may query it), "r+" the writer (the array's writer lock, the log;
    a second writer gets "locked by another writer (pid N)"). io: "auto" (io_uring when the
    kernel grants a ring, else pread, with a momenta.Notice warning), "uring", "mmap",
    "pread". sidecar: the folder of the buffer and the log (default: PATH.momenta beside the
    array, or under $MOMENTA_SIDECAR_DIR). sync (writers): "always", "batch", "none", as
    ``--sync``. A missing or stale buffer is (re)built first, with a notice saying why."""
    path = _path(path)
    _choice(mode, "mode", ("r", "r+"))
    _choice(io, "io", _IO)
    _text(sync, "sync")  # its words are the library's (ParseLogSync), as --sync's
    sidecar = "" if sidecar is None else _path(sidecar)
    return Array(_momenta._Array.open(path, mode == "r+", io, sidecar, sync))


def _buffer_kind(buffer, order, bin):
    """(ola, order, bin) for the binding: buffer "hbb" (bin must be None) or "ola" (order
    0..7, bin None for the default or >= 2), as ``--buffer hbb|ola --bin B``."""
    _choice(buffer, "buffer", ("hbb", "ola"))
    if buffer == "hbb":
        if bin is not None:
            raise InvalidArgumentError("bin: applies to buffer=\"ola\" only")
        return False, order, 0
    if order > 7:
        raise InvalidArgumentError(f"order {order}: the Ola buffer serves index moments up to order 7 (use buffer=\"hbb\")")
    return True, order, _count(bin, "bin", 2, 2 ** 32 - 1, none=0)


def create(path, shape, dtype="f8", order=2, *, io="auto", sidecar=None, sync="batch", ram_budget=None, leaf=None,
           fanout=64, disk_tier=True, buffer="hbb", bin=None):  # noqa: A002 (bin: the CLI's --bin)
    """A new sparse .npy array of `shape` and `dtype` (anything numpy.dtype takes that is one
    of f8 f4 i8 i4 i2 i1 u8 u4 u2 u1, little-endian) with its buffer of order J = `order`
    (0..8), as ``momenta create``: instant at any size, all zeros, nothing allocated; a
    create that fails leaves nothing behind; an existing path is an ExistsError. Returns the
    array open as its writer (mode "r+"). ram_budget (bytes), leaf (elements per leaf),
    fanout and disk_tier are the buffer flags of ``momenta create``; buffer="ola" (order
    0..7, bin: cells per bin, default the CLI's) makes its buffer the Ola kind, as
    ``--buffer ola --bin B`` (buffers/ola/OLA.md)."""
    path = _path(path)
    dims = _shape(shape)
    name = _dtype_name(dtype)
    _choice(io, "io", _IO)
    _text(sync, "sync")  # its words are the library's (ParseLogSync), as --sync's
    sidecar = "" if sidecar is None else _path(sidecar)
    order = _count(order, "order", 0, 8)
    ram_budget = _count(ram_budget, "ram_budget", none=0)
    leaf = _count(leaf, "leaf", lo=1, none=0)
    fanout = _count(fanout, "fanout", 2, 64)
    ola, order, bin = _buffer_kind(buffer, order, bin)
    return Array(_momenta._Array.create(path, name, dims, order, ram_budget, leaf, fanout,
                                        _flag(disk_tier, "disk_tier"), io, sidecar, sync, ola, bin))
