// Threads pinned to a PU's cores, and the hand-off signal the co-run profiler
// (src/cost/corun_profiler.cc) and the PU-thread executor
// (src/deploy/pu_executor.cc) share, so that what the profiler measures is
// what the executor does. Internal to the library.
//
// Pinning is sched_setaffinity on the calling thread's id: ONNX Runtime runs
// a session with one intra-op thread on the thread that calls Run, and the
// pool threads of a session with more inherit the affinity of the thread that
// creates the session (MakePuSessionOptions pins them one by one as well).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hetplan/util/status.h"

namespace hetplan::ort {

// The logical CPUs this process may run on, ascending (sched_getaffinity of
// the first caller, remembered: pinning a thread later does not shrink it).
const std::vector<int>& AvailableCores();

// An error naming `where` (e.g. "platforms/host-2core.yaml: pus[1] (cpu1).cores")
// and the first core of `cores` this process cannot run on; Ok otherwise.
Status CheckCores(const std::vector<int>& cores, const std::string& where);

// Pins the calling thread to `cores` (nothing when empty).
Status PinCurrentThread(const std::vector<int>& cores);
// The calling thread's affinity, ascending.
std::vector<int> CurrentThreadCores();
// The CPU the calling thread runs on now, -1 when unknown.
int CurrentCpu();

// A thread pinned to a PU's cores that runs posted jobs one at a time, in
// the order posted. Jobs must not throw.
class PinnedWorker {
 public:
  // Starts the thread and pins it; an error when the cores are not available.
  static Result<std::unique_ptr<PinnedWorker>> Start(const std::vector<int>& cores);
  ~PinnedWorker();
  PinnedWorker(const PinnedWorker&) = delete;
  PinnedWorker& operator=(const PinnedWorker&) = delete;

  void Post(std::function<void()> job);
  // Runs `job` on the worker and waits for it.
  void Call(const std::function<void()>& job);
  // Waits until every job posted so far has run.
  void Drain();

 private:
  PinnedWorker() = default;
  void Loop();

  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  int64_t posted_ = 0, done_ = 0;
  bool stop_ = false;
};

// Runs `fn` on a fresh thread pinned to `cores` and waits for it: how a PU's
// sessions are created and timed without changing the caller's affinity.
Status RunPinned(const std::vector<int>& cores, const std::function<void()>& fn);

// A counter one thread raises and others wait for (a segment's or a pass's
// generation). Waiting spins briefly, then sleeps on the futex: a PU thread
// waiting for another PU's output sits on its own core, so spinning costs
// the plan nothing and keeps the hand-off short; a long wait yields the core.
class Generation {
 public:
  void Raise(int64_t g) {
    value_.store(g, std::memory_order_release);
    value_.notify_all();
  }
  void WaitFor(int64_t g) const;
  int64_t Get() const { return value_.load(std::memory_order_acquire); }

 private:
  std::atomic<int64_t> value_{0};
};

// All of `parties` threads arrive, then all leave at once (spinning): how the
// co-run profiler starts two operators together. Reusable.
class SpinBarrier {
 public:
  explicit SpinBarrier(int parties) : parties_(parties) {}
  // False once Break() was called: the caller stops.
  bool ArriveAndWait();
  // Releases every waiter now and later (a party failed).
  void Break() { broken_.store(true, std::memory_order_release); }

 private:
  const int parties_;
  std::atomic<int> waiting_{0};
  std::atomic<int64_t> phase_{0};
  std::atomic<bool> broken_{false};
};

}  // namespace hetplan::ort
