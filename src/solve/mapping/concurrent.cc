// Two-request concurrent BIDENT mapping: Dijkstra (or DP) over the aligned
// state space (ℓ, d0, d1) or the joint state space (i, j), priced with
// measured co-execution costs; the combined two-request schedule.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "hetplan/util/limits.h"
#include "hetplan/solve/mapping.h"
#include "hetplan/plan/requests.h"
#include "hetplan/solve/references.h"
#include "solve/mapping/internal.h"

namespace hetplan {
namespace {


// The price of one step: its makespan, its energy under the additive
// solo-power model, the stretch σ of both operators' solo costs, and whether
// a measured co-execution cost priced it.
struct StepPrice {
  double us = kInf;
  double uj = kInf;
  double sigma = 1;
  bool measured = false;
};

// Flat per-position solo costs (w + H2D + D2H; +inf when unsupported) and the
// pricing rules shared by every search.
class Pricer {
 public:
  Pricer(const MappingCosts& c0, std::span<const int> chain0, const MappingCosts& c1, std::span<const int> chain1,
         const CoexecCosts& coexec, Objective objective)
      : k_(c0.num_pus()), objective_(objective), coexec_(coexec), power_(static_cast<size_t>(k_)) {
    for (int p = 0; p < k_; ++p) power_[p] = c0.power_w(p);
    Fill(c0, chain0, t0_);
    Fill(c1, chain1, t1_);
  }

  // A copy that runs request 0 only on p and request 1 only on q (p == q:
  // both on one PU) and prices under `objective`: the other PUs' costs are
  // +inf, so a search over it finds the best schedule of that placement.
  Pricer Restricted(int p, int q, Objective objective) const {
    Pricer r = *this;
    r.objective_ = objective;
    for (size_t x = 0; x < r.t0_.size(); ++x) r.t0_[x] = static_cast<int>(x % k_) == p ? r.t0_[x] : kInf;
    for (size_t x = 0; x < r.t1_.size(); ++x) r.t1_[x] = static_cast<int>(x % k_) == q ? r.t1_[x] : kInf;
    return r;
  }
  // Whether PU p runs every operator of request 0 (r = 0) or 1, with a power
  // when the objective is energy.
  bool Runs(int r, int p) const {
    const std::vector<double>& t = r == 0 ? t0_ : t1_;
    if (objective_ == Objective::kEnergy && std::isnan(power_[p])) return false;
    for (size_t x = static_cast<size_t>(p); x < t.size(); x += static_cast<size_t>(k_)) {
      if (t[x] == kInf) return false;
    }
    return true;
  }

  double t0(int i, int p) const { return t0_[static_cast<size_t>(i) * k_ + p]; }
  double t1(int j, int q) const { return t1_[static_cast<size_t>(j) * k_ + q]; }
  double Value(const StepPrice& s) const { return objective_ == Objective::kLatency ? s.us : s.uj; }

  StepPrice Both(int i, int p, int j, int q, bool lookup) const {
    const double a = t0(i, p), b = t1(j, q);
    StepPrice s;
    if (a == kInf || b == kInf) return s;
    std::optional<double> m;
    if (lookup) m = coexec_.Find(i, p, j, q);
    s.measured = m.has_value();
    const double floor = p == q ? a + b : std::max(a, b);
    s.us = m ? *m : floor;
    s.sigma = floor > 0 ? std::max(1.0, s.us / floor) : 1.0;
    s.uj = s.sigma * (Energy(a, p) + Energy(b, q));
    return s;
  }
  StepPrice Solo(double t, int p) const {
    StepPrice s;
    if (t == kInf) return s;
    s.us = t;
    s.uj = Energy(t, p);
    return s;
  }
  // The cheapest PU pair for positions (i, j): its value and move code
  // 1 + p·K + q (0 when no pair is supported). The inner loop of the joint
  // search, so it computes only what the objective needs.
  std::pair<double, int> BestPair(int i, int j) const {
    const bool lookup = coexec_.HasAny(i);
    const double* a_row = &t0_[static_cast<size_t>(i) * k_];
    const double* b_row = &t1_[static_cast<size_t>(j) * k_];
    double best = kInf;
    int code = 0;
    for (int p = 0; p < k_; ++p) {
      const double a = a_row[p];
      if (a == kInf) continue;
      for (int q = 0; q < k_; ++q) {
        const double b = b_row[q];
        if (b == kInf) continue;
        double v;
        if (lookup || objective_ == Objective::kEnergy) {
          v = Value(Both(i, p, j, q, lookup));
        } else {
          v = p == q ? a + b : std::max(a, b);
        }
        if (v < best) {
          best = v;
          code = 1 + p * k_ + q;
        }
      }
    }
    return {best, code};
  }

