"""The exceptions momenta raises.

Every error is a :class:`momenta.Error`, and each kind also derives from the
built-in exception a Python program would catch for it, so ``except
FileNotFoundError`` or ``except IndexError`` work as they do with NumPy and
h5py. The message is the library's one line, naming the file:
``Out of range: a.npy: range 0:11 is not a range of the array (length 10)``.
"""


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


CLASSES = {
    c.__name__: c
    for c in (Error, InvalidArgumentError, OutOfRangeError, StorageError, NotFoundError, ExistsError,
              PermissionDeniedError, CorruptionError, NotSupportedError, CancelledError, Notice)
}
