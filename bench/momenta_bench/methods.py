"""One query by each method: momenta's CLI over one of its buffers, the plain
scan (scan_driver), NumPy memmap. Each returns a sample: seconds inside the
process (in_s), of the whole process (wall_s, None when there is none), the
bytes it asked for (bytes: the CLI's array + tier bytes, the scan's reads,
NumPy's slice), the bytes the device delivered (device_bytes: holes and
cached pages are free), and the answer (sum) when it has one."""
import json
import time

import numpy as np

from common import make_cold, own_device_bytes, run_counted

# The statistics asked, each one query: the CLI's flags.
STATS = {"sum": ["--stat", "sum"], "moments": ["--stat", "moments", "--order", "2"],
         "var": ["--stat", "var"], "minmax": ["--stat", "min", "--stat", "max"]}


class Buffer:
    """A momenta buffer over the array: its kind's name, its sidecar folder
    and the build flags that made it."""

    def __init__(self, name, sidecar, flags):
        self.name, self.sidecar, self.flags = name, sidecar, flags


def momenta_query(cli, array, buf, p, q, stat, cold):
    if cold:
        make_cold(array, buf.sidecar)
    out, wall, dev = run_counted([cli, "query", array, "--range", f"{p}:{q}", *STATS[stat], "--sidecar",
                                  buf.sidecar, "--json"])
    j = json.loads(out.strip().splitlines()[-1])
    return {"in_s": j["elapsed_us"] / 1e6, "wall_s": wall, "device_bytes": dev,
            "bytes": j["array_bytes_read"] + j.get("tier_bytes_read", 0),
            "array_bytes": j["array_bytes_read"], "sum": j["stats"].get("sum")}


def scan_query(scan_driver, array, p, q, cold):
    if cold:
        make_cold(array)
    out, wall, dev = run_counted([scan_driver, array, f"{p}:{q}"])
    j = json.loads(out)
    return {"in_s": j["elapsed_us"] / 1e6, "wall_s": wall, "device_bytes": dev, "bytes": j["bytes_read"],
            "array_bytes": j["bytes_read"], "sum": j["sum"], "io": j["io"]}


NUMPY_CHUNK = 1 << 22


def _numpy_stat(x, p, q, stat):
    """The statistic over x[p:q] as a NumPy user writes it (chunked where a
    whole-range temporary would not fit: moments' index weights)."""
    v = x[p:q]
    if stat == "sum":
        return float(v.sum())
    if stat == "var":
        return float(v.var())
    if stat == "minmax":
        return (float(v.min()), float(v.max()))
    m = [0.0, 0.0, 0.0]
    for a in range(0, q - p, NUMPY_CHUNK):
        c = v[a:a + NUMPY_CHUNK]
        w = np.arange(a, a + len(c), dtype=np.float64)
        m[0] += float(c.sum())
        m[1] += float(np.dot(w, c))
        m[2] += float(np.dot(w * w, c))
    return m


def numpy_query(array, p, q, stat, cold):
    if cold:
        make_cold(array)
    dev0 = own_device_bytes()
    t0 = time.perf_counter()
    x = np.load(array, mmap_mode="r")
    r = _numpy_stat(x, p, q, stat)
    seconds = time.perf_counter() - t0
    dev = own_device_bytes() - dev0
    del x
    return {"in_s": seconds, "wall_s": None, "device_bytes": dev, "bytes": (q - p) * 8, "array_bytes": (q - p) * 8,
            "sum": r if stat == "sum" else None}