 private:
  void Fill(const MappingCosts& c, std::span<const int> chain, std::vector<double>& t) const {
    t.assign(chain.size() * static_cast<size_t>(k_), kInf);
    for (size_t i = 0; i < chain.size(); ++i) {
      for (int p = 0; p < k_; ++p) {
        if (c.supported(chain[i], p)) t[i * k_ + p] = c.total_us(chain[i], p);
      }
    }
  }
  double Energy(double us, int p) const { return us == 0 ? 0.0 : us * power_[p]; }

  int k_;
  Objective objective_;
  const CoexecCosts& coexec_;
  std::vector<double> power_;
  std::vector<double> t0_, t1_;
};

// Best solo PU per position of one request.
void BestSolo(const Pricer& pr, int n, int k, bool first, std::vector<StepPrice>& price, std::vector<int>& pu) {
  price.assign(static_cast<size_t>(n), StepPrice{});
  pu.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    double best = kInf;
    for (int p = 0; p < k; ++p) {
      const StepPrice s = pr.Solo(first ? pr.t0(i, p) : pr.t1(i, p), p);
      if (pr.Value(s) < best) {
        best = pr.Value(s);
        price[i] = s;
        pu[i] = p;
      }
    }
  }
}

void Finish(const Pricer& pr, ConcurrentMapping& m) {
  double us = 0, uj = 0;
  for (const ConcurrentStep& s : m.steps) {
    us += s.latency_us;
    uj += s.energy_uj;
  }
  m.latency_us = us;
  if (std::isfinite(uj)) m.energy_uj = uj;
  m.cost = pr.Value(StepPrice{us, uj, 1, false});
}

// Joint states (i, j), i ∈ [0, N0], j ∈ [0, N1], id i·(N1 + 1) + j. Every
// move increases i or j, so the lexicographic order is topological (DP) and
// Dijkstra settles at most every state once.
Result<ConcurrentMapping> SearchJoint(const Pricer& pr, int n0, int n1, int k, const ConcurrentOptions& o) {
  const int64_t w = n1 + 1;
  const int64_t states = static_cast<int64_t>(n0 + 1) * w;
  if (states > (int64_t{1} << 31)) {
    return Error(ErrorCode::kLimitExceeded, "concurrent search: {} × {} joint states exceed the limit of 2^31", n0 + 1,
                 n1 + 1);
  }
  std::vector<StepPrice> solo0, solo1;
  std::vector<int> solo0_pu, solo1_pu;
  BestSolo(pr, n0, k, true, solo0, solo0_pu);
  BestSolo(pr, n1, k, false, solo1, solo1_pu);
  // Move codes: 1 + p·K + q (both), 1 + K² + p (request 0 alone), 1 + K² + K + q (request 1 alone).
  const int solo0_base = 1 + k * k, solo1_base = 1 + k * k + k;
  std::vector<double> dist(static_cast<size_t>(states), kInf);
  std::vector<uint16_t> move(static_cast<size_t>(states), 0);
  ConcurrentMapping m;
  m.states = states;

  // Relaxes every move out of state (i, j) at distance d; `push` is told each improvement.
  auto expand = [&](int i, int j, double d, const auto& push) {
    const int64_t x = i * w + j;
    if (i < n0 && j < n1) {
      const auto [value, code] = pr.BestPair(i, j);
      const double nd = d + value;
      ++m.transitions;
      if (code != 0 && nd < dist[x + w + 1]) {
        dist[x + w + 1] = nd;
        move[x + w + 1] = static_cast<uint16_t>(code);
        push(nd, x + w + 1);
      }
    }
    if (i < n0 && (o.solo_steps || j == n1)) {
      const double nd = d + pr.Value(solo0[i]);
      ++m.transitions;
      if (nd < dist[x + w]) {
        dist[x + w] = nd;
        move[x + w] = static_cast<uint16_t>(solo0_base + solo0_pu[i]);
        push(nd, x + w);
      }
    }
    if (j < n1 && (o.solo_steps || i == n0)) {
      const double nd = d + pr.Value(solo1[j]);
      ++m.transitions;
      if (nd < dist[x + 1]) {
        dist[x + 1] = nd;
        move[x + 1] = static_cast<uint16_t>(solo1_base + solo1_pu[j]);
        push(nd, x + 1);
      }
    }
  };
  const int64_t target = states - 1;
  dist[0] = 0;
  if (o.algorithm == ChainAlgorithm::kDp) {
    for (int i = 0; i <= n0; ++i) {
      for (int j = 0; j <= n1; ++j) {
        const double d = dist[i * w + j];
        if (d == kInf) continue;
        ++m.expanded;
        expand(i, j, d, [](double, int64_t) {});
      }
    }
  } else {
    mapping_internal::RadixHeap heap;
    auto push = [&](double d, int64_t y) { heap.Push(d, y); };
    heap.Push(0.0, 0);
    while (!heap.empty()) {
      const auto [d, x] = heap.Pop();
      if (d > dist[x]) continue;
      ++m.expanded;
      if (x == target) break;
      expand(static_cast<int>(x / w), static_cast<int>(x % w), d, push);
    }
  }
  if (dist[target] == kInf) {
    return Error(ErrorCode::kInfeasible, "concurrent search: no schedule reaches both requests' ends");
  }
  // Walk the moves back from the target.
  int i = n0, j = n1;
  while (i > 0 || j > 0) {
    const int code = move[i * w + j];
    ConcurrentStep st;
    StepPrice price;
    if (code < solo0_base) {
      st.op0 = i - 1;
      st.op1 = j - 1;
      st.pu0 = (code - 1) / k;
      st.pu1 = (code - 1) % k;
      price = pr.Both(st.op0, st.pu0, st.op1, st.pu1, true);
      --i;
      --j;
    } else if (code < solo1_base) {
      st.op0 = i - 1;
      st.pu0 = code - solo0_base;
      price = pr.Solo(pr.t0(st.op0, st.pu0), st.pu0);
      --i;
    } else {
      st.op1 = j - 1;
      st.pu1 = code - solo1_base;
      price = pr.Solo(pr.t1(st.op1, st.pu1), st.pu1);
      --j;
    }
    st.latency_us = price.us;
    st.energy_uj = price.uj;
    st.slowdown = price.sigma;
    m.steps.push_back(st);
  }
  std::reverse(m.steps.begin(), m.steps.end());
  Finish(pr, m);
  return m;
}

// Aligned states (ℓ, d0, d1): ℓ operators done by both requests, the last on
// d0 and d1; s = id 0, (ℓ, d0, d1) = 1 + (ℓ − 1)·K² + d0·K + d1. Each move
// picks the next PU pair. Prices do not depend on the previous pair (every
// operator carries its own copies), but the space is BIDENT's.
Result<ConcurrentMapping> SearchAligned(const Pricer& pr, int n, int k, const ConcurrentOptions& o) {
  const int64_t kk = static_cast<int64_t>(k) * k;
  const int64_t states = 1 + n * kk;
  ConcurrentMapping m;
  m.states = states;
  std::vector<double> dist(static_cast<size_t>(states), kInf);
  std::vector<int32_t> pred(static_cast<size_t>(states), -1);
  // Prices of level ℓ's pairs, computed once per level (they are the same from every source state).
  std::vector<double> level_value(static_cast<size_t>(n) * kk, kInf);
  for (int l = 0; l < n; ++l) {
    for (int p = 0; p < k; ++p) {
      for (int q = 0; q < k; ++q) level_value[l * kk + static_cast<int64_t>(p) * k + q] = pr.Value(pr.Both(l, p, l, q, true));
    }
  }
  auto level_of = [&](int64_t x) { return x == 0 ? 0 : static_cast<int>((x - 1) / kk) + 1; };
  int64_t best_end = -1;
  dist[0] = 0;
  if (o.algorithm == ChainAlgorithm::kDp) {
    int64_t arg = 0;  // best state of the previous level
    for (int l = 0; l < n; ++l) {
      ++m.expanded;
      for (int64_t pq = 0; pq < kk; ++pq) {
        m.transitions += l == 0 ? 1 : kk;
        const int64_t y = 1 + l * kk + pq;
        dist[y] = dist[arg] + level_value[l * kk + pq];
        pred[y] = static_cast<int32_t>(arg);
      }
      arg = 1 + l * kk;
      for (int64_t pq = 1; pq < kk; ++pq) {
        if (dist[1 + l * kk + pq] < dist[arg]) arg = 1 + l * kk + pq;
      }
    }
    best_end = n == 0 ? 0 : arg;
    if (dist[best_end] == kInf) best_end = -1;
  } else {
    mapping_internal::RadixHeap heap;
    heap.Push(0.0, 0);
    while (!heap.empty()) {
      const auto [d, x] = heap.Pop();
      if (d > dist[x]) continue;
      ++m.expanded;
      const int l = level_of(x);
      if (l == n) {
        best_end = x;
        break;
      }
      for (int64_t pq = 0; pq < kk; ++pq) {
        const double price = level_value[l * kk + pq];
        ++m.transitions;
        if (price == kInf) continue;
        const int64_t y = 1 + l * kk + pq;
        if (d + price < dist[y]) {
          dist[y] = d + price;
          pred[y] = static_cast<int32_t>(x);
          heap.Push(dist[y], y);
        }
      }
    }
  }
  if (best_end < 0) return Error(ErrorCode::kInfeasible, "concurrent search: no aligned schedule exists");
  for (int64_t x = best_end; x != 0; x = pred[x]) {
    const int l = level_of(x) - 1;
    const int64_t pq = (x - 1) % kk;
    ConcurrentStep st;
    st.op0 = st.op1 = l;
    st.pu0 = static_cast<int>(pq / k);
    st.pu1 = static_cast<int>(pq % k);
    const StepPrice price = pr.Both(l, st.pu0, l, st.pu1, true);
    st.latency_us = price.us;
    st.energy_uj = price.uj;
    st.slowdown = price.sigma;
    m.steps.push_back(st);
  }
  std::reverse(m.steps.begin(), m.steps.end());
  Finish(pr, m);
  return m;
}

// A placement (request 0 whole on p, request 1 whole on q) is searched in
// the joint space up to this many states (about 40 MB of labels); beyond it,
// it is priced as the cheaper of two of its schedules in that space.
constexpr int64_t kMaxPlacementStates = int64_t{1} << 22;

// One fixed path of a restricted pricer: pairs (ℓ, ℓ) on (p, q) for
// ℓ < `paired`, then request 0's remaining operators alone, then request 1's.
ConcurrentMapping FixedPath(const Pricer& pr, int n0, int n1, int p, int q, int paired) {
  ConcurrentMapping m;
  auto add = [&](int i, int j, const StepPrice& price) {
    ConcurrentStep st;
    st.op0 = i;
    st.op1 = j;
    st.pu0 = i >= 0 ? p : -1;
    st.pu1 = j >= 0 ? q : -1;
    st.latency_us = price.us;
    st.energy_uj = price.uj;
    st.slowdown = price.sigma;
    m.steps.push_back(st);
  };
  for (int l = 0; l < paired; ++l) add(l, l, pr.Both(l, p, l, q, true));
  for (int i = paired; i < n0; ++i) add(i, -1, pr.Solo(pr.t0(i, p), p));
  for (int j = paired; j < n1; ++j) add(-1, j, pr.Solo(pr.t1(j, q), q));
  Finish(pr, m);
  return m;
}

// The cheapest schedule of one placement under the search's own pricing: the
// joint (i, j) search with solo steps over a pricer restricted to (p, q), so
// it holds every interleaving of the two whole requests, the back-to-back
// serial one and BIDENT's lockstep one among them. Too large a space: the
// cheaper of the lockstep and the serial schedule. nullopt when p or q does
// not run its whole request (or lacks a power the objective needs).
std::optional<ConcurrentMapping> SearchPlacement(const Pricer& pr, int n0, int n1, int k, int p, int q,
                                                 Objective objective) {
  const Pricer only = pr.Restricted(p, q, objective);
  if (!only.Runs(0, p) || !only.Runs(1, q)) return std::nullopt;
  if (static_cast<int64_t>(n0 + 1) * (n1 + 1) <= kMaxPlacementStates) {
    const ConcurrentOptions o{objective, ConcurrentSpace::kJoint, ChainAlgorithm::kDp, true};
    Result<ConcurrentMapping> m = SearchJoint(only, n0, n1, k, o);
    if (!m.ok()) return std::nullopt;
    return std::move(m).value();
  }
  ConcurrentMapping lockstep = FixedPath(only, n0, n1, p, q, std::min(n0, n1));
  ConcurrentMapping serial = FixedPath(only, n0, n1, p, q, 0);
  return lockstep.cost <= serial.cost ? lockstep : serial;
}

std::string PlacementLabel(const std::vector<PuInfo>& pus, int p, int q) {
  if (p == q) return fmt::format("both requests on {}", pus[p].name);
  return fmt::format("request 0 whole on {}, request 1 whole on {}", pus[p].name, pus[q].name);
}

// How the searched space was widened (ConcurrentResult's notes).
struct Widening {
  double searched = 0;  // the searched space's best value
  int placements = 0;   // placements priced
  std::string chosen;   // the placement returned instead; empty: the search's best
};

struct WidenedMapping {
  ConcurrentMapping mapping;
  Widening widening;
};

// The search's best, or the cheapest whole-request placement when that is
// cheaper. The placements are the references every plan is compared with
// (references.h: naive multi-PU, both requests on one PU), and the searched
// spaces can miss them: the aligned space pairs operator ℓ with operator ℓ
// and the lockstep space pairs operators while both requests run; neither
// lets one request run alone while the other waits, so they lack the
// back-to-back serial schedule and staggered placements, which can be
// cheaper under contention (measured co-execution makespans above the solo
// costs). Taking the cheaper widens the
// space to its union with every placement's own joint space, within which
// the result is optimal; so no plan is predicted slower than a reference.
Result<WidenedMapping> SearchWidened(const MappingCosts& c0, std::span<const int> chain0, const MappingCosts& c1,
                                     std::span<const int> chain1, const CoexecCosts& coexec,
                                     const ConcurrentOptions& o) {
  WidenedMapping w;
  HETPLAN_ASSIGN_OR_RETURN(w.mapping, SearchConcurrent(c0, chain0, c1, chain1, coexec, o));
  w.widening.searched = w.mapping.cost;
  const Pricer pr(c0, chain0, c1, chain1, coexec, o.objective);
  const int n0 = static_cast<int>(chain0.size()), n1 = static_cast<int>(chain1.size()), k = c0.num_pus();
  for (int p = 0; p < k; ++p) {
    for (int q = 0; q < k; ++q) {
      std::optional<ConcurrentMapping> m = SearchPlacement(pr, n0, n1, k, p, q, o.objective);
      if (!m) continue;
      ++w.widening.placements;
      if (!(m->cost < w.mapping.cost - 1e-9 * std::abs(w.mapping.cost))) continue;
      // The statistics stay those of the searched space.
      m->states = w.mapping.states;
      m->expanded = w.mapping.expanded;
      m->transitions = w.mapping.transitions;
      w.mapping = std::move(*m);
      w.widening.chosen = PlacementLabel(c0.pus(), p, q);
    }
  }
  return w;
}

}  // namespace

