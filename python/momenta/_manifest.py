"""The manifest of a sharded array: a JSON file listing its shards in index order.

    {
      "format": "momenta-sharded-array",
      "version": 1,
      "dtype": "f8",             # every shard's dtype
      "shape": [1000000],        # the whole array's shape; shards split its flat (C-order) index
      "order": 2,                # every shard's buffer order J
      "shards": [
        {"start": 0, "stop": 250000,                      # the shard holds [start, stop)
         "worker": "tcp://10.0.0.5:40113",                # a Dask worker: address, --name or host
         "path": "/data/a/big.shard00000.npy",            # the shard array, on that worker
         "replicas": [{"worker": "tcp://10.0.0.6:39001", "path": "/data/b/big.shard00000.r1.npy"}]},
        ...
      ]
    }

Shards are contiguous and non-empty, from 0 to the shape's product; "replicas" is optional.
A worker is text: an integer name (LocalCluster's 0, 1, ...) is written as its digits, and
matched as that name (momenta._shard_runner). Paths are absolute, as their worker sees them.
The format has one writer, the library's (storage/array/shard_manifest.h): `momenta shard
create` (the CLI) and momenta.dask.shard_create (save_manifest) both write through it, one
line of JSON. This module is its reader: load_manifest names the file and the shard of
anything wrong."""

import json
import math
import os

from . import _momenta
from ._errors import InvalidArgumentError, NotFoundError, os_error

FORMAT = _momenta.kShardManifestFormat  # "momenta-sharded-array"
VERSION = _momenta.kShardManifestVersion
_DTYPES = ("f8", "f4", "i8", "i4", "i2", "i1", "u8", "u4", "u2", "u1")


class Copy:
    """Where one copy of a shard lives: a worker (address or name) and a path on it."""

    __slots__ = ("worker", "path")

    def __init__(self, worker, path):
        self.worker, self.path = worker, path

    def __repr__(self):
        return f"{self.path} on {self.worker}"


class Shard:
    """Shard number `number` of a manifest: [start, stop) of the flat index, its copies
    (the first the primary, then the replicas, in the manifest's order)."""

    __slots__ = ("number", "start", "stop", "copies")

    def __init__(self, number, start, stop, copies):
        self.number, self.start, self.stop, self.copies = number, start, stop, copies

    size = property(lambda self: self.stop - self.start)

    def name(self):
        return f"shard #{self.number} ({self.start}:{self.stop})"


class Manifest:
    __slots__ = ("path", "dtype", "shape", "order", "shards")

    def __init__(self, path, dtype, shape, order, shards):
        self.path, self.dtype, self.shape, self.order, self.shards = path, dtype, tuple(shape), order, shards

    size = property(lambda self: math.prod(self.shape))


def _int(v, what, where):
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise InvalidArgumentError(f"{where}: {what} must be a non-negative integer, got {v!r}")
    return v


def _text(v, what, where):
    if not isinstance(v, str) or not v:
        raise InvalidArgumentError(f"{where}: {what} must be a non-empty string, got {v!r}")
    return v


def parse_manifest(doc, path="manifest"):
    """A Manifest from the decoded JSON `doc`; `path` names it in errors."""
    if not isinstance(doc, dict):
        raise InvalidArgumentError(f"{path}: not a sharded-array manifest (expected a JSON object)")
    if doc.get("format") != FORMAT:
        raise InvalidArgumentError(f"{path}: not a sharded-array manifest (format {doc.get('format')!r}, "
                                   f"expected {FORMAT!r})")
    version = doc.get("version")
    if version != VERSION:
        raise InvalidArgumentError(f"{path}: manifest version {version!r}; this build reads version {VERSION}")
    dtype = doc.get("dtype")
    if dtype not in _DTYPES:
        raise InvalidArgumentError(f"{path}: dtype {dtype!r} is none of {' '.join(_DTYPES)}")
    shape = doc.get("shape")
    if not isinstance(shape, list):
        raise InvalidArgumentError(f"{path}: shape must be a list of integers, got {shape!r}")
    shape = [_int(d, "each dimension of shape", path) for d in shape]
    order = _int(doc.get("order"), "order", path)
    if order > 8:
        raise InvalidArgumentError(f"{path}: order {order} is above 8")
    entries = doc.get("shards")
    if not isinstance(entries, list) or not entries:
        raise InvalidArgumentError(f"{path}: shards must be a non-empty list")
    shards = []
    at = 0
    for k, e in enumerate(entries):
        where = f"{path}: shard #{k}"
        if not isinstance(e, dict):
            raise InvalidArgumentError(f"{where}: expected an object")
        start, stop = _int(e.get("start"), "start", where), _int(e.get("stop"), "stop", where)
        if start != at:
            raise InvalidArgumentError(f"{where}: starts at {start}, where the shards before it stop ({at})")
        if stop <= start:
            raise InvalidArgumentError(f"{where}: stop {stop} is not past start {start}")
        copies = [Copy(_text(e.get("worker"), "worker", where), _text(e.get("path"), "path", where))]
        replicas = e.get("replicas", [])
        if not isinstance(replicas, list):
            raise InvalidArgumentError(f"{where}: replicas must be a list")
        for r, c in enumerate(replicas):
            if not isinstance(c, dict):
                raise InvalidArgumentError(f"{where}: replica #{r}: expected an object")
            copies.append(Copy(_text(c.get("worker"), "worker", f"{where}: replica #{r}"),
                               _text(c.get("path"), "path", f"{where}: replica #{r}")))
        shards.append(Shard(k, start, stop, copies))
        at = stop
    if at != math.prod(shape):
        raise InvalidArgumentError(f"{path}: the shards end at {at}, but shape {tuple(shape)} holds "
                                   f"{math.prod(shape)} elements")
    return Manifest(path, dtype, shape, order, shards)


def load_manifest(path):
    """The manifest at `path` (a JSON file), checked."""
    path = os.fsdecode(os.fspath(path))
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such manifest") from None
    except OSError as e:  # a folder, a file this user may not read: the class Python gives it
        raise os_error(e, path) from None
    except UnicodeDecodeError as e:
        raise InvalidArgumentError(f"{path}: cannot read the manifest: {e}") from None
    except json.JSONDecodeError as e:
        raise InvalidArgumentError(f"{path}: not JSON: {e}") from None
    return parse_manifest(doc, path)


def save_manifest(manifest, path):
    """Writes `manifest` to `path` through the library's writer (a temporary file synced and
    renamed over it); returns the path."""
    path = os.fsdecode(os.fspath(path))
    shards = [(s.start, s.stop, [(c.worker, c.path) for c in s.copies]) for s in manifest.shards]
    _momenta._write_manifest(path, manifest.dtype, list(manifest.shape), manifest.order, shards)
    return path
