"""Sharded arrays served by Dask distributed: one momenta array per shard, each on the worker
that holds it, queried by their range summaries.

    from dask.distributed import Client
    import momenta.dask as md
    client = Client("tcp://scheduler:8786")
    md.shard_create("big.npy", "big.json", shard_length=2**30,
                    placement=[("tcp://10.0.0.5:40113", "/data/a"), ("tcp://10.0.0.6:39001", "/data/b")],
                    client=client)
    a = md.ShardedArray("big.json", client)
    a.mean(10**9, 3 * 10**9), a.stats(starts, stops, ["sum", "max"])

A query becomes one task per shard it touches, pinned to the worker holding the shard
(``workers=[w], allow_other_workers=False``); each returns the range summary of its piece (a
few hundred bytes, never the elements) and the client merges them with the library's merge
rule and derives the statistic, exactly as one array answers (momenta.summary_stat). A
shard wholly inside the range is answered from its buffer's top: no element is read.

Workers are named in placements and manifests by address, name or host, matched as Dask
matches ``workers=`` (LocalCluster's integer names 0, 1 included: momenta._shard_runner); a
copy naming no worker of the cluster is not waited for.

Faults: a task whose worker dies (or has left the cluster) is rerun on the shard's next
copy listed in the manifest (its replicas); with none left, or when no copy answers within
`timeout` seconds, a ShardError names the shard and the worker. Nothing waits forever."""

import errno
import math
import os
import time as _time

import numpy as np

from . import _momenta
from . import _numpy_calls
from ._array import _batch_params, _batch_sides, _bin_edges, _count, _flag, _flat_sides, _values
from ._errors import InvalidArgumentError, OutOfRangeError, os_error
from ._manifest import Copy, Manifest, Shard, load_manifest, parse_manifest, save_manifest
from ._select import flat_range, run_of, runs_of
from ._statistics import _MAX, _MIN, _NONE, Statistics
from ._shard_runner import Runner as _Runner, ShardError
from . import _shard_tasks as _tasks

__all__ = ["ShardedArray", "ShardError", "shard_create", "load_manifest"]


def _skipna_flag(value):
    """skipna= of a sharded batch: True or False only."""
    return _flag(value, "skipna")


# ---- the sharded array ----------------------------------------------------------------


