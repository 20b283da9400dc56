// The seam between momenta's errors as values and Python's exceptions.
//
// A failed Status becomes a Python exception of the package's hierarchy
// (python/momenta/_errors.py), carrying the Status's one-line message:
//   kNotFound                                     -> momenta.NotFoundError (FileNotFoundError)
//   kIOError with an errno Python has a class for -> the StorageError that is also that class,
//     errno set (ENOENT NotFoundError, EEXIST ExistsError, EACCES PermissionDeniedError,
//     EISDIR IsDirectoryError, ECONNREFUSED RefusedError, ...: momenta._errors.BY_ERRNO)
//   kIOError otherwise                            -> momenta.StorageError (OSError), errno set
//   kCorruption                                   -> momenta.CorruptionError (StorageError)
//   kNotSupported                                 -> momenta.NotSupportedError (StorageError)
//   kInvalidArgument                              -> momenta.InvalidArgumentError (ValueError)
//   kOutOfRange                                   -> momenta.OutOfRangeError (IndexError)
//   kInterrupted                                  -> momenta.CancelledError (Error)
// The classes are handed over once by the package's __init__ (SetErrorClasses).
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "storage/util/status.h"

namespace momenta::python {

namespace py = pybind11;

// Thrown by the binding code; translated to the class above by the
// translator RegisterErrors installs. REQUIRES: !status.ok()
struct StatusError {
  Status status;
};

// Throws StatusError unless `status` is OK.
inline void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusError{status};
}
// The value of `result`, or throws its status.
template <typename T>
T ValueOrThrow(Result<T>&& result) {
  if (!result.ok()) throw StatusError{result.status()};
  return std::move(result).value();
}

// Registers _set_error_classes(dict) and the translator of StatusError.
void RegisterErrors(py::module_& m);

// Emits each notice as a warning of class momenta.Notice (with the GIL
// held). A warning turned into an error by a filter raises it.
void WarnNotices(const std::vector<std::string>& notices);

}  // namespace momenta::python
