"""What a Dask worker runs for a sharded array (momenta.dask): each function takes a shard's
path on this worker and returns a small value — summaries, rows of summaries, counts — never
the elements (except shard_view, a zero-copy memmap that stays on the worker).

A worker process keeps the shards it has opened (a reader, or the writer once it has taken
an update: queries then go through the writer, so they see its updates at once)."""

import os
import shutil
import threading
import time
import warnings

import numpy as np

from ._array import create, open as open_array
from ._errors import NotFoundError, Notice

_lock = threading.Lock()
_open = {}   # path -> momenta.Array (the writer when one was opened here)
_delay = 0.0  # seconds each query sleeps first: a test hook (set_delay), 0 otherwise

try:  # a memmap costs the page cache, not the worker's memory: tell Dask's accounting so
    from dask.sizeof import sizeof as _sizeof

    @_sizeof.register(np.memmap)
    def _sizeof_memmap(m):
        return 256
except ImportError:  # pragma: no cover (dask is what calls these)
    pass


_said = threading.local()  # .notices: the texts of the notices the task running in this thread gave


def call(fn, path, *args):
    """fn(path, *args) as a task: (its value, the texts of the momenta.Notice warnings it
    gave). The notices are kept from the worker's stderr for the client to re-issue or log
    (momenta._shard_runner); other warnings are shown as usual."""
    _catch_notices()
    _said.notices = []
    try:
        return fn(path, *args), _said.notices
    finally:
        _said.notices = None


def _catch_notices():
    """Routes notices given in a thread running call() into its list (once per process).
    warnings.catch_warnings would not do: it swaps process-wide state under the worker's
    other threads."""
    show = warnings.showwarning
    if getattr(show, "momenta_catches_notices", False):
        return

    def showwarning(message, category, filename, lineno, file=None, line=None):
        notices = getattr(_said, "notices", None)
        if notices is not None and issubclass(category, Notice):
            notices.append(str(message))
        else:
            show(message, category, filename, lineno, file, line)
    showwarning.momenta_catches_notices = True
    warnings.showwarning = showwarning


def set_delay(seconds):
    """Test hook: every later query on this worker sleeps `seconds` first (0: none)."""
    global _delay
    _delay = float(seconds)
    return os.getpid()


def _array(path, writable=False):
    with _lock:
        a = _open.get(path)
        if a is not None and (a.mode == "r+" or not writable):
            return a
        a = open_array(path, "r+" if writable else "r")  # notices (a buffer rebuilt) go back with the answer
        old = _open.get(path)
        _open[path] = a
    if old is not None:
        old.close()
    return a


def _wait():
    if _delay:
        time.sleep(_delay)


def shard_info(path):
    """What the client checks against the manifest: length, dtype, order, leaf span. The
    file must be there now (a handle kept open here would outlive its deletion)."""
    if not os.path.exists(path):
        shard_close(path)
        raise NotFoundError(f"Not found: {path}: no such shard array on this worker")
    a = _array(path)
    return {"length": a.size, "dtype": f"{a.dtype.kind}{a.dtype.itemsize}", "order": a.order,
            "leaf_span": a.leaf_span, "pid": os.getpid()}


def shard_summary(path, p, q, extremes, as_of):
    """The summary of the shard's [p, q) (local indices), as of log time `as_of` (None: now)."""
    _wait()
    a = _array(path)
    return a.summary(p, q, extremes=extremes, as_of=as_of)


def shard_rows(path, starts, stops, extremes, as_of):
    """The summaries of the shard's ranges [starts[k], stops[k]) as rows (one batch)."""
    _wait()
    a = _array(path)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    stops = np.ascontiguousarray(stops, dtype=np.int64)
    return a._h.summary_rows(starts, stops, extremes, as_of)


def shard_apply(path, indices, values, times, time_ms):
    """a[indices[k]] = values[k] through the shard's log (one Apply), then a commit."""
    a = _array(path, writable=True)
    a._h.apply(np.ascontiguousarray(indices, dtype=np.int64), values, times, time_ms)
    a.commit()
    return len(indices)


def shard_make(path, dtype, length, order, source, first):
    """Creates the shard at `path`: `length` elements of `dtype`, empty (sparse zeros) when
    `source` is None, else elements [first, first + length) of the flat index of `source` —
    a .npy path readable here, or an ndarray — copied in as the file's data, then the buffer
    built in one pass (no log records for the initial data). Refuses an existing path."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    if source is None:
        a = create(path, shape=length, dtype=dtype, order=order)
        info = {"length": a.size, "dtype": f"{a.dtype.kind}{a.dtype.itemsize}", "order": a.order}
        a.close()
        return info
    if os.path.exists(path):
        raise FileExistsError(f"{path}: exists; a shard is never written over")
    src = np.load(source, mmap_mode="r") if isinstance(source, str) else np.asarray(source)
    if src.ndim > 1 and not src.flags.c_contiguous:
        raise ValueError(f"{source if isinstance(source, str) else 'source'}: a Fortran-order array; "
                         "shards split the C-order flat index (save it in C order)")
    flat = src.reshape(-1)
    tmp = f"{path}.part{os.getpid()}"
    out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.dtype(dtype).newbyteorder("<"), shape=(length,))
    step = 1 << 22
    for b in range(0, length, step):
        e = min(length, b + step)
        out[b:e] = flat[first + b:first + e]
    out.flush()
    del out
    os.replace(tmp, path)
    a = open_array(path, "r+")  # builds the buffer (one pass) ...
    if a.order != order:
        a.rebuild(order)  # ... of the manifest's order
    info = {"length": a.size, "dtype": f"{a.dtype.kind}{a.dtype.itemsize}", "order": a.order}
    a.close()
    return info


def shard_absent(path):
    """Refuses a path where a shard is to be made but something already is."""
    if os.path.lexists(path):
        raise FileExistsError(f"{path}: exists; a shard is never written over")
    return True


def shard_remove(path):
    """Removes a shard this create made (its file, partial file and sidecar): a failed
    create leaves nothing behind. Errors are ignored (best effort)."""
    shard_close(path)
    for p in (path, f"{path}.part{os.getpid()}"):
        try:
            os.unlink(p)
        except OSError:
            pass
    shutil.rmtree(f"{path}.momenta", ignore_errors=True)
    return True


def shard_view(path):
    """The shard's elements as a read-only numpy.memmap opened here (nothing copied)."""
    return _array(path).numpy().reshape(-1)


def shard_close(path):
    """Closes the shard's array here (a writer: commit and checkpoint). Idempotent."""
    with _lock:
        a = _open.pop(path, None)
    if a is not None:
        a.close()
    return True

