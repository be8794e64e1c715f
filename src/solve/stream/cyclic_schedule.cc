// What a stream of inputs keeps each resource busy for (StreamLoads) and the
// cyclic schedule that runs a plan at a given initiation interval.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <utility>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/throughput.h"

namespace hetplan {
namespace {

int64_t Replicas(const std::vector<int64_t>* replicas, int v) { return replicas == nullptr ? 1 : (*replicas)[v]; }

// The resources of a stream a serial operator or a transfer occupies,
// modulo the II: which parts of [0, ii) are taken.
class ModuloTable {
 public:
  explicit ModuloTable(double ii) : ii_(ii), eps_(1e-9 * std::max(ii, 1.0)) {}

  // The earliest t ≥ ready at which [t, t + d) is free modulo the II;
  // nullopt when no gap of d is left.
  std::optional<double> EarliestFit(double ready, double d) const {
    if (d <= eps_) return ready;
    const double r = Residue(ready);
    const double base = ready - r;
    std::optional<double> best;
    auto consider = [&](double x) {
      if (!Free(x, d)) return;
      const double t = x + eps_ >= r ? base + x : base + ii_ + x;
      if (!best || t < *best) best = std::max(t, ready);
    };
    consider(r);
    for (const auto& [a, b] : busy_) consider(b >= ii_ - eps_ ? 0.0 : b);
    return best;
  }

  void Add(double t, double d) {
    if (d <= eps_) return;
    const double x = Residue(t);
    busy_.emplace_back(x, std::min(ii_, x + d));
    if (x + d > ii_ + eps_) busy_.emplace_back(0.0, x + d - ii_);
  }

 private:
  double Residue(double t) const {
    double x = std::fmod(std::max(t, 0.0), ii_);
    if (x > ii_ - eps_) x = 0;
    return x;
  }
  bool FreeRange(double lo, double hi) const {
    for (const auto& [a, b] : busy_) {
      if (a < hi - eps_ && lo < b - eps_) return false;
    }
    return true;
  }
  bool Free(double x, double d) const {
    if (x + d <= ii_ + eps_) return FreeRange(x, x + d);
    return FreeRange(x, ii_) && FreeRange(0, x + d - ii_);
  }

