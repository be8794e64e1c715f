// Internal to solve/: heuristic schedules that start the exact search and
// the MIP (warm starts), and the helpers both use to compare schedules.
#pragma once

#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/plan/problem.h"

namespace hetplan::warm_start {

struct Candidate {
  std::string label;
  std::vector<int> assignment;
  std::vector<int> order;
  Schedule schedule;
};

// A topological order: among ready operators, the smallest key first.
template <typename Key>
std::vector<int> PriorityTopoOrder(const OpGraph& g, Key key) {
  const int n = g.size();
  std::vector<int> indeg(n);
  for (int v = 0; v < n; ++v) indeg[v] = static_cast<int>(g.in_edges(v).size());
  auto cmp = [&](int a, int b) { return key(b) < key(a); };  // min-heap on key
  std::priority_queue<int, std::vector<int>, decltype(cmp)> ready(cmp);
  for (int v = 0; v < n; ++v) {
    if (indeg[v] == 0) ready.push(v);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int e : g.out_edges(v)) {
      const int w = g.edges()[e].to;
      if (--indeg[w] == 0) ready.push(w);
    }
  }
  return order;
}

// Bottom level under an assignment: longest path (durations + transfers) to
// a sink, as a dispatch order (largest first).
std::vector<int> BottomLevelOrder(const Problem& pr, const std::vector<int>& a);

// A schedule as a warm-start candidate: its assignment, and its dispatch
// order by the midpoint of each interval (on a serial PU, u before v means
// f_u ≤ s_v, so midpoints keep that order even for zero-duration operators),
// re-timed as the list schedule of that order, which is no longer.
Candidate FromSchedule(const Problem& pr, const Schedule& s, std::string label);

// The best of a few list-scheduled heuristics over the candidate PUs `cand`
// (everything on one PU, cheapest PU per operator with capacity repair,
// earliest finish; each in topological and bottom-level order) under the
// objective; nullopt when none fits the capacities and the latency cap.
std::optional<Candidate> BestHeuristic(const Problem& pr, const std::vector<std::vector<int>>& cand);

// On a reprogramming PU, for the latency objective: `base` with operators
// moved onto that PU rewritten, one at a time in order of what each could
// save, each kept when the list schedule in base's order gets shorter and the
// crossbars and endurance budget allow it; also from base's residents turned
// into rewritten ones, then made resident again one at a time (longest write
// first) where that shortens it. A warm start: the better, or base when
// neither helps.
Candidate WithGreedyRewrites(const Problem& pr, Candidate base);

// The schedule's value under the problem's objective (makespan or energy).
double ObjectiveOf(const Problem& pr, const Schedule& s);

}  // namespace hetplan::warm_start
