// Running library work with the GIL released, and long work so that Ctrl-C
// stops it.
//
// Python runs its SIGINT handler (KeyboardInterrupt) only when the main
// thread is back in the interpreter, and the library's long loops (a build on
// open, a large Apply) stop only at a cancellation request
// (storage/util/cancel.h). RunInterruptible, called on the main thread, runs the
// work on a thread of its own and meanwhile checks Python's signals every
// 50 ms; once a handler raises, it asks the library to cancel
// (RequestCancel), waits for the work to stop at its next chunk boundary
// (consistent, as after a signal to the CLI), clears the request and rethrows
// the handler's exception. The request is process-wide: work of other
// threads polling it at that moment stops too (as under the CLI's signal).
// Off the main thread it is RunUnlocked.
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <csignal>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "storage/util/cancel.h"

namespace momenta::python {

namespace py = pybind11;

// f() with the GIL released. REQUIRES: the GIL is held.
template <typename F>
auto RunUnlocked(F&& f) {
  py::gil_scoped_release unlocked;
  return f();
}

// True on the interpreter's main thread (where signal handlers run).
bool OnMainThread();

// f() as described above; its result once it returned (an exception f()
// threw is rethrown here). If a signal handler raised meanwhile, that
// exception is thrown instead (py::error_already_set) after f() returned.
// REQUIRES: the GIL is held; f() does not touch Python objects.
template <typename F>
auto RunInterruptible(F&& f) -> decltype(f()) {
  if (!OnMainThread()) return RunUnlocked(f);
  using R = decltype(f());
  std::optional<R> result;
  std::exception_ptr failure;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool raised = false;  // a handler raised: its exception is pending in this thread
  {
    py::gil_scoped_release unlocked;
    std::thread worker([&] {
      std::optional<R> r;
      std::exception_ptr e;
      try {
        r.emplace(f());
      } catch (...) {
        e = std::current_exception();
      }
      std::lock_guard hold(mu);
      result = std::move(r);
      failure = e;
      done = true;
      cv.notify_all();
    });
    std::unique_lock hold(mu);
    while (!done) {
      if (cv.wait_for(hold, std::chrono::milliseconds(50), [&] { return done; })) break;
      if (raised) continue;
      hold.unlock();
      {
        py::gil_scoped_acquire locked;
        if (PyErr_CheckSignals() != 0) {
          raised = true;
          RequestCancel(SIGINT);
        }
      }
      hold.lock();
    }
    hold.unlock();
    worker.join();
    if (raised) ResetCancel();
  }
  if (raised) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

}  // namespace momenta::python
