"""Every bad input is a momenta.Error of the right kind — also the matching built-in
(FileNotFoundError, FileExistsError, PermissionError, ValueError, IndexError, OSError) — with
the library's one-line message; nothing crashes the interpreter and nothing is changed."""

import errno
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import momenta


def raises(kind, builtin, match, f, *args, **kwargs):
    with pytest.raises(kind, match=match) as e:
        f(*args, **kwargs)
    assert isinstance(e.value, momenta.Error) and isinstance(e.value, builtin)
    assert "\n" not in str(e.value), str(e.value)
    return e.value


@pytest.fixture
def arr():
    np.save("a.npy", np.arange(10, dtype=np.float64))
    with momenta.open("a.npy") as a:
        yield a


def test_opening(tmp_path):
    e = raises(momenta.NotFoundError, FileNotFoundError, "nope.npy: No such file", momenta.open, "nope.npy")
    assert e.errno == 2
    raises(momenta.InvalidArgumentError, ValueError, "mode", momenta.open, "a.npy", "w")
    raises(momenta.InvalidArgumentError, ValueError, "io: 'fast'", momenta.open, "a.npy", io="fast")
    raises(momenta.InvalidArgumentError, ValueError, "sync", momenta.open, "a.npy", "r+", sync="sometimes")
    raises(momenta.InvalidArgumentError, ValueError, "path", momenta.open, 42)
    open("text.npy", "w").write("not an array\n")
    raises(momenta.CorruptionError, OSError, "text.npy", momenta.open, "text.npy")
    np.save("big_endian.npy", np.arange(4, dtype=">f8"))
    raises(momenta.NotSupportedError, OSError, "big_endian.npy", momenta.open, "big_endian.npy")
    np.save("fortran.npy", np.asfortranarray(np.zeros((3, 4))))
    raises(momenta.NotSupportedError, OSError, "fortran", momenta.open, "fortran.npy")
    np.save("c16.npy", np.zeros(3, dtype=np.complex128))
    raises(momenta.NotSupportedError, OSError, "c16.npy", momenta.open, "c16.npy")
    os.mkdir("folder.npy")  # as open() of a folder: IsADirectoryError
    e = raises(momenta.IsDirectoryError, IsADirectoryError, "folder.npy: Is a directory", momenta.open, "folder.npy")
    assert isinstance(e, momenta.StorageError) and e.errno == errno.EISDIR
    open("file", "w").close()  # a file as a folder of the path: NotADirectoryError
    raises(momenta.NotDirectoryError, NotADirectoryError, "file/a.npy: Not a directory", momenta.open, "file/a.npy")


def test_classes_print_as_imported_and_match_python_by_errno():
    """Each class is momenta.<Name> (where users import it from), and an operating-system
    error is the class Python's own OSError(errno, ...) is, as open() raises it."""
    for name in momenta.__all__:
        c = getattr(momenta, name)
        if isinstance(c, type) and issubclass(c, (momenta.Error, momenta.Notice)):
            assert c.__module__ == "momenta" and repr(c) == f"<class 'momenta.{name}'>", repr(c)
    e = momenta.NotFoundError("Not found: x")
    assert repr(e) == "NotFoundError('Not found: x')" and type(e).__module__ + "." + type(e).__qualname__ == \
        "momenta.NotFoundError"
    import pickle
    assert type(pickle.loads(pickle.dumps(e))) is momenta.NotFoundError
    for number, cls in momenta._errors.BY_ERRNO.items():
        assert isinstance(cls(""), type(OSError(number, ""))), (errno.errorcode[number], cls)
    for number in (errno.ENOENT, errno.EEXIST, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR,
                   errno.ECONNREFUSED, errno.ECONNRESET, errno.EPIPE, errno.ETIMEDOUT):
        builtin = type(OSError(number, ""))
        assert issubclass(momenta._errors.os_error_class(number), (builtin, momenta.StorageError)), builtin
    assert momenta._errors.os_error_class(errno.ENOSPC) is momenta.StorageError
    from momenta.dask import load_manifest  # errors raised in Python take the same classes
    os.mkdir("m.json")
    e = raises(momenta.IsDirectoryError, IsADirectoryError, "IO error: m.json: Is a directory", load_manifest, "m.json")
    assert e.errno == errno.EISDIR
    raises(momenta.NotFoundError, FileNotFoundError, "none.json: no such manifest", load_manifest, "none.json")


