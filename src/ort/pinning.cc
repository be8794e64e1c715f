#include "ort/pinning.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hetplan::ort {
namespace {

std::vector<int> CoresOf(const cpu_set_t& set) {
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

std::string CoreList(const std::vector<int>& cores) { return fmt::format("{}", fmt::join(cores, ",")); }

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a waiter spins before it sleeps on the futex.
constexpr auto kSpin = std::chrono::microseconds(100);

}  // namespace

const std::vector<int>& AvailableCores() {
  static const std::vector<int> cores = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return std::vector<int>{};
    return CoresOf(set);
  }();
  return cores;
}

Status CheckCores(const std::vector<int>& cores, const std::string& where) {
  const std::vector<int>& have = AvailableCores();
  for (int c : cores) {
    if (!std::binary_search(have.begin(), have.end(), c)) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: core {} is not available to this process (it may run on cores {}); name cores this "
                   "machine has (nproc, /proc/cpuinfo)",
                   where, c, CoreList(have));
    }
  }
  return Status::Ok();
}

Status PinCurrentThread(const std::vector<int>& cores) {
  if (cores.empty()) return Status::Ok();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) {
    if (c < 0 || c >= CPU_SETSIZE) {
      return Error(ErrorCode::kInvalidArgument, "core {} is out of range; give cores 0 to {}", c, CPU_SETSIZE - 1);
    }
    CPU_SET(c, &set);
  }
  // pid 0 is the calling thread (Linux affinities are per thread).
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    return Error(ErrorCode::kInvalidArgument, "cannot pin a thread to cores {}: {}; name cores this process may use ({})",
                 CoreList(cores), std::strerror(errno), CoreList(AvailableCores()));
  }
  return Status::Ok();
}

std::vector<int> CurrentThreadCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  return CoresOf(set);
}

int CurrentCpu() { return sched_getcpu(); }

// --- PinnedWorker ---------------------------------------------------------------

Result<std::unique_ptr<PinnedWorker>> PinnedWorker::Start(const std::vector<int>& cores) {
  HETPLAN_RETURN_IF_ERROR(CheckCores(cores, "PU thread"));
  auto w = std::unique_ptr<PinnedWorker>(new PinnedWorker());
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  Status pinned;
  w->thread_ = std::thread([&, raw = w.get()] {
    Status st = PinCurrentThread(cores);
    {
      // Notify under the lock: Start() returns (and its locals go) as soon
      // as it sees `started`.
      std::lock_guard<std::mutex> lock(mu);
      pinned = st;
      started = true;
      cv.notify_one();
    }
    raw->Loop();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return started; });
  if (!pinned.ok()) return pinned;  // the destructor stops the thread
  return w;
}

PinnedWorker::~PinnedWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PinnedWorker::Post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
    ++posted_;
  }
  cv_.notify_all();
}

void PinnedWorker::Call(const std::function<void()>& job) {
  Post(job);
  Drain();
}

void PinnedWorker::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t target = posted_;
  cv_.wait(lock, [&] { return done_ >= target; });
}

void PinnedWorker::Loop() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stop_ and nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++done_;
    }
    cv_.notify_all();
  }
}

Status RunPinned(const std::vector<int>& cores, const std::function<void()>& fn) {
  HETPLAN_RETURN_IF_ERROR(CheckCores(cores, "profiling thread"));
  Status st;
  std::thread t([&] {
    st = PinCurrentThread(cores);
    if (st.ok()) fn();
  });
  t.join();
  return st;
}

// --- Generation, SpinBarrier ----------------------------------------------------

void Generation::WaitFor(int64_t g) const {
  if (value_.load(std::memory_order_acquire) >= g) return;
  const auto until = std::chrono::steady_clock::now() + kSpin;
  int spins = 0;
  while (true) {
    const int64_t v = value_.load(std::memory_order_acquire);
    if (v >= g) return;
    if (++spins % 64 == 0 && std::chrono::steady_clock::now() > until) {
      value_.wait(v, std::memory_order_acquire);  // returns when the value changes
      continue;
    }
    CpuRelax();
  }
}

bool SpinBarrier::ArriveAndWait() {
  const int64_t phase = phase_.load(std::memory_order_acquire);
  if (waiting_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
    waiting_.store(0, std::memory_order_relaxed);
    phase_.store(phase + 1, std::memory_order_release);
    return !broken_.load(std::memory_order_acquire);
  }
  // Spins: the parties sit on cores of their own. Where they share one (a
  // one-core machine), yielding after a while lets the others arrive.
  for (int spins = 0; phase_.load(std::memory_order_acquire) == phase; ++spins) {
    if (broken_.load(std::memory_order_acquire)) return false;
    if (spins > 4096) {
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
  }
  return !broken_.load(std::memory_order_acquire);
}

}  // namespace hetplan::ort
