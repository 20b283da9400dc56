"""A read-only Array shared by threads answers each of them exactly as it answers one; the
GIL is released while the library reads or builds (another thread runs meanwhile); a
writer shared by threads serializes their calls."""

import threading

import numpy as np

import momenta


def test_reader_shared_by_threads(rng):
    data = rng.normal(0, 1, 200_000)
    np.save("a.npy", data)
    with momenta.open("a.npy", "r+") as w:
        w.rebuild(leaf=512, fanout=8)
    a = momenta.open("a.npy")
    ranges = [tuple(sorted(int(v) for v in rng.integers(0, len(data) + 1, 2))) for _ in range(300)]
    want = [(a.sum(p, q), a.var(p, q) if q > p else None, a.max(p, q) if q > p else None) for p, q in ranges]
    starts = np.array([p for p, _ in ranges])
    stops = np.array([q for _, q in ranges])
    want_batch = a.stats(starts, stops, ["sum", "moment"])
    failures = []

    def worker(seed):
        order = np.random.default_rng(seed).permutation(len(ranges))
        for _ in range(3):
            for k in order:
                p, q = ranges[k]
                got = (a.sum(p, q), a.var(p, q) if q > p else None, a.max(p, q) if q > p else None)
                if got != want[k]:
                    failures.append((p, q, got, want[k]))
            got = a.stats(starts, stops, ["sum", "moment"])
            if not all(np.array_equal(got[n], want_batch[n]) for n in got):
                failures.append("batch")

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    a.close()
    assert not failures, failures[:5]


def test_gil_is_released_while_the_library_works(rng):
    """A buffer build on open (one pass over 64 MiB) runs while another thread keeps
    counting: had the GIL been held, the counter could not move during the call."""
    np.save("big.npy", rng.normal(size=8 << 20))
    count = 0
    stop = threading.Event()

    def counter():
        nonlocal count
        while not stop.is_set():
            count += 1

    t = threading.Thread(target=counter)
    t.start()
    try:
        before = count
        with momenta.open("big.npy") as a:  # builds the buffer: tens of ms at least
            during = count - before
            assert a.count() == 8 << 20
    finally:
        stop.set()
        t.join()
    assert during > 1000, f"the other thread counted only {during} times during the build"


def test_writer_shared_by_threads():
    """Threads writing disjoint parts through one writer: every write lands, once."""
    w = momenta.create("w.npy", 4000, "i8")
    def worker(k):
        for i in range(100):
            w[k * 1000 + i] = k + 1
            w.update([k * 1000 + 500 + i], [k + 1])
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert w.sum() == sum(200 * (k + 1) for k in range(4))
    assert w.applied_sequence == 800
    w.close()