def test_creating():
    momenta.create("a.npy", 10).close()
    raises(momenta.ExistsError, FileExistsError, "a.npy: File exists", momenta.create, "a.npy", 10)
    raises(momenta.InvalidArgumentError, ValueError, "dtype", momenta.create, "b.npy", 10, "c16")
    raises(momenta.InvalidArgumentError, ValueError, "big-endian", momenta.create, "b.npy", 10, ">f8")
    raises(momenta.InvalidArgumentError, ValueError, "not a NumPy dtype", momenta.create, "b.npy", 10, "nonsense")
    raises(momenta.InvalidArgumentError, ValueError, "shape", momenta.create, "b.npy", (3, -1))
    raises(momenta.InvalidArgumentError, ValueError, "shape", momenta.create, "b.npy", "ten")
    raises(momenta.InvalidArgumentError, ValueError, "order: 9", momenta.create, "b.npy", 10, order=9)
    raises(momenta.InvalidArgumentError, ValueError, "fanout", momenta.create, "b.npy", 10, fanout=1)
    raises(momenta.InvalidArgumentError, ValueError, "shape", momenta.create, "b.npy", (1 << 40, 1 << 40))
    raises(momenta.NotFoundError, FileNotFoundError, "No such file", momenta.create, "no/such/dir/b.npy", 10)
    assert not os.path.exists("b.npy") and not os.path.exists("b.npy.momenta")  # nothing left behind


def test_a_create_whose_buffer_fails_leaves_nothing(tmp_path):
    """The array is made, its buffer cannot be (its sidecar under a plain file): the array
    file goes too (the library's create-with-rollback, as `momenta create`), so a retry works."""
    plain = tmp_path / "plain"
    plain.write_text("x")
    path = tmp_path / "c.npy"
    with pytest.raises(momenta.Error):
        momenta.create(path, 100, sidecar=str(plain / "side"))
    assert not path.exists()
    momenta.create(path, 100, sidecar=str(tmp_path / "side")).close()
    assert path.exists()


def test_ranges_and_indices(arr):
    raises(momenta.OutOfRangeError, IndexError, r"range 0:11 is not a range of the array \(length 10\)",
           arr.sum, 0, 11)
    raises(momenta.OutOfRangeError, IndexError, "range 5:3", arr.mean, 5, 3)
    raises(momenta.OutOfRangeError, IndexError, "range -11:", arr.sum, -11, 10)
    raises(momenta.OutOfRangeError, IndexError, "not a range", arr.sum, 0, 1 << 70)
    raises(momenta.InvalidArgumentError, ValueError, "integers", arr.sum, 0.5, 3)
    raises(momenta.OutOfRangeError, IndexError, "index 10 is out of bounds for axis 0", arr.sum, 10)
    raises(momenta.InvalidArgumentError, ValueError, "step 2", arr.sum, np.s_[0:10:2])
    raises(momenta.InvalidArgumentError, ValueError, "index arrays", arr.sum, [1, 2])
    raises(momenta.OutOfRangeError, IndexError, "too many indices", arr.sum, np.s_[1, 2])
    raises(momenta.OutOfRangeError, IndexError, "axis 1 is out of bounds", arr.sum, None, axis=1)
    raises(momenta.OutOfRangeError, IndexError, r"range #0 0:11 is outside the array \(length 10\)", arr.stats,
           [0], [11])
    raises(momenta.OutOfRangeError, IndexError, "outside the array", arr.stats, [0, 4], [3, 2])
    raises(momenta.InvalidArgumentError, ValueError, "broadcast", arr.stats, [0, 1], [3, 4, 5])
    raises(momenta.InvalidArgumentError, ValueError, "integers", arr.stats, [0.5], [3])
    raises(momenta.OutOfRangeError, IndexError, "out of bounds", arr.__getitem__, 12)


