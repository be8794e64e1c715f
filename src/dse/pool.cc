// The worker threads of a sweep, with one exclusive lane for CBC-backed
// points (dse.h says why).
#include "dse/internal.h"

namespace hetplan::dse {

PointPool::PointPool(int threads, RunFn run, DoneFn done, bool want_schedule)
    : run_(std::move(run)), done_(std::move(done)), want_schedule_(want_schedule) {
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { Work(); });
}

PointPool::~PointPool() {
  Close();
  Join();
}

void PointPool::Submit(int index, bool exclusive) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    (exclusive ? exclusive_ : others_).push_back(index);
  }
  cv_.notify_all();
}

void PointPool::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

void PointPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

void PointPool::Join() {
  if (abandoned_) return;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void PointPool::Abandon() {
  Stop();
  abandoned_ = true;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.detach();
  }
}

std::vector<PointPool::Running> PointPool::RunningNow() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Running> out;
  for (const auto& [index, t0] : running_) out.push_back({index, SecondsSince(t0)});
  return out;
}

void PointPool::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // Wait for a point this thread may take, or for the end.
    cv_.wait(lock, [&] {
      return stopped_ || (!lane_busy_ && !exclusive_.empty()) || !others_.empty() ||
             (closed_ && exclusive_.empty() && others_.empty());
    });
    if (stopped_) return;
    int i = -1;
    bool excl = false;
    if (!lane_busy_ && !exclusive_.empty()) {
      i = exclusive_.front();
      exclusive_.pop_front();
      lane_busy_ = excl = true;
    } else if (!others_.empty()) {
      i = others_.front();
      others_.pop_front();
    } else {
      return;  // closed, and nothing left
    }
    running_[i] = Clock::now();
    lock.unlock();
    const auto tp = Clock::now();
    std::string schedule;
    nlohmann::json line = run_(i, want_schedule_ ? &schedule : nullptr);
    const double seconds = SecondsSince(tp);
    lock.lock();
    if (excl) lane_busy_ = false;
    running_.erase(i);
    lock.unlock();
    cv_.notify_all();
    done_(i, excl, std::move(line), std::move(schedule), seconds);
    lock.lock();
  }
}

}  // namespace hetplan::dse