class ShardedArray(Statistics):
    """A sharded array (its manifest: a path, or the decoded JSON) served by `client` (a
    dask.distributed.Client). The statistics are those of momenta.Array, with its names,
    signatures, answers and errors, over the whole array's flat (C-order) index: ``sum
    count mean var std min max sumsq rms moment moments com spread polyfit``, ``stats`` (many ranges:
    one task per shard touched, whatever their number) and ``overview``; ``summary`` gives
    the merged momenta.Summary itself. Every query takes ``as_of=T`` (ms, the update log's
    clock) and ``timeout=`` (seconds; default the array's).

    as_of=T: the array as it stood once every update stamped at or before T had been
    applied and none stamped after T — on every shard the same cut of log time, so one
    answer over many shards is one consistent view. Each shard rebuilds that view from its
    update log: the current summary of its piece, with each element updated after T (there
    are k of them in the piece) put back to its value at T, read from the log (a cost of one
    summary per such element, and a pass over the log's records after T). Updates made
    through this class are stamped with one time for all shards (the client's clock, unless
    `times` is given), so their cut is the same everywhere. Refused (ShardError naming the
    shard) when the shard's log no longer reaches back to T (segments removed by retention)
    or its times go backwards after T (records stamped out of order), where no single state
    of the shard is "as of T". Writes not made through momenta are not in the log.

    On open (check=True) one task per shard checks that its primary copy exists with the
    manifest's length, dtype and order (a ShardError naming the shard and path otherwise);
    replicas are first opened when a query fails over to them."""

    def __init__(self, manifest, client, *, timeout=60.0, check=True):
        if isinstance(manifest, Manifest):
            self._m = manifest
        elif isinstance(manifest, dict):
            self._m = parse_manifest(manifest)
        else:
            self._m = load_manifest(manifest)
        self._client = client
        self._timeout = self._seconds(timeout)
        self._runner = _Runner(client)
        self._bounds = np.array([s.start for s in self._m.shards] + [self._m.shards[-1].stop], dtype=np.int64)
        self._dtype = np.dtype(self._m.dtype).newbyteorder("<")
        self._leaf_spans = None
        if check:
            self.check()

    # ---- what it is ----

    shape = property(lambda self: self._m.shape)
    dtype = property(lambda self: self._dtype)
    size = property(lambda self: self._m.size)
    ndim = property(lambda self: len(self._m.shape))
    order = property(lambda self: self._m.order)
    shards = property(lambda self: list(self._m.shards), doc="The manifest's shards, in index order.")
    manifest = property(lambda self: self._m)

    def __len__(self):
        if not self._m.shape:
            raise TypeError("len() of a 0-d array")
        return self._m.shape[0]

    def __repr__(self):
        return f"<momenta.dask.ShardedArray shape={self.shape} dtype={self.dtype} shards={len(self._m.shards)}>"

    def __array_function__(self, func, types, args, kwargs):
        """np.sum np.mean np.var np.std np.min np.max answered from the shards' buffers where
        the call allows it (momenta._numpy_calls); other keywords and other NumPy functions
        are refused (the elements are on the workers: to_dask_array() reads them)."""
        return _numpy_calls.array_function(self, func, args, kwargs, lambda x: None)

    @staticmethod
    def _seconds(timeout):
        try:
            t = float(timeout)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"timeout: expected seconds, got {timeout!r}") from None
        if not t > 0 or math.isinf(t):
            raise InvalidArgumentError(f"timeout: must be a positive number of seconds, got {timeout!r}")
        return t

    def _t(self, timeout):
        return self._timeout if timeout is None else self._seconds(timeout)

    def check(self, timeout=None):
        """Opens every shard's primary copy on its worker and checks it against the manifest.
        Returns the leaf span of each shard."""
        calls = [(s, _tasks.shard_info, ()) for s in self._m.shards]
        infos = self._runner.run(calls, self._t(timeout))
        for s, info in zip(self._m.shards, infos):
            want = (s.size, self._m.dtype, self._m.order)
            got = (info["length"], info["dtype"], info["order"])
            if got != want:
                raise ShardError(f"{s.name()} on {s.copies[0].worker}: {s.copies[0].path}: length {got[0]}, dtype "
                                 f"{got[1]}, order {got[2]}; the manifest {self._m.path} says {want[0]}, {want[1]}, "
                                 f"{want[2]}")
        self._leaf_spans = [info["leaf_span"] for info in infos]
        return list(self._leaf_spans)

    def close(self, timeout=None):
        """Closes every shard array the workers hold open for this manifest (writers commit
        and checkpoint). Queries afterwards reopen them."""
        calls = [(s, _tasks.shard_close, ()) for s in self._m.shards]
        for s in self._m.shards:
            for c in s.copies[1:]:
                calls.append((Shard(s.number, s.start, s.stop, [c]), _tasks.shard_close, ()))
        self._runner.run(calls, self._t(timeout))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def shard_of(self, index):
        """The shard holding flat index `index`."""
        i = _flat_sides(np.asarray([index]), self.size, "shard_of: index")[0]
        if not 0 <= i < self.size:
            raise OutOfRangeError(f"{self._m.path}: index {index} is outside the array (length {self.size})")
        return self._m.shards[int(np.searchsorted(self._bounds, i, side="right")) - 1]

    # ---- one range ----

    def _range(self, p, q):
        if q is not None:
            return flat_range(p, q, self.size)
        if p is None:
            return 0, self.size
        return run_of(p, self._m.shape)

    def _as_of(self, as_of):
        if as_of is None:
            return None
        return _count(as_of, "as_of", lo=-(1 << 63) + 1, hi=(1 << 63) - 1)

    def summary(self, p=None, q=None, *, extremes=True, as_of=None, timeout=None):
        """The momenta.Summary of [p, q) over the whole array (placed at p): one task per
        shard touched, merged. Ranges as the statistics take them."""
        p, q = self._range(p, q)
        return self._summary(p, q, _flag(extremes, "extremes"), self._as_of(as_of), self._t(timeout))

    def _summary(self, p, q, extremes, as_of, timeout):
        if p == q:
            return _momenta._empty_summary(p, self._m.dtype, self._m.order)
        first = int(np.searchsorted(self._bounds, p, side="right")) - 1
        last = int(np.searchsorted(self._bounds, q, side="left")) - 1
        calls = []
        for s in self._m.shards[first:last + 1]:
            lo, hi = max(p, s.start), min(q, s.stop)
            calls.append((s, _tasks.shard_summary, (lo - s.start, hi - s.start, extremes, as_of)))
        parts = self._runner.run(calls, timeout)
        placed = [part.moved(s.start + part.start) for (s, _, _), part in zip(calls, parts)]
        return _momenta._merge_summaries(placed)

    def _stat(self, code, key, q, axis, skipna=False, ddof=0, order=-1, about=_NONE, degree=1, as_of=None,
              timeout=None):
        skipna = _flag(skipna, "skipna")
        if axis is not None:
            if q is not None:
                raise InvalidArgumentError("axis= takes one index expression, not a flat range p, q")
            starts, stops, out_shape = runs_of(Ellipsis if key is None else key, self._m.shape, axis)
            (out,) = self._batch(starts.reshape(-1), stops.reshape(-1), [code], skipna, ddof, order, about, degree,
                                 False, self._as_of(as_of), self._t(timeout))
            return out.reshape(out_shape + out.shape[1:])
        p, q = self._range(key, q)
        s = self._summary(p, q, code in (_MIN, _MAX), self._as_of(as_of), self._t(timeout))
        return _momenta._summary_stat(s, code, skipna, ddof, order, about, degree)

    # ---- many ranges ----

    def _batch(self, b, e, codes, skipna, ddof, order, about, degree, empty_nan, as_of, timeout):
        """The statistics of ranges [b[k], e[k]) (int64, checked here): each range cut at the
        shard boundaries into pieces, one task per shard touched for all its pieces."""
        n = self.size
        if b.size and (b.min() < 0 or e.max() > n or np.any(e < b)):
            k = int(np.flatnonzero((b < 0) | (e > n) | (e < b))[0])
            raise OutOfRangeError(f"{self._m.path}: range #{k} {int(b[k])}:{int(e[k])} is outside the array "
                                  f"(length {n})")
        first = np.searchsorted(self._bounds, b, side="right") - 1
        last = np.searchsorted(self._bounds, e, side="left") - 1
        counts = np.where(e > b, last - first + 1, 0)
        ends = np.cumsum(counts)
        total = int(ends[-1]) if ends.size else 0
        owner = np.repeat(np.arange(b.size), counts)               # the range of each piece
        shard = first[owner] + (np.arange(total) - (ends - counts)[owner])
        lo = np.maximum(b[owner], self._bounds[shard])
        hi = np.minimum(e[owner], self._bounds[shard + 1])
        extremes = any(c in (_MIN, _MAX) for c in codes)
        touched = np.unique(shard)
        calls, where = [], []
        for s in touched.tolist():
            sel = np.flatnonzero(shard == s)
            base = self._m.shards[s].start
            calls.append((self._m.shards[s], _tasks.shard_rows, (lo[sel] - base, hi[sel] - base, extremes, as_of)))
            where.append(sel)
        width = 2 * self._m.order + 20  # NodeCodec(J).doubles(): buffers/algebra/range_summary.h
        rows = np.empty((total, width), dtype=np.float64)
        for sel, got in zip(where, self._runner.run(calls, timeout)):
            rows[sel] = got
        return _momenta._rows_stats(rows, lo.astype(np.int64), hi.astype(np.int64), b.astype(np.int64),
                                    ends.astype(np.int64), self._m.dtype, self._m.order, extremes, codes, skipna,
                                    ddof, order, about, degree, empty_nan, self._m.path)

    def stats(self, starts, stops, stats=("mean",), *, skipna=False, ddof=0, order=None, about=None, degree=1,
              as_of=None, timeout=None):
        """As momenta.Array.stats: each statistic over every range [starts[k], stops[k]) of the
        flat index, as {name: array}. One task per shard touched (all its pieces of all the
        ranges in one batch on its worker), whatever the number of ranges."""
        names, codes, skipna, ddof, order, about, degree = _batch_params(stats, skipna, ddof, order, about, degree,
                                                                       skipna_of=_skipna_flag)
        b, e, shape = _batch_sides(starts, stops, self.size)
        outs = self._batch(b, e, codes, skipna, ddof, order, about, degree, False, self._as_of(as_of),
                           self._t(timeout))
        return {n: o.reshape(shape + o.shape[1:]) for n, o in zip(names, outs)}

    def overview(self, p, q, bins=None, stats=("mean", "min", "max"), *, bin_size=None, snap=False, skipna=False,
                 ddof=0, order=None, about=None, degree=1, as_of=None, timeout=None):
        """As momenta.Array.overview: [p, q) in `bins` equal bins (or bins of bin_size elements,
        the last one shorter), each answered. snap=True
        moves each edge to the nearest leaf boundary of the shard holding it (or the shard's
        own boundary; ties down), so no element is read."""
        edges = _bin_edges(p, q, bins, self.size, bin_size)
        names, codes, skipna, ddof, order, about, degree = _batch_params(stats, skipna, ddof, order, about, degree,
                                                                       skipna_of=_skipna_flag)
        asked = edges
        if snap:
            if self._leaf_spans is None:
                self.check(timeout)
            spans = np.array(self._leaf_spans, dtype=np.int64)
            s = np.minimum(np.searchsorted(self._bounds, edges, side="right") - 1, len(spans) - 1)
            base = self._bounds[s]
            below = base + (edges - base) // spans[s] * spans[s]
            above = np.minimum(below + spans[s], self._bounds[s + 1])
            edges = np.where(above - edges < edges - below, above, below)
        outs = self._batch(edges[:-1].copy(), edges[1:].copy(), codes, skipna, ddof, order, about, degree, snap,
                           self._as_of(as_of), self._t(timeout))
        result = {"start": edges[:-1].copy(), "stop": edges[1:].copy()}
        if snap:
            result["asked_start"] = asked[:-1].copy()
            result["asked_stop"] = asked[1:].copy()
        result.update(zip(names, outs))
        return result

    # ---- updates ----

    def update(self, indices, values, times=None, *, timeout=None):
        """a.flat[indices[k]] = values[k] (as momenta.Array.update), each routed to the worker
        of the shard that owns it and applied through that shard's log, on every copy (the
        primary and its replicas), then committed. Indices and values are all checked here
        before any shard is written. times: None stamps every update with one time, the
        client's clock now (ms), so that as_of cuts them alike on every shard; or one time;
        or one per update. A copy that fails (its worker gone) raises ShardError saying which
        copies took the updates."""
        idx = _flat_sides(np.asarray(indices), self.size, f"{self._m.path}: update: indices")
        if idx.size and (idx.min() < 0 or idx.max() >= self.size):
            bad = int(idx[(idx < 0) | (idx >= self.size)][0])
            raise OutOfRangeError(f"{self._m.path}: update: index {bad} is outside the array (length {self.size})")
        vals = _values(np.broadcast_to(np.asarray(values), np.shape(indices))).reshape(-1)
        _check_fits(vals, self._dtype, self._m.path)
        if times is None:
            t_one, t_each = _time.time_ns() // 1_000_000, None
        elif np.ndim(times) == 0:
            t_one, t_each = _count(times, "time", lo=-(1 << 63) + 1, hi=(1 << 63) - 1), None
        else:
            t = np.asarray(times)
            if t.dtype.kind not in "iu":
                raise InvalidArgumentError(f"update: times must be integers (ms), got an array of {t.dtype}")
            t_one, t_each = _momenta.kLogTimeNow, np.broadcast_to(t, np.shape(indices)).astype(np.int64).reshape(-1)
        owner = np.searchsorted(self._bounds, idx, side="right") - 1
        calls, names = [], []
        for s in np.unique(owner).tolist():
            sel = np.flatnonzero(owner == s)
            shard = self._m.shards[s]
            args = (idx[sel] - shard.start, vals[sel], None if t_each is None else t_each[sel], t_one)
            for c in shard.copies:
                calls.append((Shard(shard.number, shard.start, shard.stop, [c]), _tasks.shard_apply, args))
                names.append(f"{shard.name()} {c}")
        try:
            self._runner.run(calls, self._t(timeout))
        except ShardError as e:
            raise ShardError(f"{e} (the update went to {len(calls)} shard copies: {'; '.join(names)}; the others "
                             "may have applied it)") from e.__cause__
        return int(idx.size)

    def write(self, first, values, time=None, *, timeout=None):
        """a.flat[first:first + len(values)] = values, stamped `time` (ms; None: now)."""
        first = _count(first, "first")
        vals = np.asarray(values).reshape(-1)
        return self.update(np.arange(first, first + vals.size, dtype=np.int64), vals, time, timeout=timeout)

    # ---- Dask arrays ----

    def to_dask_array(self):
        """A dask.array over the flat index, one chunk per shard: each a read-only
        numpy.memmap of the shard opened on its worker (nothing read or copied until a
        computation touches it, and computations on a chunk run where it is). Reshape to
        `shape` with Dask when the shards split whole rows. Each chunk is on its shard's first
        copy whose worker is in the cluster (a ShardError when none is)."""
        import dask.array as da
        from dask import delayed
        chunks = []
        workers = self._runner.workers()
        for s in self._m.shards:
            found = [(c, self._runner.match(c.worker, workers)) for c in s.copies]
            found = [(c, where) for c, where in found if where is not None]
            if not found:
                raise ShardError(f"{s.name()}: {self._runner.absent(s.copies[0].worker, workers)}: "
                                 f"{s.copies[0].path}")
            c, where = found[0]
            fut = self._client.submit(_tasks.shard_view, c.path, workers=[where], allow_other_workers=False,
                                      pure=False)
            chunks.append(da.from_delayed(delayed(fut), shape=(s.size,), dtype=self._dtype))
        return da.concatenate(chunks)


