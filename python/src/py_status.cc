#include "python/src/py_status.h"

namespace momenta::python {
namespace {

// The package's classes, by role; set once by _set_error_classes. Leaked on
// purpose: destroying Python objects after the interpreter ended would crash.
struct ErrorClasses {
  py::object base, not_found, storage, corruption, not_supported, invalid, out_of_range, cancelled, notice;
  py::dict by_errno;  // errno -> the StorageError that is also Python's OSError class for it
};
ErrorClasses* g_classes = nullptr;

py::object ClassFor(const Status& s) {
  const ErrorClasses& c = *g_classes;
  switch (s.code()) {
    case Status::Code::kNotFound:
      return c.not_found;
    case Status::Code::kIOError: {
      const py::int_ number(s.sys_errno());
      if (c.by_errno.contains(number)) return c.by_errno[number].cast<py::object>();
      return c.storage;
    }
    case Status::Code::kCorruption:
      return c.corruption;
    case Status::Code::kNotSupported:
      return c.not_supported;
    case Status::Code::kInvalidArgument:
      return c.invalid;
    case Status::Code::kOutOfRange:
      return c.out_of_range;
    case Status::Code::kInterrupted:
      return c.cancelled;
    case Status::Code::kOk:
      break;
  }
  return c.base;
}

void Raise(const Status& s) {
  if (!g_classes) {  // the package's __init__ did not run (the extension imported alone)
    PyErr_SetString(PyExc_RuntimeError, s.ToString().c_str());
    return;
  }
  const py::object cls = ClassFor(s);
  py::object e = cls(py::str(s.ToString()));
  // OSError subclasses: errno as an attribute; the message stays the library's line.
  if (s.sys_errno() != 0 && PyObject_IsSubclass(cls.ptr(), PyExc_OSError) == 1) e.attr("errno") = s.sys_errno();
  PyErr_SetObject(cls.ptr(), e.ptr());
}

}  // namespace

void RegisterErrors(py::module_& m) {
  m.def(
      "_set_error_classes",
      [](const py::dict& d) {
        auto* c = new ErrorClasses;
        c->base = d["Error"];
        c->not_found = d["NotFoundError"];
        c->storage = d["StorageError"];
        c->corruption = d["CorruptionError"];
        c->not_supported = d["NotSupportedError"];
        c->invalid = d["InvalidArgumentError"];
        c->out_of_range = d["OutOfRangeError"];
        c->cancelled = d["CancelledError"];
        c->notice = d["Notice"];
        c->by_errno = d["by_errno"].cast<py::dict>();
        delete g_classes;  // a second call (importlib.reload) replaces the first
        g_classes = c;
      },
      "Hands the exception classes to the extension (the package's __init__ does it once).");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      Raise(e.status);
    }
  });
}

void WarnNotices(const std::vector<std::string>& notices) {
  for (const std::string& n : notices) {
    PyObject* cls = g_classes ? g_classes->notice.ptr() : PyExc_UserWarning;
    // stacklevel 2: the caller of the package's function that called in here.
    if (PyErr_WarnEx(cls, n.c_str(), 2) != 0) throw py::error_already_set();
  }
}

}  // namespace momenta::python