CoexecCosts::CoexecCosts(int n0, std::vector<Entry> entries) {
  auto key = [](const Entry& e) { return std::tuple(e.i, e.j, e.p, e.q); };
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
  for (size_t a = 0; a < entries.size();) {
    size_t b = a;
    double sum = 0;
    while (b < entries.size() && key(entries[b]) == key(entries[a])) sum += entries[b++].makespan_us;
    Entry e = entries[a];
    e.makespan_us = sum / static_cast<double>(b - a);
    entries_.push_back(e);
    a = b;
  }
  first_.assign(static_cast<size_t>(std::max(0, n0)) + 1, 0);
  for (const Entry& e : entries_) {
    if (e.i >= 0 && e.i < n0) ++first_[e.i + 1];
  }
  for (size_t i = 1; i < first_.size(); ++i) first_[i] += first_[i - 1];
}

std::optional<double> CoexecCosts::Find(int i, int p, int j, int q) const {
  if (!HasAny(i)) return std::nullopt;
  const auto lo = entries_.begin() + first_[i], hi = entries_.begin() + first_[i + 1];
  const auto it = std::lower_bound(lo, hi, std::tuple(j, p, q), [](const Entry& e, const std::tuple<int, int, int>& t) {
    return std::tuple(e.j, e.p, e.q) < t;
  });
  if (it == hi || it->j != j || it->p != p || it->q != q) return std::nullopt;
  return it->makespan_us;
}

