"""Arrays served by ``momenta serve``, read over HTTP.

    import momenta
    server = momenta.remote("http://host:8080")      # token="..." when the server asks for one
    a = server["big"]                                 # or server.arrays()
    a.mean(0, 2**30), a.std(1000, 2000, ddof=1)
    a.overview(0, a.size, bins=2000, stats=("min", "max", "mean"))

Each array is read-only and answers as :class:`momenta.Array` does, from the server's
buffer: its statistics go over ``/api/arrays/NAME/stats``, :meth:`RemoteArray.stats` over
``POST .../ranges`` and :meth:`RemoteArray.overview` over ``.../overview`` (docs/serve.md).
Only the standard library is used (http.client with keep-alive, one connection per
thread). The server's errors raise momenta's exception classes with its one-line message.
"""

import http.client
import json
import math
import threading
import urllib.parse

import numpy as np

from . import _errors, _momenta
from ._errors import InvalidArgumentError
from ._statistics import _NONE, Statistics

__all__ = ["remote", "Remote", "RemoteArray"]

_KINDS = {
    "Invalid argument": _errors.InvalidArgumentError,
    "Out of range": _errors.OutOfRangeError,
    "Not found": _errors.NotFoundError,
    "Not supported": _errors.NotSupportedError,
    "Corruption": _errors.CorruptionError,
    "IO error": _errors.StorageError,
}
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _number(v):
    if isinstance(v, list):
        return [_number(x) for x in v]
    return _SPECIAL.get(v, v) if isinstance(v, str) else v


def _error(status, message):
    """The exception for the server's {"error": message} with HTTP `status`."""
    kind = message.split(":", 1)[0]
    cls = _KINDS.get(kind)
    if cls is None:
        cls = _errors.NotFoundError if status == 404 else _errors.Error
    return cls(message)


class Remote:
    """A ``momenta serve`` server: its arrays by name (``server["big"]``)."""

    def __init__(self, url, token=None, timeout=60.0):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise _errors.InvalidArgumentError(f"remote: {url!r} is not an http://HOST:PORT address")
        self._host = parts.hostname
        self._port = parts.port or 80
        self._token = token
        self._timeout = timeout
        self._local = threading.local()
        self.url = url

    def _connection(self):
        c = getattr(self._local, "c", None)
        if c is None:
            c = self._local.c = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        return c

    def request(self, method, path, params=(), body=None):
        """The body of the answer to `method` `path`?params (bytes), or the server's error raised."""
        target = path + ("?" + urllib.parse.urlencode(list(params)) if params else "")
        headers = {"Content-Type": "application/x-ndjson"} if body is not None else {}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        for attempt in (0, 1):  # a keep-alive connection the server closed is opened again once
            c = self._connection()
            try:
                c.request(method, target, body=body, headers=headers)
                r = c.getresponse()
                data = r.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                c.close()
                self._local.c = None
                if attempt:
                    raise
        if r.status != 200:
            try:
                message = json.loads(data)["error"]
            except (ValueError, KeyError, TypeError):
                message = f"HTTP {r.status}: {data[:200]!r}"
            raise _error(r.status, message)
        return data

    def get_json(self, path, params=()):
        return json.loads(self.request("GET", path, params))

    def names(self):
        """The names of the served arrays, in the server's order."""
        return [a["name"] for a in self.get_json("/api/arrays")["arrays"]]

    def arrays(self):
        """Every served array, by name."""
        return {a["name"]: RemoteArray(self, a) for a in self.get_json("/api/arrays")["arrays"] if "error" not in a}

    def __getitem__(self, name):
        for a in self.get_json("/api/arrays")["arrays"]:
            if a["name"] == name:
                if "error" in a:
                    raise _error(404, a["error"])
                return RemoteArray(self, a)
        raise _errors.NotFoundError(f"Not found: {name}: no such array is served by {self.url}")

    def close(self):
        c = getattr(self._local, "c", None)
        if c is not None:
            c.close()
            self._local.c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"momenta.remote({self.url!r})"


def remote(url, token=None, timeout=60.0):
    """The server at `url` ("http://host:port"); `token` when it was started with --token-file."""
    return Remote(url, token, timeout)


def _side(v, what):
    if v is None:
        return None
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
        raise _errors.InvalidArgumentError(f"{what}: {v!r} is not an integer index")
    return int(v)


