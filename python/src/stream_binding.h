// The monitor from Python: a sliding-window Summarizer over items given as
// NumPy arrays (momenta.Window), and a client of a running root's line
// protocol (momenta.Client). Both release the GIL while they work or wait;
// a window's calls are serialized by the window (the Summarizer is not
// thread-safe), a client's by the client.
#pragma once

#include <pybind11/pybind11.h>

namespace momenta::python {

namespace py = pybind11;

void RegisterStream(py::module_& m);

}  // namespace momenta::python