CoexecCosts BuildCoexecCosts(const OpGraph& g0, std::span<const int> chain0, const OpGraph& g1,
                             std::span<const int> chain1, const std::vector<PuInfo>& pus,
                             const std::vector<CoExecution>& rows) {
  std::unordered_map<std::string, int> pos0, pos1, pu_of;
  for (size_t i = 0; i < chain0.size(); ++i) pos0.emplace(g0.op(chain0[i]).name, static_cast<int>(i));
  for (size_t j = 0; j < chain1.size(); ++j) pos1.emplace(g1.op(chain1[j]).name, static_cast<int>(j));
  for (size_t p = 0; p < pus.size(); ++p) pu_of.emplace(pus[p].name, static_cast<int>(p));
  std::vector<CoexecCosts::Entry> entries;
  auto add = [&](const std::string& a, const std::string& pa, const std::string& b, const std::string& pb, double us) {
    auto i = pos0.find(a), j = pos1.find(b);
    auto p = pu_of.find(pa), q = pu_of.find(pb);
    if (i == pos0.end() || j == pos1.end() || p == pu_of.end() || q == pu_of.end()) return;
    entries.push_back({i->second, j->second, p->second, q->second, us});
  };
  for (const CoExecution& r : rows) {
    add(r.op_a, r.pu_a, r.op_b, r.pu_b, r.makespan_us);
    add(r.op_b, r.pu_b, r.op_a, r.pu_a, r.makespan_us);
  }
  return CoexecCosts(static_cast<int>(chain0.size()), std::move(entries));
}