class RemoteArray(Statistics):
    """A served array, read-only: ``name``, ``dtype``, ``shape``, ``size``, ``buffer`` and
    the statistics of :class:`momenta.Array` answered by the server."""

    def __init__(self, server, info):
        self._server = server
        self.name = info["name"]
        self.dtype = np.dtype(info["dtype"])
        self.shape = tuple(info["shape"])
        self.size = int(info["length"])
        self.buffer = info.get("buffer", {})
        self._path = "/api/arrays/" + urllib.parse.quote(self.name, safe="")

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def __repr__(self):
        return f"<momenta.RemoteArray {self.name!r} {self.dtype} {self.shape} at {self._server.url}>"

    def _range(self, p, q):
        p, q = _side(p, "p"), _side(q, "q")
        if p is None and q is None:
            return ":"
        return f"{'' if p is None else p}:{'' if q is None else q}"

    def _params(self, names, skipna=False, ddof=0, order=None, about=None, degree=1):
        params = [("stat", n) for n in names]
        if skipna:
            params.append(("skipna", "1"))
        if ddof:
            params.append(("ddof", str(int(ddof))))
        if order is not None:
            params.append(("order", str(int(order))))
        if about is not None:
            params.append(("about", repr(float(about))))
        if degree != 1:
            params.append(("degree", str(int(degree))))
        return params

    def _one(self, name, p, q, **kw):
        params = [("range", self._range(p, q))] + self._params([name], **kw)
        answer = self._server.get_json(self._path + "/stats", params)["stats"][name]
        value = _number(answer)
        return np.array(value, dtype=np.float64) if isinstance(value, list) else value

    def _stat(self, code, p, q, axis, skipna, ddof=0, order=-1, about=_NONE, degree=1):
        """One statistic (the Statistics mixin's methods come here): the server's /stats."""
        if axis is not None:
            raise InvalidArgumentError("axis: a remote array answers flat ranges (p, q) only")
        return self._one(_momenta.kStatNames[code], p, q, skipna=skipna, ddof=ddof,
                         order=None if order < 0 else order, about=None if math.isnan(about) else about,
                         degree=degree)

    def values(self, p, q):
        """The raw elements of [p, q) (the server bounds how many), as a NumPy array."""
        answer = self._server.get_json(self._path + "/values", [("range", self._range(p, q))])
        return np.array(_number(answer["values"]), dtype=self.dtype)

    def stats(self, starts, stops, stats=("mean",), *, skipna=False, ddof=0, order=None, about=None, degree=1):
        """Each statistic over every range [starts[k], stops[k]) in one request (POST
        .../ranges): {name: array}, as :meth:`momenta.Array.stats` (flat ranges; an error
        of any range raises it)."""
        starts = np.atleast_1d(np.asarray(starts, dtype=np.int64))
        stops = np.atleast_1d(np.asarray(stops, dtype=np.int64))
        starts, stops = np.broadcast_arrays(starts, stops)
        names = [stats] if isinstance(stats, str) else list(stats)
        body = "".join(f"{int(b)}:{int(e)}\n" for b, e in zip(starts.ravel(), stops.ravel())).encode()
        text = self._server.request("POST", self._path + "/ranges",
                                    self._params(names, skipna, ddof, order, about, degree), body)
        rows = [json.loads(line) for line in text.decode().splitlines() if line]
        for row in rows:
            if "error" in row:
                raise _error(400, row["error"])
        return _columns(rows, names, starts.shape)

    def overview(self, p, q, bins=None, stats=("mean", "min", "max"), *, bin_size=None, snap=False, skipna=False,
                 ddof=0, order=None, about=None, degree=1):
        """[p, q) in bins, answered by the server's /overview: {"start", "stop", name: array}
        as :meth:`momenta.Array.overview` (with snap, "asked_start"/"asked_stop" too)."""
        names = [stats] if isinstance(stats, str) else list(stats)
        params = [("range", self._range(p, q))] + self._params(names, skipna, ddof, order, about, degree)
        if bins is not None:
            params.append(("bins", str(int(bins))))
        if bin_size is not None:
            params.append(("bin_size", str(int(bin_size))))
        if snap:
            params.append(("snap", "1"))
        rows = self._server.get_json(self._path + "/overview", params)["bins"]
        result = {"start": np.array([r["range"][0] for r in rows], dtype=np.int64),
                  "stop": np.array([r["range"][1] for r in rows], dtype=np.int64)}
        if snap:
            result["asked_start"] = np.array([r["asked"][0] for r in rows], dtype=np.int64)
            result["asked_stop"] = np.array([r["asked"][1] for r in rows], dtype=np.int64)
        result.update(_columns(rows, names, (len(rows),)))
        return result


def _columns(rows, names, shape):
    """{name: array of shape `shape` (+ a last axis for lists)} from answer rows."""
    out = {}
    for n in names:
        column = [_number(r["stats"][n]) for r in rows]
        exact_ints = all(isinstance(v, int) for v in column)
        if exact_ints and column and not all(-2**63 <= v < 2**63 for v in column):
            arr = np.array(column, dtype=object)
        elif exact_ints and column:
            arr = np.array(column, dtype=np.int64)
        else:
            arr = np.array(column, dtype=np.float64)
        out[n] = arr.reshape(tuple(shape) + arr.shape[1:])
    return out