def test_n_d_selections():
    momenta.create("m.npy", (4, 100), "f4").close()
    with momenta.open("m.npy") as a:
        raises(momenta.InvalidArgumentError, ValueError, "axis=", a.mean, np.s_[0:2, 10:20])
        raises(momenta.InvalidArgumentError, ValueError, "last ones", a.mean, np.s_[0:2, 10:20], axis=0)
        raises(momenta.InvalidArgumentError, ValueError, "newaxis", a.mean, np.s_[None, 1])
        raises(momenta.InvalidArgumentError, ValueError, "single ellipsis", a.sum, np.s_[..., 1, ...])
        raises(momenta.InvalidArgumentError, ValueError, "flat range", a.sum, 0, 10, axis=-1)


def test_statistics_parameters(arr):
    raises(momenta.InvalidArgumentError, ValueError, "mean: the range is empty", arr.mean, 3, 3)
    raises(momenta.InvalidArgumentError, ValueError, "min: the range is empty", arr.min, 3, 3)
    raises(momenta.InvalidArgumentError, ValueError, "order", arr.moment, 3)  # above the buffer's J = 2
    raises(momenta.InvalidArgumentError, ValueError, "k: -1", arr.moment, -1)
    raises(momenta.InvalidArgumentError, ValueError, "degree", arr.polyfit, 3)
    raises(momenta.InvalidArgumentError, ValueError, "ddof: -1", arr.var, ddof=-1)
    raises(momenta.InvalidArgumentError, ValueError, "ddof 5", arr.var, 0, 3, ddof=5)
    raises(momenta.InvalidArgumentError, ValueError, "finite", arr.moment, 1, about=float("nan"))
    raises(momenta.InvalidArgumentError, ValueError, "about", arr.moment, 1, about="middle")
    raises(momenta.InvalidArgumentError, ValueError, "unknown statistic 'median'", arr.stats, [0], [3], ["median"])
    raises(momenta.InvalidArgumentError, ValueError, "no statistic", arr.stats, [0], [3], [])
    raises(momenta.InvalidArgumentError, ValueError, r"range #1 3:3: .*mean: the range is empty", arr.stats,
           [0, 3], [3, 3], ["mean"])
    raises(momenta.InvalidArgumentError, ValueError, "bins 11", arr.overview, 0, 10, 11)
    raises(momenta.InvalidArgumentError, ValueError, "bins 0", arr.overview, 0, 10, 0)
    zeros = momenta.create("z.npy", 5)
    raises(momenta.InvalidArgumentError, ValueError, "com", zeros.com)  # weights summing to 0
    zeros.close()


