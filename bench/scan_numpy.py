#!/usr/bin/python3
"""Cold full scans of ranges of a .npy array with NumPy memmap, for comparison
with momenta's range queries (bench/moments/scans.cc runs it).

    scan_numpy.py ARRAY.npy P:Q [P:Q ...]

For each half-open range [P, Q): drops the file's page cache
(posix_fadvise DONTNEED), then times

    np.load(path, mmap_mode='r')[P:Q].sum()

and prints one line "P Q SECONDS SUM" (SUM with 17 significant digits).
Interpreter start-up and the NumPy import are not timed.
"""
import os
import sys
import time

import numpy as np


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    path = argv[1]
    for text in argv[2:]:
        p, q = (int(x) for x in text.split(":"))
        drop_cache(path)
        t0 = time.perf_counter()
        total = np.load(path, mmap_mode="r")[p:q].sum()
        seconds = time.perf_counter() - t0
        print(f"{p} {q} {seconds:.6f} {float(total):.17g}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
