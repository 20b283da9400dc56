"""What every phase uses: running processes (timed, with their rusage),
making files cold, medians and p99, and the log on stderr."""
import os
import subprocess
import sys
import time


def log(msg):
    print(f"momenta bench: {msg}", file=sys.stderr, flush=True)


class BenchError(Exception):
    """A failure worth one line: the bench stops, cleans up and exits 1."""


def run(argv, stdin=None, env=None):
    """Runs argv to completion. Returns (stdout, wall seconds); a non-zero
    exit raises BenchError naming the command and the end of its stderr."""
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdin=stdin, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise BenchError(f"{os.path.basename(argv[0])} {' '.join(argv[1:3])}... failed ({p.returncode}): "
                         f"{p.stderr.decode(errors='replace').strip()[-300:]}")
    return p.stdout.decode(errors="replace"), wall


def run_rss(argv):
    """Runs argv; (stdout, wall seconds, peak RSS in bytes). Raises BenchError on failure."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise BenchError(f"{os.path.basename(argv[0])} {' '.join(argv[1:3])}... failed ({code}): "
                         f"{err.decode(errors='replace').strip()[-300:]}")
    return out.decode(errors="replace"), wall, usage.ru_maxrss * 1024


def files_under(path):
    """The regular files at path: itself, or every file below a folder."""
    if os.path.isfile(path):
        return [path]
    out = []
    for root, _, names in os.walk(path):
        out.extend(os.path.join(root, n) for n in names)
    return out


def make_cold(*paths):
    """Drops every file at paths (a folder: all files below it) from the page
    cache: posix_fadvise(DONTNEED) after fdatasync (dirty pages would stay).
    No root needed, and other programs' caches are left alone."""
    for path in paths:
        for f in files_under(path):
            try:
                fd = os.open(f, os.O_RDONLY)
            except OSError:
                continue
            try:
                try:
                    os.fdatasync(fd)
                except OSError:
                    pass
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def bytes_on_disk(path):
    return sum(os.stat(f).st_blocks * 512 for f in files_under(path) if os.path.exists(f))


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def p99(xs):
    """The 99th percentile, nearest rank (with fewer than 100 samples: the largest)."""
    xs = sorted(xs)
    if not xs:
        return None
    return xs[min(len(xs) - 1, max(0, -(-99 * len(xs) // 100) - 1))]
