"""What every phase uses: running processes (timed, with their rusage),
making files cold, medians and p99, and the log on stderr."""
import os
import subprocess
import sys
import tempfile
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


def spawn(argv, env=None, text=False):
    """Runs argv to completion: (exit code, stdout, stderr, wall seconds, its
    rusage). stderr goes to a file, not a pipe read after stdout: a child's
    long stderr cannot block it."""
    with tempfile.TemporaryFile("w+" if text else "w+b") as errf:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, env=env, text=text)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        errf.seek(0)
        return os.waitstatus_to_exitcode(status), out, errf.read(), wall, usage


def run_counted(argv, env=None):
    """Runs argv; (stdout, wall seconds, device bytes it read). The bytes are
    the child's ru_inblock (task I/O accounting: what the device delivered to
    it, O_DIRECT and io_uring included; holes and cached pages count 0).
    Raises BenchError on failure."""
    code, out, err, wall, usage = spawn(argv, env)
    if code != 0:
        raise BenchError(f"{os.path.basename(argv[0])} {' '.join(argv[1:3])}... failed ({code}): "
                         f"{err.decode(errors='replace').strip()[-300:]}")
    return out.decode(errors="replace"), wall, usage.ru_inblock * 512


def peak_rss(argv):
    """Peak RSS in bytes of one run of argv, by /usr/bin/time (GNU time): the
    rusage a parent gets counts its own pages at fork, the bench's memmaps
    included, so a small child forked from it would look big."""
    import tempfile
    with tempfile.NamedTemporaryFile("r") as f:
        run(["/usr/bin/time", "-f", "%M", "-o", f.name] + argv)
        return int(f.read().strip().splitlines()[-1]) * 1024


def own_device_bytes():
    """Bytes the device delivered to this process so far (/proc/self/io read_bytes)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    return 0


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
