"""np.asarray(a) and a.numpy(): a read-only memmap of the file, zero copies, flat resident
memory on a 1 TiB sparse array; the view sees writes made through the log; writes never go
through it."""

import os

import numpy as np
import pytest

import momenta


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def test_zero_copy_view(rng):
    data = rng.normal(size=(3, 1000))
    np.save("a.npy", data)
    with momenta.open("a.npy") as a:
        v = np.asarray(a)
        assert isinstance(a.numpy(), np.memmap)
        assert np.shares_memory(v, a.numpy()) and np.shares_memory(np.asarray(a), v)
        assert v.shape == (3, 1000) and v.dtype == np.float64 and not v.flags.writeable
        np.testing.assert_array_equal(v, data)
        np.testing.assert_array_equal(a[1, 10:20], data[1, 10:20])
        assert np.shares_memory(a[1, 10:20], v)  # a basic index is a view too
        with pytest.raises(ValueError):
            v[0, 0] = 1.0  # read-only: writes must go through the log
        with pytest.raises(ValueError):
            v.flags.writeable = True
        assert np.asarray(a, dtype=np.float32).dtype == np.float32  # a converting copy when asked
        assert not np.shares_memory(np.array(a), v)  # np.array copies, as for any array


def test_view_sees_writes_through_the_log():
    with momenta.create("w.npy", (4, 8), "i2") as w:
        v = w.numpy()
        w[2, 3:6] = [7, -8, 9]
        w.update([0, 31], [1, 2])
        assert v[2, 3:6].tolist() == [7, -8, 9] and v[0, 0] == 1 and v[3, 7] == 2
        assert w.sum() == 7 - 8 + 9 + 1 + 2
        assert w.applied_sequence == 5
    with momenta.open("w.npy") as r:
        assert r.numpy()[2, 3:6].tolist() == [7, -8, 9]


def test_terabyte_sparse_array_keeps_resident_memory_flat():
    """Create and open a 1 TiB array (sparse: nothing allocated), map it, answer over it:
    the process's resident memory grows by the RAM tier and a few pages, not the array."""
    n = 1 << 37  # 2^37 f8 = 1 TiB
    w = momenta.create("big.npy", n)
    w[n - 3:] = [1.0, 2.0, 3.0]
    w[5] = 4.0
    w.close()
    assert os.stat("big.npy").st_blocks * 512 < 64 << 20  # sparse on disk
    before = rss_kib()
    with momenta.open("big.npy") as a:
        v = np.asarray(a)
        assert v.shape == (n,) and v.nbytes == 1 << 40
        assert np.shares_memory(v, a.numpy())
        assert a.sum() == 10.0 and a.sum(n - 3, n) == 6.0 and a.max() == 4.0 and a.count() == n
        assert v[n - 1] == 3.0 and v[5] == 4.0 and v[1 << 36] == 0.0
        grown = rss_kib() - before
    # The RAM tier of 1 TiB is 1 MiB; measured: under 1 MiB; the bound leaves room for allocations.
    assert grown < 16 << 10, f"resident memory grew by {grown} KiB opening and querying a 1 TiB array"


def test_empty_and_zero_d_arrays():
    np.save("e.npy", np.zeros((3, 0)))
    with momenta.open("e.npy") as a:
        assert a.shape == (3, 0) and a.size == 0 and len(a) == 3
        assert np.asarray(a).shape == (3, 0)
        assert a.sum() == 0 and a.count() == 0
        with pytest.raises(momenta.InvalidArgumentError, match="the range is empty"):
            a.mean()
    np.save("z.npy", np.array(2.5))
    with momenta.open("z.npy") as a:
        assert a.shape == () and a.size == 1 and a.sum() == 2.5
        assert np.asarray(a)[()] == 2.5
        with pytest.raises(TypeError):
            len(a)