  double ii_, eps_;
  std::vector<std::pair<double, double>> busy_;
};

// The smallest o + m × ii ≥ t over integers m ≥ 0.
double NextSlot(double t, double o, double ii) {
  if (t <= o) return o;
  const double m = std::ceil((t - o) / ii - 1e-9);
  return o + m * ii;
}

// The stage and the totals of a cyclic schedule whose starts are set.
void FinishCyclic(const Problem& p, double ii, Schedule* s) {
  s->initiation_interval_us = ii;
  s->makespan_us = 0;
  for (ScheduledOp& op : s->ops) {
    op.stage = static_cast<int>(std::floor(op.start_us / ii + 1e-9));
    s->makespan_us = std::max(s->makespan_us, op.finish_us);
  }
  s->energy_uj = ScheduleEnergy(p, *s);
}

// How one try places a stream: serial PUs' operators at fixed `slots` (by
// operator id) when given, else in the earliest free slot modulo the II
// (`serial_modulo`) or laid end to end in placement order; transfers on a
// link in the earliest free slot (`link_modulo`) or end to end. The modulo
// placements fail (nullopt) when a resource's free time is too fragmented;
// end to end always fits when every load is ≤ the II.
struct Policy {
  bool serial_modulo = true, link_modulo = true;
  const std::vector<double>* slots = nullptr;
};

std::optional<Schedule> PlaceCyclic(const Problem& p, const std::vector<int>& a, const std::vector<int64_t>& replicas,
                                    double ii, const std::vector<int>& order, const Policy& policy) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const int k = c.num_pus();
  std::vector<ModuloTable> tables(static_cast<size_t>(k) * k + k, ModuloTable(ii));
  std::vector<double> cursor(tables.size(), 0.0);
  // `item`: an operator's id, or -1 for a transfer.
  auto place = [&](size_t resource, int item, double ready, double d) -> std::optional<double> {
    if (item >= 0 && policy.slots != nullptr) return NextSlot(ready, std::fmod((*policy.slots)[item], ii), ii);
    if (item >= 0 ? policy.serial_modulo : policy.link_modulo) {
      auto t = tables[resource].EarliestFit(ready, d);
      if (t) tables[resource].Add(*t, d);
      return t;
    }
    const double t = NextSlot(ready, cursor[resource], ii);
    cursor[resource] += d;
    return t;
  };
  Schedule s;
  s.ops.resize(g.size());
  s.transfer_start_us.assign(g.edges().size(), std::numeric_limits<double>::quiet_NaN());
  for (int v : order) {
    double ready = 0;
    for (int e : g.in_edges(v)) {
      const int u = g.edges()[e].from;
      if (a[u] == a[v]) {
        ready = std::max(ready, s.ops[u].finish_us);
        continue;
      }
      const double x = c.transfer_us(e, a[u], a[v]);
      const size_t link = static_cast<size_t>(std::min(a[u], a[v])) * k + std::max(a[u], a[v]);
      auto t = place(link, -1, s.ops[u].finish_us, x);
      if (!t) return std::nullopt;
      s.transfer_start_us[e] = *t;
      ready = std::max(ready, *t + x);
    }
    ScheduledOp& op = s.ops[v];
    op.device = a[v];
    op.replicas = replicas[v];
    const double d = ScheduledDuration(c, v, op);
    if (c.pu(a[v]).spatial) {
      op.start_us = ready;
    } else {
      auto t = place(static_cast<size_t>(k) * k + a[v], v, ready, d);
      if (!t) return std::nullopt;
      op.start_us = *t;
    }
    op.finish_us = op.start_us + d;
  }
  FinishCyclic(p, ii, &s);
  return s;
}

// Serial operators at fixed `slots`; transfers in the earliest free slot of
// their link, or laid end to end where the link's free time is too fragmented.
std::optional<Schedule> PlaceAtSlots(const Problem& p, const std::vector<int>& a,
                                     const std::vector<int64_t>& replicas, double ii, const std::vector<int>& order,
                                     const std::vector<double>& slots) {
  Policy policy;
  policy.slots = &slots;
  if (auto s = PlaceCyclic(p, a, replicas, ii, order, policy)) return s;
  policy.link_modulo = false;
  return PlaceCyclic(p, a, replicas, ii, order, policy);
}

// Slots by residue: each resource's operators and transfers in the order of
// `residue` (where in the cycle an input reaches them), each as near its
// residue as the cycle allows.
std::optional<Schedule> PlaceByResidue(const Problem& p, const std::vector<int>& a,
                                       const std::vector<int64_t>& replicas, double ii, const std::vector<int>& order,
                                       const std::vector<double>& residue) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const int n = g.size();
  // Items: operators on serial PUs, by PU, each with its duration.
  struct Item {
    int id;
    size_t resource;
    double residue, d;
  };
  std::vector<Item> items;
  for (int v = 0; v < n; ++v) {
    if (!c.pu(a[v]).spatial) items.push_back({v, static_cast<size_t>(a[v]), residue[v], c.latency_us(v, a[v])});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) {
    return x.resource != y.resource ? x.resource < y.resource : x.residue < y.residue;
  });
  // Per resource: each slot as near its residue as the ones before it allow
  // (forward), then pulled back where the cycle would overflow (backward:
  // the last must end by the first's start + II).
  std::vector<double> slots(n, 0.0);
  for (size_t lo = 0, hi = 0; lo < items.size(); lo = hi) {
    while (hi < items.size() && items[hi].resource == items[lo].resource) ++hi;
    std::vector<double> o(hi - lo);
    for (size_t i = lo; i < hi; ++i) {
      o[i - lo] = i == lo ? items[i].residue : std::max(items[i].residue, o[i - lo - 1] + items[i - 1].d);
    }
    double limit = o[0] + ii;
    for (size_t i = hi; i-- > lo;) {
      o[i - lo] = std::min(o[i - lo], limit - items[i].d);
      limit = o[i - lo];
    }
    for (size_t i = lo; i < hi; ++i) slots[items[i].id] = o[i - lo];
  }
  return PlaceAtSlots(p, a, replicas, ii, order, slots);
}

