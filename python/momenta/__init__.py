"""momenta: terabyte NumPy arrays on disk, with range statistics that cost what a few reads
cost, an update log, and sliding-window monitoring.

    import numpy as np, momenta
    with momenta.create("big.npy", shape=2**40) as a:     # 8 TiB of f8, sparse: instant
        a[1000:1003] = [1.5, 2.5, 3.5]                     # through the log and the buffer
        a.mean(0, 2**40), a.var(1000, 1003, ddof=1)

The import name is `momenta`; no distribution of this project is published on the public
Python index (a package of that name there is an unrelated project). It is built and
installed with the project (python/README.md).
"""

from . import _momenta
from ._errors import (AbortedError, CancelledError, ConnectionFailedError, CorruptionError, Error, ExistsError,
                      InvalidArgumentError, IsDirectoryError, NotDirectoryError, NotFoundError, NotSupportedError,
                      Notice, OutOfRangeError, PermissionDeniedError, PipeClosedError, RefusedError, ResetError,
                      StorageError, TimedOutError, BY_ERRNO, CLASSES)
from ._array import Approx, Array, create, open  # noqa: A004 (momenta.open, as h5py.File / numpy.load)
from ._stream import Client, Window
from ._summary import Summary, merge_summaries, summary_stat
from .remote import Remote, RemoteArray, remote

_momenta._set_error_classes(dict(CLASSES, by_errno=BY_ERRNO))
del CLASSES, BY_ERRNO

STATISTICS = tuple(_momenta.kStatNames)
__version__ = _momenta.__version__

__all__ = ["Approx", "Array", "Client", "Window", "create", "open", "remote", "Remote", "RemoteArray", "Summary", "merge_summaries", "summary_stat", "STATISTICS", "Error", "InvalidArgumentError",
           "OutOfRangeError", "StorageError", "NotFoundError", "ExistsError", "PermissionDeniedError",
           "CorruptionError", "NotSupportedError", "CancelledError", "Notice", "IsDirectoryError",
           "NotDirectoryError", "ConnectionFailedError", "RefusedError", "ResetError", "AbortedError",
           "PipeClosedError", "TimedOutError"]