def _check_fits(v, dtype, what):
    """Every value fits `dtype` exactly (as the library's ValueFits), else InvalidArgumentError
    naming the first that does not: checked before any shard is written."""
    if dtype.kind == "f":
        if dtype.itemsize == 4 and v.dtype.kind == "f":
            big = np.isfinite(v) & (np.abs(v) > np.finfo(np.float32).max)
            if big.any():
                raise InvalidArgumentError(f"{what}: value '{v[big][0]!r}' does not fit dtype f4")
        return
    info = np.iinfo(dtype)
    if v.dtype.kind == "f":  # float(max) + 1 is exact below 2^53 and rounds to 2^63 or 2^64 above
        bad = ~np.isfinite(v) | (np.floor(v) != v) | (v < float(info.min)) | (v >= float(info.max) + 1)
    elif v.dtype.kind == "u":
        bad = v > np.uint64(info.max)
    else:
        bad = (v < info.min) | (v.astype(np.float64) > info.max) if info.max < 2**63 else v < info.min
    if np.any(bad):
        raise InvalidArgumentError(f"{what}: value '{v[bad][0]}' does not fit dtype {dtype.kind}{dtype.itemsize}")


# ---- creating sharded arrays ----------------------------------------------------------


def _placement(placement):
    """[(worker, folder)]: each worker as text, each folder absolute (checked by the library's
    planner, which the CLI's --placement uses too) and normalized."""
    try:
        pairs = [(str(w), os.fsdecode(os.fspath(f))) for w, f in placement]
    except (TypeError, ValueError):
        raise InvalidArgumentError("placement: expected a list of (worker, folder) pairs") from None
    if not pairs:
        raise InvalidArgumentError("placement: no (worker, folder) pair given")
    return [_momenta._shard_place(w, f) for w, f in pairs]


