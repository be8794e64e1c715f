#include "call.h"

#include <pythread.h>
#include <signal.h>

#include <exception>

namespace hetplan::python {
namespace {

unsigned long main_thread_ident = 0;  // threading.main_thread().ident

bool OnMainThread() { return main_thread_ident != 0 && PyThread_get_thread_ident() == main_thread_ident; }

// The chained SIGINT handler of kInline calls. Only the main thread installs
// and removes it (signals go to Python's main thread, and only it may change
// them), so the bookkeeping needs no lock; the handler itself reads only
// atomics and the saved handler. A call made from a progress callback of
// another call nests: each call owns one slot, the outermost installs.
constexpr int kSlots = 8;
std::atomic<std::atomic<bool>*> interrupt_slots[kSlots];
struct sigaction python_handler;  // what was installed before the outermost call
int depth = 0;

void OnSigint(int signum, siginfo_t* info, void* context) {
  for (auto& slot : interrupt_slots) {
    if (std::atomic<bool>* flag = slot.load()) flag->store(true);
  }
  if (python_handler.sa_flags & SA_SIGINFO) {
    python_handler.sa_sigaction(signum, info, context);
  } else if (python_handler.sa_handler != SIG_IGN && python_handler.sa_handler != SIG_DFL) {
    python_handler.sa_handler(signum);
  }
}

class SigintHook {
 public:
  SigintHook(std::atomic<bool>* flag, bool main_thread) {
    if (!main_thread) return;
    if (depth == 0) {
      struct sigaction current;
      if (sigaction(SIGINT, nullptr, &current) != 0) return;
      const bool function =
          (current.sa_flags & SA_SIGINFO) || (current.sa_handler != SIG_IGN && current.sa_handler != SIG_DFL);
      // SIGINT ignored, or left to kill the process: not ours to change.
      if (!function) return;
      python_handler = current;
      struct sigaction ours = current;
      ours.sa_flags |= SA_SIGINFO;
      ours.sa_sigaction = OnSigint;
      if (sigaction(SIGINT, &ours, nullptr) != 0) return;
    }
    for (int i = 0; i < kSlots; ++i) {
      if (interrupt_slots[i].load() == nullptr) {
        slot_ = i;
        interrupt_slots[i].store(flag);
        break;
      }
    }
    ++depth;
    active_ = true;
  }
  ~SigintHook() {
    if (!active_) return;
    if (slot_ >= 0) interrupt_slots[slot_].store(nullptr);
    if (--depth == 0) sigaction(SIGINT, &python_handler, nullptr);
  }
  SigintHook(const SigintHook&) = delete;
  SigintHook& operator=(const SigintHook&) = delete;

 private:
  bool active_ = false;
  int slot_ = -1;
};

}  // namespace

void CallControl::InitMainThread() {
  main_thread_ident = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

CallControl::~CallControl() = default;

void CallControl::Post(std::function<py::tuple()> make) {
  if (!has_progress()) return;
  if (mode_ == Mode::kInline) {
    if (std::this_thread::get_id() != caller_) return;
    py::gil_scoped_acquire gil;
    Deliver(make);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(make));
  }
  cv_.notify_one();
}

void CallControl::Deliver(const std::function<py::tuple()>& make) {
  if (raised()) return;  // the callback failed once: no further calls
  try {
    progress_(*make());
  } catch (py::error_already_set& e) {
    e.restore();
    Keep();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    Keep();
  }
}

bool CallControl::keyboard_interrupt() const {
  return raised() && PyErr_GivenExceptionMatches(type_.ptr(), PyExc_KeyboardInterrupt) != 0;
}

void CallControl::Reraise() {
  PyErr_Restore(type_.release().ptr(), value_.release().ptr(), trace_.release().ptr());
  throw py::error_already_set();
}

void CallControl::Keep() {
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  if (raised()) {
    // A second Ctrl-C while the first one is being honoured: the first counts.
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(trace);
    return;
  }
  type_ = py::reinterpret_steal<py::object>(type);
  value_ = py::reinterpret_steal<py::object>(value);
  trace_ = py::reinterpret_steal<py::object>(trace);
  interrupt_.store(true);
}

void CallControl::RunInline(const std::function<void()>& work) {
  caller_ = std::this_thread::get_id();
  {
    SigintHook hook(&interrupt_, OnMainThread());
    py::gil_scoped_release release;
    work();
  }
  // Python's handler ran inside ours (or a signal came without ours): raise
  // what it asks for now, not in the caller's next line.
  if (!raised() && PyErr_CheckSignals() != 0) Keep();
}

void CallControl::RunOnWorker(const std::function<void()>& work) {
  std::exception_ptr failure;
  // The worker never touches Python; it only runs `work` and posts events.
  std::thread worker([&]() {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
  });
  while (true) {
    std::deque<std::function<py::tuple()>> events;
    bool done = false;
    {
      PyThreadState* saved = PyEval_SaveThread();  // the GIL is free while we wait
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, kPollInterval, [&]() { return done_ || !events_.empty(); });
        events.swap(events_);
        done = done_;
      }
      PyEval_RestoreThread(saved);
    }
    for (auto& make : events) Deliver(make);
    if (done) break;
    if (!raised() && PyErr_CheckSignals() != 0) Keep();
  }
  worker.join();
  if (!raised() && PyErr_CheckSignals() != 0) Keep();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace hetplan::python