// Local search over each serial PU's cyclic order of its operators, the
// slots laid end to end from the first one's residue: moves one operator to
// another place in its PU's order while that shortens one input's latency,
// starting from the order of `from`'s starts in the cycle. Deterministic: it
// stops after a fixed amount of work (evaluations × graph size), not a time.
std::optional<Schedule> ImproveOrders(const Problem& p, const std::vector<int>& a,
                                      const std::vector<int64_t>& replicas, double ii, const std::vector<int>& order,
                                      const Schedule& from) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const int k = c.num_pus();
  std::vector<std::vector<int>> seq(k);
  for (int v : order) {
    if (!c.pu(a[v]).spatial) seq[a[v]].push_back(v);
  }
  std::vector<double> rot(k, 0.0);
  for (int q = 0; q < k; ++q) {
    std::stable_sort(seq[q].begin(), seq[q].end(), [&](int u, int v) {
      return std::fmod(from.ops[u].start_us, ii) < std::fmod(from.ops[v].start_us, ii);
    });
    if (!seq[q].empty()) rot[q] = std::fmod(from.ops[seq[q][0]].start_us, ii);
  }
  std::vector<double> slots(g.size(), 0.0);
  int64_t work = 1'500'000;
  const int64_t each = g.size() + static_cast<int64_t>(g.edges().size()) + 1;
  auto evaluate = [&]() -> std::optional<Schedule> {
    work -= each;
    for (int q = 0; q < k; ++q) {
      double at = rot[q];
      for (int v : seq[q]) {
        slots[v] = at;
        at += c.latency_us(v, q);
      }
    }
    return PlaceAtSlots(p, a, replicas, ii, order, slots);
  };
  std::optional<Schedule> best = evaluate();
  for (bool improved = true; improved && work > 0;) {
    improved = false;
    for (int q = 0; q < k && work > 0; ++q) {
      std::vector<int>& s = seq[q];
      const int m = static_cast<int>(s.size());
      for (int i = 0; i < m && work > 0; ++i) {
        // Every place on a short order, the 16 either side on a long one.
        const int lo = m <= 40 ? 0 : std::max(0, i - 16), hi = m <= 40 ? m : std::min(m, i + 17);
        for (int j = lo; j < hi && work > 0; ++j) {
          if (i == j) continue;
          const int v = s[i];
          s.erase(s.begin() + i);
          s.insert(s.begin() + j, v);
          auto t = evaluate();
          if (t && t->makespan_us < best->makespan_us * (1 - 1e-12)) {
            best = std::move(t);
            improved = true;
            continue;
          }
          s.erase(s.begin() + j);
          s.insert(s.begin() + i, v);
        }
      }
    }
  }
  return best;
}

}  // namespace

double StreamLoads::interval_us() const {
  double ii = spatial_us;
  for (double x : serial_us) ii = std::max(ii, x);
  for (double x : link_us) ii = std::max(ii, x);
  return ii;
}

std::string StreamLoads::Bottleneck(const CostModel& c) const {
  const double ii = interval_us();
  const int k = c.num_pus();
  for (int p = 0; p < k; ++p) {
    if (serial_us[p] == ii && ii > 0) return "pu " + c.pu(p).name;
  }
  for (int p = 0; p < k; ++p) {
    for (int q = p + 1; q < k; ++q) {
      if (link_us[static_cast<size_t>(p) * k + q] == ii && ii > 0) return "link " + c.pu(p).name + "-" + c.pu(q).name;
    }
  }
  return spatial_op >= 0 ? fmt::format("operator {} on a spatial PU", spatial_op) : "nothing";
}

StreamLoads ComputeStreamLoads(const Problem& p, const std::vector<int>& a, const std::vector<int64_t>* replicas) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const int k = c.num_pus();
  StreamLoads l;
  l.serial_us.assign(k, 0.0);
  l.link_us.assign(static_cast<size_t>(k) * k, 0.0);
  l.crossbars.assign(k, 0);
  for (int v = 0; v < g.size(); ++v) {
    const int q = a[v];
    if (!c.pu(q).spatial) {
      l.serial_us[q] += c.latency_us(v, q);
      continue;
    }
    const double d = c.replicated_latency_us(v, q, Replicas(replicas, v));
    if (d > l.spatial_us || l.spatial_op < 0) {
      l.spatial_us = std::max(l.spatial_us, d);
      l.spatial_op = v;
    }
    l.crossbars[q] += Replicas(replicas, v) * c.crossbars(v, q);
  }
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const int pu = a[g.edges()[e].from], pv = a[g.edges()[e].to];
    if (pu == pv) continue;
    l.link_us[static_cast<size_t>(std::min(pu, pv)) * k + std::max(pu, pv)] += c.transfer_us(e, pu, pv);
    // A segment-boundary cost (--boundary-cost fitted) is the receiving
    // serial PU's own time: its thread starts the segment.
    if (!c.pu(pv).spatial) l.serial_us[pv] += c.boundary_us(pv);
  }
  return l;
}

