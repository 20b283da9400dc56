"""Running one task per shard on the Dask worker that holds it, for momenta.dask.

A manifest names each copy's worker by text: an address, a worker's name, or a host. Dask
matches a task's ``workers=`` against addresses, names and hosts as the objects they are, and
LocalCluster names its workers with the integers 0, 1, ...: the text "0" would match none of
them, and the task would wait for a worker that never comes. So the runner matches the text
itself (an integer name by its digits) against the cluster's workers, and pins each task to
the address it found. A copy naming no worker of the cluster fails at once, saying so and
listing the workers; a worker seen here that is gone has "died or left the cluster".

Each task runs through momenta._shard_tasks.call, which returns its value with the notices
(momenta.Notice) the shard's array gave on the worker; the runner re-issues them on the client
(queries) or logs them (creates, whose buffer builds are what was asked). An array argument
of a megabyte or more is scattered to the task's worker rather than put in the task graph."""

import logging
import math
import os
import sys
import time as _time
import warnings

import numpy as np

from ._errors import Error, InvalidArgumentError, Notice
from . import _shard_tasks as _tasks

_POLL = 0.05  # seconds between looks at the cluster while tasks are pending
_SCATTER_BYTES = 1 << 20  # an argument this big goes to its worker by scatter, not in the task graph
_FRESH = 1.0  # seconds a look at the cluster's workers serves to place tasks
_log = logging.getLogger("momenta.dask")


class ShardError(Error, RuntimeError):
    """A shard could not answer: its worker died or left with no replica to take over, it did
    not answer within the timeout, or its array is missing or unlike the manifest. The
    message names the shard, its range, the worker and the path."""


ShardError.__module__ = "momenta.dask"  # where users import it from


def _is_dead_worker_error(exc):
    """Whether a task failed because its worker went away (not because of what it ran)."""
    return type(exc).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError")


def _label(address, name):
    return str(address) if str(name) == str(address) else f"{name} ({address})"