Result<ConcurrentMapping> SearchConcurrent(const MappingCosts& c0, std::span<const int> chain0, const MappingCosts& c1,
                                           std::span<const int> chain1, const CoexecCosts& coexec,
                                           const ConcurrentOptions& o) {
  const int k = c0.num_pus();
  if (c1.num_pus() != k) {
    return Error(ErrorCode::kInvalidArgument, "concurrent search: the requests list {} and {} PUs; use one platform", k,
                 c1.num_pus());
  }
  for (int p = 0; p < k; ++p) {
    if (c0.pus()[p].name != c1.pus()[p].name) {
      return Error(ErrorCode::kInvalidArgument, "concurrent search: PU {} is '{}' for request 0 but '{}' for request 1",
                   p, c0.pus()[p].name, c1.pus()[p].name);
    }
  }
  if (k > kMaxPus) return Error(ErrorCode::kLimitExceeded, "concurrent search: at most {} PUs", kMaxPus);
  HETPLAN_RETURN_IF_ERROR(CheckChain(c0, chain0, o.objective));
  HETPLAN_RETURN_IF_ERROR(CheckChain(c1, chain1, o.objective));
  const Pricer pr(c0, chain0, c1, chain1, coexec, o.objective);
  const int n0 = static_cast<int>(chain0.size()), n1 = static_cast<int>(chain1.size());
  if (o.space == ConcurrentSpace::kAligned) {
    if (n0 != n1) {
      return Error(ErrorCode::kInvalidArgument,
                   "concurrent search: the aligned state space needs two requests of one model ({} and {} operators); "
                   "use the joint space for two models",
                   n0, n1);
    }
    return SearchAligned(pr, n0, k, o);
  }
  return SearchJoint(pr, n0, n1, k, o);
}

