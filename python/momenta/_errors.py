"""The exceptions momenta raises.

Every error is a :class:`momenta.Error`, and each kind also derives from the
built-in exception a Python program would catch for it, so ``except
FileNotFoundError`` or ``except IndexError`` work as they do with NumPy and
h5py. The message is the library's one line, naming the file:
``Out of range: a.npy: range 0:11 is not a range of the array (length 10)``.

An error the operating system gave is the class Python's own ``OSError(errno, ...)`` would
be (as ``open()`` raises ``IsADirectoryError`` for a folder), also a
:class:`momenta.StorageError` with ``errno`` set: see :func:`os_error_class`. Every class
prints as ``momenta.<name>``, the name it is imported under.
"""

import errno as _errno


class Error(Exception):
    """Base class of every error momenta raises."""


class InvalidArgumentError(Error, ValueError):
    """The call asked for something malformed: a bad dtype, a value that does not fit, the
    mean of an empty range, an order above the buffer's, a closed array."""


class OutOfRangeError(Error, IndexError):
    """An index or a range outside the array."""


class StorageError(Error, OSError):
    """The operating system refused (open, read, write, sync, ring set-up); ``errno`` is set
    when the system gave one."""


class NotFoundError(StorageError, FileNotFoundError):
    """A file (or a sidecar folder) that does not exist."""


class ExistsError(StorageError, FileExistsError):
    """``create`` of a path that exists."""


class PermissionDeniedError(StorageError, PermissionError):
    """The file or its sidecar may not be read or written by this user."""


class IsDirectoryError(StorageError, IsADirectoryError):
    """A folder where a file was expected (EISDIR)."""


class NotDirectoryError(StorageError, NotADirectoryError):
    """A file where a folder was expected, as a part of a path (ENOTDIR)."""


class ConnectionFailedError(StorageError, ConnectionError):
    """A connection to a peer (a monitor's root) that could not be made or was lost."""


class RefusedError(ConnectionFailedError, ConnectionRefusedError):
    """Nothing listens at the address (ECONNREFUSED)."""


class ResetError(ConnectionFailedError, ConnectionResetError):
    """The peer reset the connection (ECONNRESET)."""


class AbortedError(ConnectionFailedError, ConnectionAbortedError):
    """The connection was aborted on this side (ECONNABORTED)."""


class PipeClosedError(ConnectionFailedError, BrokenPipeError):
    """A write to a connection the peer has closed (EPIPE, ESHUTDOWN)."""


class TimedOutError(StorageError, TimeoutError):
    """The system gave up waiting (ETIMEDOUT)."""


class CorruptionError(StorageError):
    """Bytes on disk are not what their format promises (a foreign or damaged header, a
    damaged log)."""


class NotSupportedError(StorageError):
    """Valid, but not handled: a big-endian or Fortran-order ``.npy``, an unsupported dtype,
    ``io="uring"`` where the kernel grants no ring."""


class CancelledError(Error):
    """Long work stopped on request at a consistent point."""


class Notice(UserWarning):
    """What the library says besides an answer (the CLI prints it on stderr): the I/O
    backend it fell back to, a buffer it built or rebuilt and why, a recovery."""


_OS_CLASSES = (NotFoundError, ExistsError, PermissionDeniedError, IsDirectoryError, NotDirectoryError,
               ConnectionFailedError, RefusedError, ResetError, AbortedError, PipeClosedError, TimedOutError)
# errno -> the class of its error: the StorageError that is also the built-in class Python's
# OSError(errno, ...) is (FileNotFoundError for ENOENT, IsADirectoryError for EISDIR, ...).
BY_ERRNO = {}
for _e in sorted(_errno.errorcode):
    _builtin = type(OSError(_e, ""))
    _ours = [c for c in _OS_CLASSES if _builtin in c.__bases__]
    if _ours:
        BY_ERRNO[_e] = _ours[0]


def os_error_class(number):
    """The momenta class of an operating-system error with errno `number` (StorageError when
    Python names no narrower built-in class for it)."""
    return BY_ERRNO.get(number, StorageError)


def os_error(e, what):
    """The momenta error for the OSError `e` met while doing `what` (a path, or what was
    done to it): its class by errno, the message "IO error: <what>: <strerror>", errno set."""
    err = os_error_class(e.errno)(f"IO error: {what}: {e.strerror or e}")
    err.errno = e.errno
    return err


CLASSES = {
    c.__name__: c
    for c in (Error, InvalidArgumentError, OutOfRangeError, StorageError, CorruptionError, NotSupportedError,
              CancelledError, Notice) + _OS_CLASSES
}
for _c in CLASSES.values():
    _c.__module__ = "momenta"  # momenta.NotFoundError in tracebacks and reprs, where users import it from
