// What the MPI sweep (mpi.cc) uses that needs no MPI: each rank's share of
// the cores (mpi_launch.cc), the polling interval, and the queue that hands
// the worker threads' results to the main thread. Kept apart because only
// mpi.cc is compiled with MPI's flags (CMakeLists.txt). Private to dse/.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "dse/internal.h"

namespace hetplan::dse {

// The worker threads of one rank: --jobs, else the cores the launcher bound
// it to, else the node's cores shared by the `local_ranks` ranks on it.
int RankThreads(const DseSpec& spec, int local_ranks);

// Polling interval: short after activity, longer when idle.
class Backoff {
 public:
  void Reset() { us_ = 100; }
  std::chrono::microseconds Next() {
    const auto d = std::chrono::microseconds(us_);
    us_ = std::min(us_ * 2, 5000);
    return d;
  }

 private:
  int us_ = 100;
};

// The worker threads' results, handed to the main thread (the only one that
// calls MPI).
struct Outbox {
  struct Item {
    int index;
    std::string line;
    std::string schedule;
    nlohmann::json json;  // rank 0's own points: the parsed line
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> items;

  void Push(Item it) {
    {
      std::lock_guard<std::mutex> lock(mu);
      items.push_back(std::move(it));
    }
    cv.notify_one();
  }
  // Takes everything queued, waiting up to `d` when nothing is.
  std::deque<Item> Take(std::chrono::microseconds d) {
    std::unique_lock<std::mutex> lock(mu);
    if (items.empty()) cv.wait_for(lock, d);
    std::deque<Item> out;
    out.swap(items);
    return out;
  }
};

}  // namespace hetplan::dse