namespace {

// The written timing of a concurrent mapping on the problem holding both
// requests (chain0/chain1: their ids there) and its SolveResult.
SolveResult ConcurrentResult(const Problem& both, std::span<const int> chain0, std::span<const int> chain1,
                             const CoexecCosts& coexec, const ConcurrentMapping& m, const Widening& widening,
                             const ConcurrentOptions& o, double seconds) {
  const CostModel& costs = *both.costs;
  // Written timing: steps one after another; a cross-PU pair starts together,
  // a same-PU pair runs back to back; both stretched by σ.
  Schedule s;
  s.ops.resize(static_cast<size_t>(both.graph->size()));
  double t = 0;
  int measured = 0, faster = 0, paired = 0;
  for (const ConcurrentStep& st : m.steps) {
    double end = t, cursor = t;
    const bool shared = st.op0 >= 0 && st.op1 >= 0 && st.pu0 == st.pu1;
    for (int r = 0; r < 2; ++r) {
      const int pos = r == 0 ? st.op0 : st.op1;
      if (pos < 0) continue;
      const int v = r == 0 ? chain0[pos] : chain1[pos];
      ScheduledOp& so = s.ops[v];
      so.device = r == 0 ? st.pu0 : st.pu1;
      so.request = r;
      so.slowdown = st.slowdown;
      so.start_us = shared ? cursor : t;
      so.finish_us = so.start_us + costs.latency_us(v, so.device) * st.slowdown;
      cursor = so.finish_us;
      end = std::max(end, so.finish_us);
    }
    if (st.op0 >= 0 && st.op1 >= 0) {
      ++paired;
      if (coexec.Find(st.op0, st.pu0, st.op1, st.pu1)) ++measured;
      if (end - t > st.latency_us * (1 + 1e-9) + 1e-9) ++faster;  // measured below what the file can express
    }
    t = end;
  }
  for (const ScheduledOp& so : s.ops) s.makespan_us = std::max(s.makespan_us, so.finish_us);
  s.energy_uj = ScheduleEnergy(both, s);

  SolveResult res;
  const bool aligned = o.space == ConcurrentSpace::kAligned;
  res.formulation = fmt::format("{} {}", aligned ? "aligned" : (o.solo_steps ? "joint" : "joint-lockstep"),
                                o.algorithm == ChainAlgorithm::kDp ? "dp" : "dijkstra");
  res.status = SolveStatus::kOptimal;
  res.termination = Termination::kProved;
  res.objective = m.cost;
  res.bound = m.cost;
  res.gap = 0;
  res.seconds = seconds;
  ConcurrentStats& stats = res.concurrent.emplace();
  stats.space = o.space;
  stats.algorithm = o.algorithm;
  stats.solo_steps = !aligned && o.solo_steps;
  stats.states = m.states;
  stats.expanded = m.expanded;
  stats.transitions = m.transitions;
  stats.coexec_entries = static_cast<int64_t>(coexec.size());
  stats.predicted_latency_us = m.latency_us;
  stats.predicted_energy_uj = m.energy_uj;
  res.notes.push_back(fmt::format(
      "two-request concurrent mapping: {} state space ({} states, {} settled, {} transitions) searched by {}, "
      "widened by the {} whole-request placements (each request whole on one PU, both on one PU included, each at "
      "its best interleaving in its own joint (i, j) space with solo steps, priced the same way: the naive and "
      "single-PU references); optimal within that union under the co-execution cost model, not over all "
      "schedules; predicted latency {:.3f} µs{}",
      aligned ? "aligned (ℓ, d0, d1)" : "joint (i, j)", m.states, m.expanded, m.transitions,
      o.algorithm == ChainAlgorithm::kDp ? "DP" : "Dijkstra", widening.placements, m.latency_us,
      m.energy_uj ? fmt::format(", energy {:.3f} µJ", *m.energy_uj) : std::string()));
  if (!widening.chosen.empty()) {
    const char* unit = o.objective == Objective::kLatency ? "µs" : "µJ";
    res.notes.push_back(fmt::format(
        "the placement candidate ({}: {:.3f} {}) is cheaper than the searched state space's best ({:.3f} {}); "
        "returned it",
        widening.chosen, m.cost, unit, widening.searched, unit));
  }
  if (!aligned && o.solo_steps) {
    res.notes.push_back(
        "besides BIDENT's transitions (both requests advance together, then the unfinished one runs alone), a step "
        "may run one request's operator alone while the other waits (solo steps; --lockstep disables them)");
  }
  res.notes.push_back(fmt::format(
      "co-execution: {} of {} paired steps priced by a measured co-execution makespan; others as the serial sum "
      "t0 + t1 on one PU or max(t0, t1) across PUs (without contention)",
      measured, paired));
  res.notes.push_back(
      "operator costs here are w + H2D + D2H (BIDENT's concurrent search charges no separate transfers), so edges "
      "carry none; energy uses the additive solo-power model (each operator at its PU's solo power), an "
      "approximation since package power under co-execution is not measured");
  if (faster > 0) {
    res.notes.push_back(fmt::format(
        "{} paired step(s) were measured faster than one operator at a time (same PU) or the longer solo cost "
        "(across PUs); the written schedule cannot overlap operators on a serial PU nor shorten a cost, so its "
        "makespan {:.3f} µs exceeds the predicted {:.3f} µs",
        faster, s.makespan_us, m.latency_us));
  }
  res.schedule = std::move(s);
  return res;
}

}  // namespace

