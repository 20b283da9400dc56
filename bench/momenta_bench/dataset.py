"""The bench's array: a sparse f8 .npy of 2^k elements with its data in
scattered regions, every value a formula of its index (so DuckDB can make
the very same data without reading the file), and the ranges it is asked."""
import json
import os
import random

import numpy as np

from common import log, run

ELEM = 8
ALIGN_ELEMS = 1 << 17  # regions start and end on 1 MiB boundaries
CHUNK = 1 << 20        # elements written per pwrite (8 MiB)
MOD, MUL = 1000003, 7919


def values(start, stop):
    """The array's value at every index in [start, stop) inside a region:
    ((i * 7919) mod 1000003) / 1000003 - 0.5, exact in int64 for i < 2^40.
    duckdb_bench.py writes the same expression in SQL."""
    i = np.arange(start, stop, dtype=np.int64)
    return ((i * MUL) % MOD).astype(np.float64) / float(MOD) - 0.5


class Layout:
    """length elements; regions [start, start + region) of data, one in each
    of `count` equal slots at a seeded 1 MiB-aligned offset; holes elsewhere."""

    def __init__(self, length, data_bytes, count, seed):
        self.length = length
        self.region = max(ALIGN_ELEMS, data_bytes // ELEM // count // ALIGN_ELEMS * ALIGN_ELEMS)
        slot = length // count
        if self.region * 4 > slot:
            raise ValueError("data covers more than a quarter of the array")
        rng = random.Random(seed)
        self.starts = [s * slot + rng.randrange(0, (slot - self.region) // ALIGN_ELEMS) * ALIGN_ELEMS
                       for s in range(count)]

    @property
    def data_bytes(self):
        return self.region * len(self.starts) * ELEM

    def in_data(self, i):
        for s in self.starts:
            if s <= i < s + self.region:
                return True
        return False

    def data_inside(self, p, q):
        """Elements of [p, q) inside regions."""
        return sum(max(0, min(q, s + self.region) - max(p, s)) for s in self.starts)

    def to_json(self):
        return {"length": self.length, "region_elements": self.region, "starts": self.starts,
                "data_bytes": self.data_bytes}


def header_bytes(path):
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        return f.tell()


def make_array(cli, path, layout):
    """Creates the sparse array with `momenta create` and writes its regions
    (pwrite, 8 MiB at a time), then fdatasync. Returns the seconds it took."""
    import time
    t0 = time.perf_counter()
    run([cli, "create", path, "--length", str(layout.length), "--dtype", "f8"])
    off = header_bytes(path)
    fd = os.open(path, os.O_WRONLY)
    try:
        for k, s in enumerate(layout.starts):
            for a in range(s, s + layout.region, CHUNK):
                b = min(a + CHUNK, s + layout.region)
                os.pwrite(fd, values(a, b).tobytes(), off + a * ELEM)
            if k % 8 == 7:
                log(f"wrote {k + 1} of {len(layout.starts)} regions")
        os.fdatasync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - t0


def range_lengths(length):
    """1 element to the whole array, by powers of 10^3 (then 10^8), then the whole."""
    out = [n for n in (1, 10**3, 10**6, 10**8, 10**10) if n < length]
    return out + [length]


def draw_ranges(layout, samples, seed):
    """For each range length, `samples` ranges alternating two kinds: 0, the
    start inside a data region; 1, the start anywhere (mostly holes in a
    sparse array). The whole array is one range, asked `samples` times.
    Each range: {"length", "p", "q", "kind", "holes_at_ends"} where
    holes_at_ends is true when both ends fall in holes (no I/O there)."""
    rng = random.Random(seed)
    out = []
    for n in range_lengths(layout.length):
        for k in range(samples):
            if n == layout.length:
                p = 0
            elif k % 2 == 0:
                s = rng.choice(layout.starts)
                p = min(layout.length - n, s + rng.randrange(layout.region))
            else:
                p = rng.randrange(layout.length - n + 1)
            q = p + n
            out.append({"length": n, "p": p, "q": q, "kind": k % 2,
                        "holes_at_ends": not layout.in_data(p) and not layout.in_data(q - 1)})
    return out


def save_layout(path, layout):
    with open(path, "w") as f:
        json.dump(layout.to_json(), f)