def shard_create(src, manifest_path, shard_length, placement, client, *, order=2, replicas=0, timeout=600.0):
    """Makes a sharded array and its manifest; returns the manifest's path.

    src: a .npy path (C order), split into shards of `shard_length` elements of its flat
    index (the last one shorter) — the path must be readable by the workers (a shared or
    local file system): each worker copies its shards' elements out of it and builds their
    buffers; or an ndarray (shipped to the workers: small data); or (shape, dtype) for an
    empty (sparse, all-zero) sharded array. placement: [(worker, folder)] — a worker of the
    cluster by address, name (an int name too) or host, checked first ("no worker named X");
    an absolute folder as that worker sees it — shard k goes to placement[k % len], and with
    `replicas` = r its copies to the next r pairs round the list (r < len(placement)). Every
    shard is written by the worker that will hold it, as FOLDER/<manifest stem>.shardNNNNN.npy
    (replica j: .rJ.npy), with its own sidecar and log; an existing file (or manifest) is never
    written over, and a create that fails removes the shards it made. order: each shard's
    buffer order J. The workers' notices of the buffers built are logged ("momenta.dask")."""
    manifest_path = os.fsdecode(os.fspath(manifest_path))
    pairs = _placement(placement)
    shard_length = _count(shard_length, "shard_length", lo=1)
    replicas = _count(replicas, "replicas", hi=len(pairs) - 1)
    order = _count(order, "order", 0, 8)
    if isinstance(src, (str, os.PathLike)):
        source = os.path.abspath(os.fsdecode(os.fspath(src)))
        try:
            header = np.load(source, mmap_mode="r")
        except OSError as e:
            raise os_error(e, source) from None
        shape, dtype = header.shape, header.dtype
        del header
    elif isinstance(src, np.ndarray):
        source, shape, dtype = np.ascontiguousarray(src), src.shape, src.dtype
    else:
        try:
            shape, dtype = src
        except (TypeError, ValueError):
            raise InvalidArgumentError("shard_create: src must be a .npy path, an ndarray or (shape, dtype)") from None
        source = None
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    from ._array import _dtype_name, _shape
    shape = tuple(_shape(shape))
    dtype = _dtype_name(dtype)
    n = math.prod(shape)
    if n == 0:
        raise InvalidArgumentError("shard_create: the array is empty; a sharded array has at least one element")
    shards, calls = [], []
    # The library plans (as `momenta shard create`): shard k's copies, their workers and paths.
    for k, (b, e, copies) in enumerate(_momenta._plan_shards(n, shard_length, pairs, replicas, manifest_path)):
        copies = [Copy(worker, path) for worker, path in copies]
        shards.append(Shard(k, b, e, copies))
        for c in copies:
            piece = source if not isinstance(source, np.ndarray) else source.reshape(-1)[b:e]
            first = b if not isinstance(source, np.ndarray) else 0
            calls.append((Shard(k, b, e, [c]), _tasks.shard_make, (dtype, e - b, order, piece, first)))
    manifest = Manifest(manifest_path, dtype, shape, order, shards)
    runner, seconds = _Runner(client), ShardedArray._seconds(timeout)
    if os.path.lexists(manifest_path):
        raise os_error(FileExistsError(errno.EEXIST, "exists; give a new manifest path"), manifest_path)
    runner.check([w for w, _ in pairs])  # each a worker of the cluster, before anything is made
    runner.run([(s, _tasks.shard_absent, ()) for s, _, _ in calls], seconds)  # nothing made yet if one is there
    try:
        runner.run(calls, seconds, forward=False)  # its notices are the buffers built: logged, not shown
        return save_manifest(manifest, manifest_path)
    except BaseException:
        try:  # every path was free before: what is there now is ours
            runner.run([(s, _tasks.shard_remove, ()) for s, _, _ in calls], min(seconds, 60.0), forward=False)
        except Exception:
            pass
        raise