Result<ConcurrentPlan> MapConcurrent(const OpGraph& g0, const MappingCosts& c0, const OpGraph& g1,
                                     const MappingCosts& c1, const CoexecCosts& coexec, const ConcurrentOptions& o) {
  if (c0.num_ops() != g0.size() || c1.num_ops() != g1.size()) {
    return Error(ErrorCode::kInvalidArgument, "concurrent mapping: each request's costs must match its graph");
  }
  const std::vector<int>& chain0 = g0.topological_order();
  const std::vector<int>& chain1 = g1.topological_order();
  const auto t0 = std::chrono::steady_clock::now();
  HETPLAN_ASSIGN_OR_RETURN(WidenedMapping w, SearchWidened(c0, chain0, c1, chain1, coexec, o));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Back to a cost model per request, then both in one graph.
  auto as_cost_model = [](const OpGraph& g, const MappingCosts& c) {
    CostModel out(c.num_ops(), c.pus(), static_cast<int>(g.edges().size()));
    for (int v = 0; v < c.num_ops(); ++v) {
      for (int p = 0; p < c.num_pus(); ++p) {
        if (!c.supported(v, p)) continue;
        out.set_latency(v, p, c.latency_us(v, p));
        out.set_h2d(v, p, c.h2d_us(v, p));
        out.set_d2h(v, p, c.d2h_us(v, p));
      }
    }
    for (int p = 0; p < c.num_pus(); ++p) {
      for (int q = 0; q < c.num_pus(); ++q) out.set_slowdown(p, q, c.slowdown(p, q));
    }
    return out;
  };
  HETPLAN_ASSIGN_OR_RETURN(CombinedRequests both,
                           CombineRequests(g0, as_cost_model(g0, c0), g1, as_cost_model(g1, c1)));
  ConcurrentPlan plan;
  plan.graph = std::move(both.graph);
  plan.costs = std::move(both.costs);
  plan.mapping = std::move(w.mapping);
  const Problem problem{&plan.graph, &plan.costs, o.objective, std::nullopt, &both.requests};
  plan.result = ConcurrentResult(problem, both.requests.chain0, both.requests.chain1, coexec, plan.mapping,
                                 w.widening, o, seconds);
  plan.predicted_latency_us = plan.mapping.latency_us;
  plan.predicted_energy_uj = plan.mapping.energy_uj;
  // Priced with the search's own co-execution costs (the combined cost model
  // carries no co-execution rows here).
  References refs = ComputeReferences(problem, coexec);
  plan.baselines = std::move(refs.values);
  plan.best_serial_pu = refs.best_pu;
  plan.best_serial_energy_pu = refs.best_energy_pu;
  return plan;
}

