// The extension module momenta._momenta: the compiled half of the package
// (python/momenta/ is the other). Its names start with an underscore or are
// constants; the package's Python layer is the API (python/README.md).
#include <pybind11/pybind11.h>

#include "python/src/array_handle.h"
#include "python/src/interruptible.h"
#include "python/src/py_status.h"
#include "python/src/shard_binding.h"
#include "python/src/stream_binding.h"
#include "python/src/summary_binding.h"

namespace momenta::python {
namespace {
unsigned long g_main_thread = 0;  // PyThread_get_thread_ident() of the main thread
}  // namespace

bool OnMainThread() { return PyThread_get_thread_ident() == g_main_thread; }

}  // namespace momenta::python

PYBIND11_MODULE(_momenta, m) {
  namespace mp = momenta::python;
  m.doc() = "momenta's compiled core; use the momenta package, not this module";
  m.attr("__version__") = MOMENTA_VERSION;
  mp::g_main_thread = pybind11::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  mp::RegisterErrors(m);
  mp::RegisterArray(m);
  mp::RegisterSummary(m);
  mp::RegisterStream(m);
  mp::RegisterShards(m);
}
