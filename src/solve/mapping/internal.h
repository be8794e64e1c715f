// Helpers shared by the mapping_*.cc files: the edge and node prices of the
// sequential execution graph, the written timing, single-PU baselines.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/solve/mapping.h"

namespace hetplan::mapping_internal {

// Converts a time charged to PU p into the objective's unit.
inline double Price(const MappingCosts& c, int p, double us, Objective objective) {
  if (objective == Objective::kLatency || us == 0.0) return us;
  return us * c.power_w(p);
}

// Node v_{i,j}: w, plus H2D and D2H under conservative accounting.
inline double NodeCost(const MappingCosts& c, int v, int p, const ChainOptions& o) {
  const double us = o.accounting == TransferAccounting::kConservative ? c.total_us(v, p) : c.latency_us(v, p);
  return Price(c, p, us, o.objective);
}

// s → v_{1,j}: P_j's H2D (neighbour accounting only).
inline double EntryCost(const MappingCosts& c, int v, int p, const ChainOptions& o) {
  if (o.accounting == TransferAccounting::kConservative) return 0.0;
  return Price(c, p, c.h2d_us(v, p), o.objective);
}

// v_{N,j} → t: P_j's D2H (neighbour accounting only).
inline double ExitCost(const MappingCosts& c, int v, int p, const ChainOptions& o) {
  if (o.accounting == TransferAccounting::kConservative) return 0.0;
  return Price(c, p, c.d2h_us(v, p), o.objective);
}

// v_{i,p} → v_{i+1,q}: a switch leaves p (D2H of u when p is an accelerator)
// and enters q (H2D of v when q is one). Copies on the host are 0 by
// construction of MappingCosts.
// Either accounting adds q's boundary cost (a new segment starts on q).
inline double SwitchCost(const MappingCosts& c, int u, int p, int v, int q, const ChainOptions& o) {
  if (p == q) return 0.0;
  const double boundary = Price(c, q, c.boundary_us(q), o.objective);
  if (o.accounting == TransferAccounting::kConservative) return boundary;
  return Price(c, p, c.d2h_us(u, p), o.objective) + Price(c, q, c.h2d_us(v, q), o.objective) + boundary;
}

// The idle time the written timing leaves before an operator for the copies
// the accounting charges (always in µs). Conservative: every accelerator
// operator's own H2D before it and D2H after it; neighbour: only on a switch.
inline double EntryGapUs(const MappingCosts& c, int v, int p) { return c.h2d_us(v, p); }
inline double ExitGapUs(const MappingCosts& c, int u, int p) { return c.d2h_us(u, p); }
inline double SwitchGapUs(const MappingCosts& c, int u, int p, int v, int q, TransferAccounting a) {
  if (a == TransferAccounting::kNeighbour && p == q) return 0.0;
  return c.d2h_us(u, p) + c.h2d_us(v, q) + (p != q ? c.boundary_us(q) : 0.0);
}

// A monotone priority queue for Dijkstra (a radix heap): keys are
// non-negative doubles, whose IEEE bits order like the doubles, and no key
// pushed is below the last one popped. Pop is amortised O(log range) with no
// comparisons between items; storage is 65 reusable vectors.
class RadixHeap {
 public:
  bool empty() const { return size_ == 0; }
  void Push(double key, int64_t value) {
    const uint64_t k = std::bit_cast<uint64_t>(key);
    buckets_[Bucket(k)].emplace_back(k, value);
    ++size_;
  }
  // The smallest key and its value.
  std::pair<double, int64_t> Pop() {
    if (buckets_[0].empty()) {
      size_t i = 1;
      while (buckets_[i].empty()) ++i;
      uint64_t least = buckets_[i].front().first;
      for (const auto& item : buckets_[i]) least = std::min(least, item.first);
      last_ = least;
      for (const auto& item : buckets_[i]) buckets_[Bucket(item.first)].push_back(item);
      buckets_[i].clear();
    }
    const auto item = buckets_[0].back();
    buckets_[0].pop_back();
    --size_;
    return {std::bit_cast<double>(item.first), item.second};
  }

 private:
  size_t Bucket(uint64_t k) const { return k == last_ ? 0 : 64 - static_cast<size_t>(std::countl_zero(k ^ last_)); }
  std::array<std::vector<std::pair<uint64_t, int64_t>>, 65> buckets_;
  uint64_t last_ = 0;
  size_t size_ = 0;
};

// Times a mapping phase by phase (docs/mapping.md, "written timing"). Each
// phase starts when the previous one ends (a barrier). Inside a phase the
// operators are taken in topological order; an operator starts after the
// previous operator of its branch plus the copy gap the accounting charges,
// after each predecessor's finish plus the cost model's edge transfer, and
// when its PU is free. It lasts latency × slowdown. A phase ends when its
// last branch has also paid its exit D2H. The result passes the validator.
Schedule TimePhases(const Problem& problem, const MappingCosts& c, const std::vector<Phase>& phases,
                    const std::vector<int>& device, const std::vector<double>& slowdown, TransferAccounting a);

// The graph is a chain: n − 1 edges, each between topological neighbours.
bool IsChain(const OpGraph& g);

// Whole model on each PU under `o` (objective ignored: both are computed);
// fills MapResult::baselines and best_*_pu.
void AddSinglePuBaselines(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o, MapResult& r);

// Latency and energy (nullopt when a used PU has no power) of a chain mapping.
void PredictChain(const MappingCosts& c, std::span<const int> chain, std::span<const int> pu, TransferAccounting a,
                  double& latency_us, std::optional<double>& energy_uj);

// The cheapest schedule of one placement of two requests, request 0 whole on
// p and request 1 whole on q (p == q: both on one PU), priced as the
// concurrent search prices its plans (measured co-execution makespans for
// paired operators, solo costs w + H2D + D2H): the joint (i, j) search with
// solo steps over those PUs only, so every interleaving of the two requests
// is a candidate (mapping/concurrent.cc). nullopt when p or q does not run
// its whole request, or lacks the power the energy objective needs.
std::optional<ConcurrentMapping> BestPlacement(const MappingCosts& c0, std::span<const int> chain0,
                                               const MappingCosts& c1, std::span<const int> chain1,
                                               const CoexecCosts& coexec, Objective objective, int p, int q);

// The naive multi-PU plan (`name`: the baseline's name) on a problem that
// holds both requests: the placement whose BestPlacement is cheapest for the
// problem's objective, over every PU pair (the same PU included), written as
// the concurrent mapping writes its plans. kUnsupported when no PU runs a
// whole request.
Result<SolveResult> SolveBestPlacement(const Problem& both, const std::string& name);

// "cpu 3, gpu 2" style counts, used in notes.
std::string DeviceCounts(const MappingCosts& c, const std::vector<int>& device);

}  // namespace hetplan::mapping_internal