class Runner:
    """Runs calls, one per shard, each on the shard's first copy whose worker is there,
    failing over to the next copy when a worker goes away."""

    def __init__(self, client):
        self.client = client
        self._seen = set()  # names (as text) and addresses of the workers seen in the cluster
        self._recent = (None, -math.inf)  # (workers(), when): where to place tasks, for _FRESH seconds

    def workers(self):
        """The cluster's workers now: {address: (name, host)}; each is remembered as seen."""
        info = self.client.scheduler_info()["workers"]
        now = {addr: (w.get("name"), w.get("host")) for addr, w in info.items()}
        for addr, (name, _) in now.items():
            self._seen.update((addr, str(name)))
        self._recent = (now, _time.monotonic())
        return now

    def _placing(self):
        """The workers to place a run's tasks on: those of a look less than _FRESH seconds old
        (a query costs no extra round trip to the scheduler), else a new look. A worker gone
        since is noticed while its task is pending, as one that dies then."""
        now, when = self._recent
        if now is None or _time.monotonic() - when > _FRESH:
            now = self.workers()
        return now

    @staticmethod
    def match(worker, workers):
        """Where a task for `worker` (a manifest's text) runs among `workers` (as workers()
        gives them): the address of the worker named so (an integer name matching its digits,
        as the manifest writes it), that address itself, or the text itself when it is a host
        of some worker (Dask then runs it on any worker of that host); None for none."""
        worker = str(worker)
        named = [addr for addr, (name, _) in workers.items() if str(name) == worker]
        if len(named) > 1:
            raise InvalidArgumentError(f"worker {worker}: {len(named)} workers have that name (" +
                                       ", ".join(_label(a, workers[a][0]) for a in sorted(named)) + ")")
        if named:
            return named[0]
        if worker in workers or any(host == worker for _, host in workers.values()):
            return worker
        if "://" not in worker and f"tcp://{worker}" in workers:  # HOST:PORT, as Dask reads it
            return f"tcp://{worker}"
        return None

    def absent(self, worker, workers):
        """Why no task can run on `worker` now: it was seen and went, or there is no such worker."""
        if str(worker) in self._seen:
            return f"worker {worker} died or left the cluster"
        names = ", ".join(sorted(_label(a, n) for a, (n, _) in workers.items())) or "none"
        return f"no worker named {worker} (workers: {names})"

    def check(self, names):
        """Raises InvalidArgumentError naming the first of `names` that is no worker of the cluster."""
        workers = self.workers()
        for w in names:
            if self.match(w, workers) is None:
                raise InvalidArgumentError(f"placement: {self.absent(w, workers)}")

    def _ship(self, args, where, timeout):
        """`args` with each big array scattered to `where` (a future in its place)."""
        out = []
        for a in args:
            if isinstance(a, np.ndarray) and a.nbytes >= _SCATTER_BYTES:
                a = self.client.scatter(a, workers=[where], hash=False, timeout=timeout)
            out.append(a)
        return out

    def _submit(self, fn, copy, args, where):
        return self.client.submit(_tasks.call, fn, copy.path, *args, workers=[where], allow_other_workers=False,
                                  pure=False, retries=0)

    def _start(self, k, c, calls, pending, workers, deadline, why=None):
        """Submits call k on copy c of its shard, or the first copy after it whose worker is
        there; records it in `pending`. Raises ShardError when no copy is left."""
        shard, fn, args = calls[k]
        looked = False
        for c in range(c, len(shard.copies)):
            copy = shard.copies[c]
            where = self.match(copy.worker, workers)
            if where is None and not looked:  # placed from an older look: look again before giving up
                workers, looked = self.workers(), True
                where = self.match(copy.worker, workers)
            if where is None:
                why = self.absent(copy.worker, workers)
                continue
            try:
                shipped = self._ship(args, where, max(1.0, deadline - _time.monotonic()))
            except Exception as e:  # the worker went away, or did not take the data in time
                why = f"worker {copy.worker}: the task's data could not be sent ({type(e).__name__}: {e})"
                continue
            pending[k] = (c, self._submit(fn, copy, shipped, where), where)
            return
        self._cancel(pending)
        if len(shard.copies) == 1:
            raise ShardError(f"{shard.name()}: {why}: {shard.copies[0].path}")
        tried = ", ".join(f"{x.path} on {x.worker}" for x in shard.copies)
        raise ShardError(f"{shard.name()}: {why} and no replica is left to answer (tried {tried})")

    def run(self, calls, timeout, forward=True):
        """calls: [(shard, fn, args)]; returns [fn(copy.path, *args)] in order, each run on
        the first copy of its shard that answers. Raises ShardError (see momenta.dask). The
        notices of the shards' arrays are re-issued here as momenta.Notice (forward) or logged
        on the "momenta.dask" logger."""
        from distributed import wait
        deadline = _time.monotonic() + timeout
        workers = self._placing()
        pending = {}  # call number -> (copy number, future, where it runs)
        for k in range(len(calls)):
            self._start(k, 0, calls, pending, workers, deadline)
        results = [None] * len(calls)
        notices = []
        while pending:
            left = deadline - _time.monotonic()
            try:
                wait([f for _, f, _ in pending.values()], timeout=max(0.0, min(left, _POLL)),
                     return_when="ALL_COMPLETED")
            except Exception:  # a timeout: look at each below
                pass
            workers = None
            for k in list(pending):
                c, fut, where = pending[k]
                shard = calls[k][0]
                copy = shard.copies[c]
                if fut.status == "finished":
                    results[k], said = fut.result()
                    notices += said
                    del pending[k]
                    continue
                if fut.status in ("error", "cancelled"):
                    exc = fut.exception() if fut.status == "error" else None
                    if exc is not None and not _is_dead_worker_error(exc):
                        self._cancel(pending)
                        at = "" if copy.path in str(exc) else f"{copy.path}: "  # the path once
                        raise ShardError(f"{shard.name()} on {copy.worker}: {at}{exc}") from exc
                else:
                    if workers is None:
                        workers = self.workers()
                    if where in workers or any(host == where for _, host in workers.values()):
                        continue
                fut.cancel()
                del pending[k]
                workers = workers or self.workers()
                self._start(k, c + 1, calls, pending, workers, deadline,
                            why=f"worker {copy.worker} died or left the cluster")
            if pending and _time.monotonic() >= deadline:
                k = next(iter(pending))
                c = pending[k][0]
                shard = calls[k][0]
                self._cancel(pending)
                raise ShardError(f"{shard.name()} on {shard.copies[c].worker}: {shard.copies[c].path}: "
                                 f"no answer within {timeout:g} s")
        self._say(notices, forward)
        return results

    @staticmethod
    def _say(notices, forward):
        level = 1
        f = sys._getframe(0)
        here = os.path.dirname(os.path.abspath(__file__))
        while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
            f, level = f.f_back, level + 1
        for text in dict.fromkeys(notices):  # each once, in order
            if forward:
                warnings.warn(text, Notice, stacklevel=level)  # at the caller's line, outside the package
            else:
                _log.info("%s", text)

    @staticmethod
    def _cancel(pending):
        for _, fut, _ in pending.values():
            fut.cancel()
