// Running one library call from Python with the GIL released, Ctrl-C and
// progress callbacks included. Two ways, by what the call needs:
//
// kInline (load, profile, plan): the work runs on the calling thread with the
// GIL released. On the main thread (the only one Python delivers signals
// to), a SIGINT handler is chained in front of Python's for the time of the
// call: it sets interrupt() and then runs Python's own handler, which trips
// Python's flag as usual; when the work returns, PyErr_CheckSignals() raises
// what Python's handler asks for (KeyboardInterrupt) and the caller decides.
// Progress callbacks come from the calling thread: the GIL is taken for each.
// No thread is handed the work: on a loaded two-core machine each hand-off
// between threads cost milliseconds of scheduler latency (24 ms a call
// measured with a worker thread, against 1.2 ms for the work itself).
//
// kWorker (dse): the work runs on a worker thread, because its progress comes
// from its own pool threads. The calling thread gives up the GIL and waits;
// every kPollInterval, and whenever the work posts a progress event, it takes
// the GIL back to call the progress callback (so that callbacks run on the
// calling thread) and to run Python's signal handlers (PyErr_CheckSignals).
//
// Either way, an exception raised by a signal handler (KeyboardInterrupt on
// Ctrl-C) or by the progress callback is kept and interrupt() turns true:
// solvers that honour SolveOptions::interrupt return their best schedule so
// far. The work always runs to its end (it may hold references to
// Python-owned data); the caller then decides what to do with the exception.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace hetplan::python {

namespace py = pybind11;

class CallControl {
 public:
  enum class Mode { kInline, kWorker };
  static constexpr std::chrono::milliseconds kPollInterval{20};

  // `progress` may be None.
  explicit CallControl(py::object progress, Mode mode = Mode::kInline)
      : progress_(std::move(progress)), mode_(mode) {}
  CallControl(const CallControl&) = delete;
  CallControl& operator=(const CallControl&) = delete;
  ~CallControl();

  const std::atomic<bool>* interrupt() const { return &interrupt_; }
  bool has_progress() const { return !progress_.is_none(); }

  // From the work: `make` builds the callback's arguments, with the GIL held,
  // on the calling thread. Ignored without a callback, after the callback
  // failed, and (kInline) from any other thread.
  void Post(std::function<py::tuple()> make);

  // Runs `work` as described above. Call with the GIL held; returns with it.
  // A C++ exception thrown by `work` is rethrown here.
  template <typename T>
  T Run(std::function<T()> work) {
    std::optional<T> result;
    if (mode_ == Mode::kInline) {
      RunInline([&]() { result.emplace(work()); });
    } else {
      RunOnWorker([&]() { result.emplace(work()); });
    }
    return std::move(*result);
  }

  // Whether a signal handler or the callback raised during Run.
  bool raised() const { return static_cast<bool>(type_); }
  // Whether what was raised is KeyboardInterrupt (Ctrl-C).
  bool keyboard_interrupt() const;
  // Raises what was kept (throws py::error_already_set).
  [[noreturn]] void Reraise();

  // Records the main thread; call once, at import.
  static void InitMainThread();

 private:
  void RunInline(const std::function<void()>& work);
  void RunOnWorker(const std::function<void()>& work);
  void Deliver(const std::function<py::tuple()>& make);  // GIL held
  void Keep();  // fetches the current Python error into type_/value_/trace_

  py::object progress_;
  const Mode mode_;
  std::atomic<bool> interrupt_{false};
  std::thread::id caller_;  // kInline: the thread running the work
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<py::tuple()>> events_;
  bool done_ = false;
  py::object type_, value_, trace_;
};

}  // namespace hetplan::python
