#include "python/src/stream_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "python/src/py_status.h"
#include "stream/net/net_socket.h"
#include "stream/net/query_client.h"
#include "stream/window/summarizer.h"

namespace momenta::python {
namespace {

// A Summarizer (stream/window/summarizer.h) and the lock its calls take.
class WindowHandle {
 public:
  WindowHandle(int64_t window, int64_t tardiness, double eps)
      : spec_{window, tardiness}, s_(ValueOrThrow(Summarizer::Create(spec_, eps))) {}

  // Adds items[k] stamped times[k], in order; returns how many were accepted
  // (the others were later than the tardiness allows: dropped). Every time
  // is checked (|t| <= 2^61) before any item is added.
  uint64_t Update(const py::array_t<int64_t>& times, const py::array_t<int64_t>& items) {
    if (times.ndim() != 1 || items.ndim() != 1 || times.size() != items.size())
      ThrowIfError(Status::InvalidArgument("window", "times and items must be 1-d arrays of one length"));
    const int64_t* t = times.data();
    const int64_t* it = items.data();
    const auto n = static_cast<size_t>(times.size());
    for (size_t k = 0; k < n; ++k) CheckTime(t[k], "time #" + std::to_string(k));
    py::gil_scoped_release unlocked;
    std::lock_guard hold(mu_);
    uint64_t accepted = 0;
    for (size_t k = 0; k < n; ++k) accepted += s_.Add(t[k], it[k]) ? 1 : 0;
    return accepted;
  }

  // Moves the clock to t (items expire as it passes them).
  void Advance(int64_t t) {
    CheckTime(t, "time");
    std::lock_guard hold(mu_);
    if (t < s_.now())
      ThrowIfError(Status::InvalidArgument(
          "window", "time " + std::to_string(t) + " is before the clock (" + std::to_string(s_.now()) + ")"));
    s_.AdvanceTo(t);
  }

  double Count() {
    std::lock_guard hold(mu_);
    return s_.count().Estimate();
  }
  std::pair<uint64_t, uint64_t> CountBounds() {
    std::lock_guard hold(mu_);
    return {s_.count().Low(), s_.count().High()};
  }
  std::vector<std::pair<int64_t, double>> Frequent(double phi) {
    if (!(phi > 0 && phi <= 1))
      ThrowIfError(Status::InvalidArgument("frequent", "phi must lie in (0, 1], got " + Number(phi)));
    std::lock_guard hold(mu_);
    std::vector<std::pair<int64_t, double>> out;
    for (const ItemEstimate& e : s_.items().Frequent(phi)) out.emplace_back(e.item, e.count);
    return out;
  }
  std::vector<std::pair<int64_t, double>> Top(size_t k) {
    std::lock_guard hold(mu_);
    std::vector<std::pair<int64_t, double>> out;
    for (const ItemEstimate& e : s_.items().Top(k)) out.emplace_back(e.item, e.count);
    return out;
  }
  double Estimate(int64_t item) {
    std::lock_guard hold(mu_);
    return s_.items().Estimate(item);
  }
  std::optional<int64_t> Quantile(double phi) {
    if (!(phi >= 0 && phi <= 1))
      ThrowIfError(Status::InvalidArgument("quantile", "phi must lie in [0, 1], got " + Number(phi)));
    std::lock_guard hold(mu_);
    return s_.quantiles().Quantile(phi);
  }
  std::optional<int64_t> Now() {
    std::lock_guard hold(mu_);
    if (s_.now() == -kMaxTime) return std::nullopt;  // no item and no advance yet
    return s_.now();
  }
  uint64_t Dropped() {
    std::lock_guard hold(mu_);
    return s_.dropped();
  }
  size_t MemoryBytes() {
    std::lock_guard hold(mu_);
    return s_.MemoryBytes();
  }
  int64_t window() const { return spec_.window; }
  int64_t tardiness() const { return spec_.tardiness; }
  double eps() const { return s_.eps(); }

 private:
  static std::string Number(double v) { return std::to_string(v); }
  static void CheckTime(int64_t t, const std::string& what) {
    if (t < -kMaxTime || t > kMaxTime)
      ThrowIfError(Status::InvalidArgument("window", what + " " + std::to_string(t) + " is outside [-2^61, 2^61]"));
  }

  const WindowSpec spec_;
  std::mutex mu_;
  Summarizer s_;
};

// A QueryClient (stream/net/query_client.h) and the lock its calls take.
class ClientHandle {
 public:
  ClientHandle(const std::string& address, double timeout_s) : timeout_(Millis(timeout_s)) {
    const HostPort root = ValueOrThrow(ParseHostPort(address, "address"));
    py::gil_scoped_release unlocked;
    client_ = ValueOrThrow(QueryClient::Connect(root, timeout_));
  }
  // The answer's lines (without the closing empty line).
  std::string Ask(const std::string& line, double timeout_s) {
    if (line.find('\n') != std::string::npos) ThrowIfError(Status::InvalidArgument("ask", "a query is one line"));
    const auto timeout = timeout_s < 0 ? timeout_ : Millis(timeout_s);
    py::gil_scoped_release unlocked;
    std::lock_guard hold(mu_);
    if (!client_) ThrowIfError(Status::InvalidArgument("ask", "the client is closed"));
    return ValueOrThrow(client_->Ask(line, timeout));
  }
  void Close() {
    std::lock_guard hold(mu_);
    client_.reset();
  }

 private:
  static std::chrono::milliseconds Millis(double s) {
    if (!(s >= 0 && s <= 1e9)) ThrowIfError(Status::InvalidArgument("timeout", "must be seconds in [0, 1e9]"));
    return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(s * 1000)));
  }
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::unique_ptr<QueryClient> client_;
};

}  // namespace

void RegisterStream(py::module_& m) {
  py::class_<WindowHandle>(m, "_Window", "A sliding-window summarizer (momenta.Window holds one)")
      .def(py::init<int64_t, int64_t, double>(), py::arg("window"), py::arg("tardiness"), py::arg("eps"))
      .def("update", &WindowHandle::Update)
      .def("advance", &WindowHandle::Advance)
      .def("count", &WindowHandle::Count)
      .def("count_bounds", &WindowHandle::CountBounds)
      .def("frequent", &WindowHandle::Frequent)
      .def("top", &WindowHandle::Top)
      .def("estimate", &WindowHandle::Estimate)
      .def("quantile", &WindowHandle::Quantile)
      .def_property_readonly("now", &WindowHandle::Now)
      .def_property_readonly("dropped", &WindowHandle::Dropped)
      .def_property_readonly("memory_bytes", &WindowHandle::MemoryBytes)
      .def_property_readonly("window", &WindowHandle::window)
      .def_property_readonly("tardiness", &WindowHandle::tardiness)
      .def_property_readonly("eps", &WindowHandle::eps);
  py::class_<ClientHandle>(m, "_Client", "A connection to a root (momenta.Client holds one)")
      .def(py::init<const std::string&, double>(), py::arg("address"), py::arg("timeout"))
      .def("ask", &ClientHandle::Ask)
      .def("close", &ClientHandle::Close);
}

}  // namespace momenta::python