Result<SolveResult> SolveConcurrent(const Problem& both, const ConcurrentOptions& o) {
  if (both.requests == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "concurrent mapping: the problem holds one request; it needs two");
  }
  const RequestSet& req = *both.requests;
  HETPLAN_ASSIGN_OR_RETURN(MappingCosts mc, BuildMappingCosts(*both.graph, *both.costs));
  const CoexecCosts coexec =
      BuildCoexecCosts(*both.graph, req.chain0, *both.graph, req.chain1, mc.pus(), both.costs->coexec());
  const auto t0 = std::chrono::steady_clock::now();
  HETPLAN_ASSIGN_OR_RETURN(WidenedMapping w, SearchWidened(mc, req.chain0, mc, req.chain1, coexec, o));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ConcurrentResult(both, req.chain0, req.chain1, coexec, w.mapping, w.widening, o, seconds);
}

namespace mapping_internal {

std::optional<ConcurrentMapping> BestPlacement(const MappingCosts& c0, std::span<const int> chain0,
                                               const MappingCosts& c1, std::span<const int> chain1,
                                               const CoexecCosts& coexec, Objective objective, int p, int q) {
  const Pricer pr(c0, chain0, c1, chain1, coexec, objective);
  return SearchPlacement(pr, static_cast<int>(chain0.size()), static_cast<int>(chain1.size()), c0.num_pus(), p, q,
                         objective);
}

Result<SolveResult> SolveBestPlacement(const Problem& both, const std::string& name) {
  const RequestSet& req = *both.requests;
  HETPLAN_ASSIGN_OR_RETURN(MappingCosts mc, BuildMappingCosts(*both.graph, *both.costs));
  const CoexecCosts coexec =
      BuildCoexecCosts(*both.graph, req.chain0, *both.graph, req.chain1, mc.pus(), both.costs->coexec());
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ConcurrentMapping> best;
  std::string label;
  int placements = 0;
  for (int p = 0; p < mc.num_pus(); ++p) {
    for (int q = 0; q < mc.num_pus(); ++q) {
      std::optional<ConcurrentMapping> m = BestPlacement(mc, req.chain0, mc, req.chain1, coexec, both.objective, p, q);
      if (!m) continue;
      ++placements;
      if (best && !(m->cost < best->cost)) continue;
      best = std::move(m);
      label = PlacementLabel(mc.pus(), p, q);
    }
  }
  if (!best) return Error(ErrorCode::kUnsupported, "{}: no PU runs every operator of a request", name);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ConcurrentOptions o{both.objective, ConcurrentSpace::kJoint, ChainAlgorithm::kDp, true};
  SolveResult written = ConcurrentResult(both, req.chain0, req.chain1, coexec, *best, Widening{best->cost, 0, ""}, o,
                                         seconds);
  SolveResult r;
  r.solver = name;
  r.formulation = "baseline";
  r.status = SolveStatus::kHeuristic;
  r.seconds = seconds;
  r.schedule = std::move(written.schedule);
  r.objective = both.objective == Objective::kLatency ? r.schedule->makespan_us
                                                      : r.schedule->energy_uj.value_or(std::nan(""));
  r.notes = {fmt::format("{}: {}", name, label), fmt::format("{}: best of {} placements", name, placements),
             fmt::format("{}: each placement at its best interleaving, priced and written as map_concurrent prices "
                         "and writes its plans (measured co-execution makespans for paired operators, else t0 + t1 "
                         "on one PU or max(t0, t1) across PUs; steps one after another)",
                         name)};
  return r;
}

}  // namespace mapping_internal

}  // namespace hetplan
