// The MPI coordinator's bookkeeping, apart from MPI so that it can be tested
// alone: which points are still to hand out (largest first), which rank holds
// which, who has gone silent, which time-limited point overran its limit.
// Not thread-safe: rank 0's main thread owns it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dse/internal.h"

namespace hetplan::dse {

class Ledger {
 public:
  struct Point {
    int index = 0;
    double estimate_s = 0;  // EstimatedSeconds: the order points are handed out in
    bool cbc = false;       // in the exclusive lane: one at a time per rank
    double limit_s = -1;    // the point's time limit (< 0: none, never overdue)
  };
  // `points`: those to run; handed out by decreasing estimate (stable).
  explicit Ledger(std::vector<Point> points);

  // A rank with `threads` worker threads; it may hold `threads + prefetch`
  // points (the prefetched ones wait in its queue, hiding the round trip).
  void AddRank(int rank, int threads, int prefetch, Clock::time_point now);

  // The points to send to every rank now, by rank: first every rank's free
  // threads are filled (so that the largest points start at once, on
  // different ranks), then the prefetch slots.
  std::map<int, std::vector<int>> Deal();

  // Something arrived from `rank`.
  void Heard(int rank, Clock::time_point now);
  // The coordinator itself was stopped or starved (its loop stood still):
  // what the others sent meanwhile waits unread, so their silence says
  // nothing. Every live rank counts as heard now.
  void HeardAll(Clock::time_point now);
  // `rank` reports the points its threads are running and for how long.
  void Running(int rank, const std::vector<std::pair<int, double>>& running, Clock::time_point now);
  // `rank` finished point `index`. False when it did not hold it (a rank
  // declared lost, a duplicate): the result must be dropped.
  bool Finished(int rank, int index);

  struct Event {
    int rank = 0;
    std::string what;         // "sent nothing for 61 s", "… past its 10 s time limit"
    std::vector<int> points;  // not written: reported, rerun by --resume
  };
  // Ranks silent for longer than `silence_s` are lost; time-limited points
  // running longer than limit + `grace_s` are hung (a rank whose every
  // thread is hung is lost). Each rank and point is reported once.
  std::vector<Event> Check(Clock::time_point now, double silence_s, double grace_s);

  // Every point finished, or reported (lost or hung).
  bool Done() const;
  bool Lost(int rank) const;
  std::vector<int> LiveRanks() const;
  // Points held by `rank` (sent, no result yet), in index order.
  std::vector<int> Held(int rank) const;
  int pending() const { return static_cast<int>(cbc_.size() + others_.size()); }

 private:
  struct Rank {
    int threads = 1, prefetch = 1;
    std::map<int, Clock::time_point> held;  // index → when sent
    // index → (seconds running, when reported)
    std::map<int, std::pair<double, Clock::time_point>> running;
    std::set<int> hung;
    Clock::time_point heard;
    bool lost = false;
    bool HoldsCbc(const std::map<int, Point>& points) const;
  };
  // Gives `r` up to `slots` points in all.
  void Fill(int rank, Rank& r, int slots, std::vector<int>* out);

  std::map<int, Point> points_;
  std::vector<int> cbc_, others_;  // pending, largest first, consumed from the back
  std::map<int, Rank> ranks_;
};

}  // namespace hetplan::dse
