// The MPI coordinator's bookkeeping (ledger.h).
#include "dse/ledger.h"

#include <fmt/format.h>

#include <algorithm>

namespace hetplan::dse {

Ledger::Ledger(std::vector<Point> points) {
  // Stable: equal estimates keep the product order. Stored smallest first so
  // that the largest is taken from the back.
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& a, const Point& b) { return a.estimate_s > b.estimate_s; });
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    (it->cbc ? cbc_ : others_).push_back(it->index);
    points_[it->index] = *it;
  }
}

void Ledger::AddRank(int rank, int threads, int prefetch, Clock::time_point now) {
  Rank& r = ranks_[rank];
  r.threads = std::max(1, threads);
  r.prefetch = std::max(0, prefetch);
  r.heard = now;
}

bool Ledger::Rank::HoldsCbc(const std::map<int, Point>& points) const {
  for (const auto& [index, sent] : held) {
    if (points.at(index).cbc) return true;
  }
  return false;
}

void Ledger::Fill(int rank, Rank& r, int slots, std::vector<int>* out) {
  while (static_cast<int>(r.held.size()) < slots) {
    const bool cbc_ok = !cbc_.empty() && !r.HoldsCbc(points_);
    int index = -1;
    if (cbc_ok && (others_.empty() || points_[cbc_.back()].estimate_s >= points_[others_.back()].estimate_s)) {
      index = cbc_.back();
      cbc_.pop_back();
    } else if (!others_.empty()) {
      index = others_.back();
      others_.pop_back();
    } else {
      return;
    }
    r.held[index] = Clock::now();
    out->push_back(index);
  }
}

std::map<int, std::vector<int>> Ledger::Deal() {
  std::map<int, std::vector<int>> out;
  for (auto& [rank, r] : ranks_) {
    if (!r.lost) Fill(rank, r, r.threads, &out[rank]);
  }
  for (auto& [rank, r] : ranks_) {
    if (!r.lost) Fill(rank, r, r.threads + r.prefetch, &out[rank]);
  }
  std::erase_if(out, [](const auto& kv) { return kv.second.empty(); });
  return out;
}

void Ledger::Heard(int rank, Clock::time_point now) {
  if (auto it = ranks_.find(rank); it != ranks_.end()) it->second.heard = now;
}

void Ledger::HeardAll(Clock::time_point now) {
  for (auto& [rank, r] : ranks_) r.heard = now;
}

void Ledger::Running(int rank, const std::vector<std::pair<int, double>>& running, Clock::time_point now) {
  auto it = ranks_.find(rank);
  if (it == ranks_.end()) return;
  it->second.running.clear();
  for (const auto& [index, seconds] : running) {
    if (it->second.held.contains(index)) it->second.running[index] = {seconds, now};
  }
}

bool Ledger::Finished(int rank, int index) {
  auto it = ranks_.find(rank);
  if (it == ranks_.end() || it->second.lost) return false;
  Rank& r = it->second;
  if (r.held.erase(index) == 0) return false;
  r.running.erase(index);
  r.hung.erase(index);  // it did end after all
  return true;
}

std::vector<Ledger::Event> Ledger::Check(Clock::time_point now, double silence_s, double grace_s) {
  std::vector<Event> events;
  for (auto& [rank, r] : ranks_) {
    if (r.lost) continue;
    const double silent = std::chrono::duration<double>(now - r.heard).count();
    if (silent > silence_s) {
      r.lost = true;
      Event e{rank, fmt::format("sent nothing (no result, no heartbeat) for {:.0f} s: it died or hangs", silent), {}};
      for (const auto& [index, sent] : r.held) e.points.push_back(index);
      events.push_back(std::move(e));
      continue;
    }
    for (const auto& [index, run] : r.running) {
      const Point& p = points_[index];
      if (p.limit_s < 0 || r.hung.contains(index)) continue;
      const double seconds = run.first + std::chrono::duration<double>(now - run.second).count();
      if (seconds > p.limit_s + grace_s) {
        r.hung.insert(index);
        events.push_back({rank,
                          fmt::format("has run a point for {:.0f} s, past its {:g} s time limit (+{:g} s grace): "
                                      "its solver does not stop",
                                      seconds, p.limit_s, grace_s),
                          {index}});
      }
    }
    if (static_cast<int>(r.hung.size()) >= r.threads) {
      // Every thread is stuck: what it holds besides will never start.
      r.lost = true;
      Event e{rank, "has every worker thread stuck in an overdue point", {}};
      for (const auto& [index, sent] : r.held) {
        if (!r.hung.contains(index)) e.points.push_back(index);
      }
      if (!e.points.empty()) events.push_back(std::move(e));
    }
  }
  return events;
}

bool Ledger::Done() const {
  if (!cbc_.empty() || !others_.empty()) {
    // Points still to hand out, and a rank that may take them.
    for (const auto& [rank, r] : ranks_) {
      if (!r.lost) return false;
    }
    return true;
  }
  for (const auto& [rank, r] : ranks_) {
    if (r.lost) continue;
    for (const auto& [index, sent] : r.held) {
      if (!r.hung.contains(index)) return false;
    }
  }
  return true;
}

bool Ledger::Lost(int rank) const {
  auto it = ranks_.find(rank);
  return it != ranks_.end() && it->second.lost;
}

std::vector<int> Ledger::LiveRanks() const {
  std::vector<int> out;
  for (const auto& [rank, r] : ranks_) {
    if (!r.lost) out.push_back(rank);
  }
  return out;
}

std::vector<int> Ledger::Held(int rank) const {
  std::vector<int> out;
  if (auto it = ranks_.find(rank); it != ranks_.end()) {
    for (const auto& [index, sent] : it->second.held) out.push_back(index);
  }
  return out;
}

}  // namespace hetplan::dse