Schedule CyclicSchedule(const Problem& p, const std::vector<int>& a, const std::vector<int64_t>& replicas, double ii,
                        bool improve) {
  const OpGraph& g = *p.graph;
  if (ii <= 0) ii = 1e-9;
  // Placement orders: the plan's own list schedule (one input, one copy),
  // so an input keeps the order that makes one inference short; and the
  // same start times taken modulo the II, so each resource's slots follow
  // where in the cycle an input reaches them. Ties in topological order;
  // both are topological orders as placement needs.
  const Schedule once = ListSchedule(p, a);
  std::vector<int> by_start(g.topological_order());
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](int u, int v) { return once.ops[u].start_us < once.ops[v].start_us; });
  std::optional<Schedule> best;
  for (const bool serial_modulo : {true, false}) {
    for (const bool link_modulo : {true, false}) {
      auto s = PlaceCyclic(p, a, replicas, ii, by_start, Policy{serial_modulo, link_modulo, nullptr});
      if (s && (!best || s->makespan_us < best->makespan_us)) best = std::move(s);
    }
  }
  // Slots laid out by residue: a resource's operators in the order an input
  // reaches them within one cycle (only the slots' order changes; inputs
  // still follow the topological order).
  std::vector<double> residue(g.size());
  for (int v = 0; v < g.size(); ++v) residue[v] = std::fmod(once.ops[v].start_us, ii);
  if (auto s = PlaceByResidue(p, a, replicas, ii, by_start, residue)) {
    if (!best || s->makespan_us < best->makespan_us) best = std::move(s);
  }
  if (!improve) return *best;
  if (auto s = ImproveOrders(p, a, replicas, ii, by_start, *best)) {
    if (s->makespan_us < best->makespan_us) best = std::move(s);
  }
  return *best;
}

}  // namespace hetplan

namespace hetplan {

std::optional<Schedule> ScheduleWithPairs(const Problem& p, const std::vector<int>& a,
                                          const std::vector<int64_t>& replicas, double ii,
                                          const std::vector<ModuloPair>& pairs) {
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  const int n = g.size(), m = static_cast<int>(g.edges().size());
  Schedule s;
  s.ops.resize(n);
  std::vector<double> d(n + m, 0.0);
  for (int v = 0; v < n; ++v) {
    s.ops[v].device = a[v];
    s.ops[v].replicas = replicas[v];
    d[v] = ScheduledDuration(c, v, s.ops[v]);
  }
  // Arcs (from, to, w): start[to] ≥ start[from] + w.
  struct Arc {
    int from, to;
    double w;
  };
  std::vector<Arc> arcs;
  for (int e = 0; e < m; ++e) {
    const int u = g.edges()[e].from, v = g.edges()[e].to;
    if (a[u] == a[v]) {
      arcs.push_back({u, v, d[u]});
      continue;
    }
    d[n + e] = c.transfer_us(e, a[u], a[v]);
    arcs.push_back({u, n + e, d[u]});
    arcs.push_back({n + e, v, d[n + e]});
  }
  for (const ModuloPair& q : pairs) {
    const double shift = static_cast<double>(q.m) * ii;
    arcs.push_back({q.i, q.j, d[q.i] - shift});
    arcs.push_back({q.j, q.i, d[q.j] + shift - ii});
  }
  std::vector<double> start(n + m, 0.0);
  double scale = ii;
  for (double x : d) scale += x;
  const double eps = 1e-12 * scale;
  bool changed = true;
  for (int round = 0; changed; ++round) {
    if (round > n + m) return std::nullopt;  // still relaxing: a positive cycle
    changed = false;
    for (const Arc& arc : arcs) {
      if (start[arc.from] + arc.w > start[arc.to] + eps) {
        start[arc.to] = start[arc.from] + arc.w;
        changed = true;
      }
    }
  }
  for (int v = 0; v < n; ++v) {
    s.ops[v].start_us = start[v];
    s.ops[v].finish_us = start[v] + d[v];
  }
  s.transfer_start_us.assign(m, std::numeric_limits<double>::quiet_NaN());
  for (int e = 0; e < m; ++e) {
    if (a[g.edges()[e].from] != a[g.edges()[e].to]) s.transfer_start_us[e] = start[n + e];
  }
  FinishCyclic(p, ii, &s);
  return s;
}

}  // namespace hetplan