def test_writes():
    with momenta.create("u.npy", 10, "u1") as w:
        raises(momenta.InvalidArgumentError, ValueError, "value '300' does not fit dtype u1", w.__setitem__, 3, 300)
        raises(momenta.InvalidArgumentError, ValueError, "value '-1' does not fit dtype u1", w.update, [1, 2],
               [5, -1])
        raises(momenta.InvalidArgumentError, ValueError, "value '1.5' does not fit dtype u1", w.__setitem__,
               np.s_[0:2], [1.0, 1.5])
        raises(momenta.InvalidArgumentError, ValueError, "value 'nan' does not fit", w.__setitem__, 0, np.nan)
        raises(momenta.OutOfRangeError, IndexError, "past the end", w.update, [3, 10], [1, 1])
        raises(momenta.OutOfRangeError, IndexError, "before the start", w.update, [-11], [1])
        raises(momenta.InvalidArgumentError, ValueError, "broadcast", w.__setitem__, np.s_[0:3], [1, 2])
        raises(momenta.InvalidArgumentError, ValueError, "expected numbers", w.__setitem__, 0, "seven")
        raises(momenta.InvalidArgumentError, ValueError, "indices must be integers", w.update, [0.5], [1])
        raises(momenta.InvalidArgumentError, ValueError, "times", w.update, [1, 2], [1, 2], times=[1.5, 2.5])
        raises(momenta.InvalidArgumentError, ValueError, "64-bit", w.update, [0], [1 << 70])
        assert w.sum() == 0 and w.applied_sequence == 0  # nothing was written by any of them
        w[9] = 255
        w[np.array([True] * 10)] = 1  # a mask of the whole shape
        assert w.sum() == 10
    with momenta.create("f.npy", 4, "f4") as w:
        raises(momenta.InvalidArgumentError, ValueError, "does not fit dtype f4", w.__setitem__, 0, 1e300)
    np.save("r.npy", np.zeros(4))
    with momenta.open("r.npy") as r:
        raises(momenta.InvalidArgumentError, ValueError, "opened read-only", r.__setitem__, 0, 1.0)
        raises(momenta.InvalidArgumentError, ValueError, "read-only", r.update, [0], [1.0])


def test_second_writer_and_closed_array():
    w = momenta.create("a.npy", 10)
    raises(momenta.Error, OSError, "locked by another writer", momenta.open, "a.npy", "r+")
    w.close()
    w.close()  # idempotent
    raises(momenta.InvalidArgumentError, ValueError, "the array is closed", w.sum)
    raises(momenta.InvalidArgumentError, ValueError, "the array is closed", w.__setitem__, 0, 1.0)
    raises(momenta.InvalidArgumentError, ValueError, "the array is closed", w.stats, [0], [1])


def test_window_and_client_arguments():
    raises(momenta.InvalidArgumentError, ValueError, "eps", momenta.Window, window=10, eps=0)
    raises(momenta.InvalidArgumentError, ValueError, "eps", momenta.Window, window=10, eps=1.5)
    raises(momenta.InvalidArgumentError, ValueError, "window", momenta.Window, window=0, eps=0.1)
    raises(momenta.InvalidArgumentError, ValueError, "window", momenta.Window, window="soon", eps=0.1)
    raises(momenta.InvalidArgumentError, ValueError, "tardiness", momenta.Window, window=10, eps=0.1, tardiness=10)
    w = momenta.Window(window=10, eps=0.1)
    w.update([5, 6], [1, 2])
    raises(momenta.InvalidArgumentError, ValueError, "before the clock", w.advance, 3)
    raises(momenta.InvalidArgumentError, ValueError, "outside", w.update, [1 << 62], [1])
    raises(momenta.InvalidArgumentError, ValueError, "one length", w.update, [1, 2, 3], [1, 2])
    raises(momenta.InvalidArgumentError, ValueError, "integers", w.update, [1.5], [1])
    raises(momenta.InvalidArgumentError, ValueError, "phi", w.frequent, 0)
    raises(momenta.InvalidArgumentError, ValueError, "phi", w.quantile, 1.5)
    raises(momenta.InvalidArgumentError, ValueError, "address", momenta.Client, "no-port-here:")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    e = raises(momenta.RefusedError, ConnectionRefusedError, f"127.0.0.1:{port}: Connection refused", momenta.Client,
               f"127.0.0.1:{port}", timeout=2)
    assert isinstance(e, momenta.ConnectionFailedError) and e.errno == errno.ECONNREFUSED


def test_bad_input_never_crashes_the_interpreter():
    """The same bad calls in a fresh interpreter end with a Python exception, not a signal."""
    code = ("import momenta, numpy as np\n"
            "for f in (lambda: momenta.open('x'), lambda: momenta.create('y.npy', -1),\n"
            "          lambda: momenta.Window(window=-5, eps=2)):\n"
            "    try: f()\n"
            "    except momenta.Error as e: print(type(e).__name__)\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(momenta.__file__))))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["NotFoundError", "InvalidArgumentError", "InvalidArgumentError"]
