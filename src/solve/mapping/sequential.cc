// Sequential BIDENT mapping: the layered execution graph searched by
// topological DP and by Dijkstra, the greedy per-operator mapper, and the
// whole-model wrapper with its written timing.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

#include "hetplan/util/limits.h"
#include "hetplan/graph/algorithms.h"
#include "solve/mapping/internal.h"

namespace hetplan {
namespace {

using mapping_internal::EntryCost;
using mapping_internal::EntryGapUs;
using mapping_internal::ExitCost;
using mapping_internal::ExitGapUs;
using mapping_internal::NodeCost;
using mapping_internal::SwitchCost;
using mapping_internal::SwitchGapUs;


// Execution-graph size: s, t, one node per supported pair; edges from s, between
// consecutive layers and into t.
void CountGraph(const MappingCosts& c, std::span<const int> chain, ChainMapping& m) {
  const int k = c.num_pus();
  int64_t nodes = 2, edges = 0, prev = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    int64_t layer = 0;
    for (int p = 0; p < k; ++p) layer += c.supported(chain[i], p) ? 1 : 0;
    nodes += layer;
    edges += i == 0 ? layer : prev * layer;
    prev = layer;
  }
  m.nodes = nodes;
  m.edges = edges + (chain.empty() ? 1 : prev);
}

}  // namespace

Status CheckChain(const MappingCosts& c, std::span<const int> chain, Objective objective) {
  const int k = c.num_pus();
  if (k < 1) return Error(ErrorCode::kInvalidArgument, "mapping: no processing units");
  if (k > 255) return Error(ErrorCode::kLimitExceeded, "mapping: {} PUs; at most 255 are supported", k);
  std::vector<uint8_t> used(static_cast<size_t>(k), 0);
  for (size_t i = 0; i < chain.size(); ++i) {
    const int v = chain[i];
    if (v < 0 || v >= c.num_ops()) {
      return Error(ErrorCode::kInvalidArgument, "mapping: chain position {} names operator {}, outside 0..{}", i, v,
                   c.num_ops() - 1);
    }
    bool any = false;
    for (int p = 0; p < k; ++p) {
      if (!c.supported(v, p)) continue;
      any = true;
      used[p] = 1;
    }
    if (!any) {
      return Error(ErrorCode::kInfeasible,
                   "mapping: operator {} (chain position {}) is supported on no PU; give it a cost on some PU", v, i);
    }
  }
  if (objective == Objective::kEnergy) {
    for (int p = 0; p < k; ++p) {
      const double w = c.power_w(p);
      if (used[p] && (!std::isfinite(w) || w < 0)) {
        return Error(ErrorCode::kInvalidArgument,
                     "PU '{}' has no power_w; the energy objective needs the sustained power of every PU that can "
                     "run an operator: set it in the platform (--set {}.power_w=W) or in a `pu` row of the cost table",
                     c.pus()[p].name, c.pus()[p].name);
      }
    }
  }
  return Status::Ok();
}

double ChainCost(const MappingCosts& c, std::span<const int> chain, std::span<const int> pu, const ChainOptions& o) {
  if (chain.size() != pu.size()) return kNaN;
  double sum = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    const int v = chain[i], p = pu[i];
    if (p < 0 || p >= c.num_pus() || !c.supported(v, p)) return kNaN;
    sum += NodeCost(c, v, p, o);
    sum += i == 0 ? EntryCost(c, v, p, o) : SwitchCost(c, chain[i - 1], pu[i - 1], v, p, o);
  }
  if (!chain.empty()) sum += ExitCost(c, chain.back(), pu.back(), o);
  return sum;
}

Result<ChainMapping> MapChainDp(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o) {
  HETPLAN_RETURN_IF_ERROR(CheckChain(c, chain, o.objective));
  const int k = c.num_pus();
  const size_t n = chain.size();
  ChainMapping m;
  CountGraph(c, chain, m);
  if (n == 0) {
    m.cost = 0;
    return m;
  }
  // cur[p]: cheapest s → v_{i,p}; back[i·K + q]: the PU of position i − 1 on
  // that path. Two rolling layers and one byte per node.
  std::vector<double> cur(static_cast<size_t>(k)), next(static_cast<size_t>(k));
  std::vector<uint8_t> back(n * static_cast<size_t>(k), 0);
  for (int p = 0; p < k; ++p) {
    const int v = chain[0];
    cur[p] = c.supported(v, p) ? EntryCost(c, v, p, o) + NodeCost(c, v, p, o) : kInf;
  }
  for (size_t i = 1; i < n; ++i) {
    const int u = chain[i - 1], v = chain[i];
    for (int q = 0; q < k; ++q) {
      if (!c.supported(v, q)) {
        next[q] = kInf;
        continue;
      }
      double best = kInf;
      int arg = 0;
      for (int p = 0; p < k; ++p) {
        if (cur[p] == kInf) continue;
        const double d = cur[p] + SwitchCost(c, u, p, v, q, o);
        if (d < best) {
          best = d;
          arg = p;
        }
      }
      next[q] = best + NodeCost(c, v, q, o);
      back[i * k + q] = static_cast<uint8_t>(arg);
    }
    std::swap(cur, next);
  }
  double best = kInf;
  int arg = 0;
  for (int p = 0; p < k; ++p) {
    if (cur[p] == kInf) continue;
    const double d = cur[p] + ExitCost(c, chain[n - 1], p, o);
    if (d < best) {
      best = d;
      arg = p;
    }
  }
  m.cost = best;
  m.pu.resize(n);
  for (size_t i = n; i-- > 0;) {
    m.pu[i] = arg;
    arg = back[i * k + arg];
  }
  return m;
}

Result<ChainMapping> MapChainDijkstra(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o) {
  HETPLAN_RETURN_IF_ERROR(CheckChain(c, chain, o.objective));
  const int k = c.num_pus();
  const int64_t n = static_cast<int64_t>(chain.size());
  ChainMapping m;
  CountGraph(c, chain, m);
  if (n == 0) {
    m.cost = 0;
    return m;
  }
  const int64_t num_nodes = n * k + 2;
  if (num_nodes > std::numeric_limits<int32_t>::max() / 2 || m.edges > std::numeric_limits<int32_t>::max()) {
    return Error(ErrorCode::kLimitExceeded, "mapping: execution graph with {} nodes and {} edges is too large",
                 num_nodes, m.edges);
  }
  // Node ids: s = 0, v_{i,p} = 1 + i·K + p, t = 1 + N·K. Unsupported pairs
  // keep their id but have no edges. The weight of an edge includes the node
  // cost of its head, so that every s–t path costs its mapping's objective.
  const int32_t s = 0, t = static_cast<int32_t>(1 + n * k);
  auto id = [k](int64_t i, int p) { return static_cast<int32_t>(1 + i * k + p); };
  std::vector<int32_t> offset(static_cast<size_t>(num_nodes) + 1, 0);
  std::vector<int32_t> head(static_cast<size_t>(m.edges));
  std::vector<double> weight(static_cast<size_t>(m.edges));
  int32_t e = 0;
  for (int p = 0; p < k; ++p) {  // s → first layer
    if (!c.supported(chain[0], p)) continue;
    head[e] = id(0, p);
    weight[e++] = EntryCost(c, chain[0], p, o) + NodeCost(c, chain[0], p, o);
  }
  offset[1] = e;
  for (int64_t i = 0; i < n; ++i) {
    const int u = chain[i];
    for (int p = 0; p < k; ++p) {
      if (c.supported(u, p)) {
        if (i + 1 < n) {
          const int v = chain[i + 1];
          for (int q = 0; q < k; ++q) {
            if (!c.supported(v, q)) continue;
            head[e] = id(i + 1, q);
            weight[e++] = SwitchCost(c, u, p, v, q, o) + NodeCost(c, v, q, o);
          }
        } else {
          head[e] = t;
          weight[e++] = ExitCost(c, u, p, o);
        }
      }
      offset[id(i, p) + 1] = e;
    }
  }
  offset[t + 1] = e;

  std::vector<double> dist(static_cast<size_t>(num_nodes), kInf);
  std::vector<int32_t> pred(static_cast<size_t>(num_nodes), -1);
  // A binary heap: the frontier of a layered graph is at most a few layers
  // wide, where it beats the radix heap the concurrent search uses.
  using Item = std::pair<double, int32_t>;
  std::vector<Item> heap;
  heap.reserve(static_cast<size_t>(4 * k * k + 16));
  const auto later = std::greater<Item>();
  dist[s] = 0;
  heap.emplace_back(0.0, s);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [d, x] = heap.back();
    heap.pop_back();
    if (d > dist[x]) continue;  // stale entry
    if (x == t) break;
    for (int32_t a = offset[x]; a < offset[x + 1]; ++a) {
      const double nd = d + weight[a];
      const int32_t y = head[a];
      if (nd < dist[y]) {
        dist[y] = nd;
        pred[y] = x;
        heap.emplace_back(nd, y);
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }
  m.cost = dist[t];
  m.pu.resize(static_cast<size_t>(n));
  for (int32_t x = pred[t]; x != s; x = pred[x]) {
    const int64_t i = (x - 1) / k;
    m.pu[static_cast<size_t>(i)] = static_cast<int>((x - 1) % k);
  }
  return m;
}

Result<ChainMapping> MapChainGreedy(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o) {
  HETPLAN_RETURN_IF_ERROR(CheckChain(c, chain, o.objective));
  ChainMapping m;
  CountGraph(c, chain, m);
  m.pu.resize(chain.size());
  for (size_t i = 0; i < chain.size(); ++i) {
    double best = kInf;
    for (int p = 0; p < c.num_pus(); ++p) {
      if (!c.supported(chain[i], p)) continue;
      const double d = NodeCost(c, chain[i], p, o);
      if (d < best) {
        best = d;
        m.pu[i] = p;
      }
    }
  }
  m.cost = ChainCost(c, chain, m.pu, o);
  return m;
}

namespace mapping_internal {

Schedule TimePhases(const Problem& problem, const MappingCosts& c, const std::vector<Phase>& phases,
                    const std::vector<int>& device, const std::vector<double>& slowdown, TransferAccounting a) {
  const OpGraph& g = *problem.graph;
  const CostModel& costs = *problem.costs;
  Schedule s;
  s.ops.resize(static_cast<size_t>(g.size()));
  std::vector<double> pu_free(static_cast<size_t>(c.num_pus()), 0.0);
  double phase_start = 0;
  std::vector<std::pair<int, int>> ops;  // (topological position, branch)
  for (const Phase& phase : phases) {
    ops.clear();
    for (size_t b = 0; b < phase.branches.size(); ++b) {
      for (int v : phase.branches[b]) ops.emplace_back(g.topo_position(v), static_cast<int>(b));
    }
    std::sort(ops.begin(), ops.end());
    std::vector<double> cursor(phase.branches.size(), phase_start);
    std::vector<int> prev(phase.branches.size(), -1);
    for (const auto& [pos, b] : ops) {
      const int v = g.topological_order()[pos];
      const int p = device[v];
      double ready =
          cursor[b] + (prev[b] < 0 ? EntryGapUs(c, v, p) : SwitchGapUs(c, prev[b], device[prev[b]], v, p, a));
      for (int e : g.in_edges(v)) {
        const int u = g.edges()[e].from;
        const double transfer = device[u] != p ? costs.transfer_us(e, device[u], p) : 0.0;
        ready = std::max(ready, s.ops[u].finish_us + transfer);
      }
      ScheduledOp& so = s.ops[v];
      so.device = p;
      so.slowdown = slowdown[v];
      so.start_us = std::max(ready, pu_free[p]);
      so.finish_us = so.start_us + costs.latency_us(v, p) * slowdown[v];
      pu_free[p] = so.finish_us;
      cursor[b] = so.finish_us;
      prev[b] = v;
    }
    double end = phase_start;
    for (size_t b = 0; b < cursor.size(); ++b) {
      if (prev[b] >= 0) end = std::max(end, cursor[b] + ExitGapUs(c, prev[b], device[prev[b]]));
    }
    phase_start = end;
  }
  for (const ScheduledOp& so : s.ops) s.makespan_us = std::max(s.makespan_us, so.finish_us);
  s.energy_uj = ScheduleEnergy(problem, s);
  return s;
}

bool IsChain(const OpGraph& g) {
  if (static_cast<int>(g.edges().size()) != std::max(0, g.size() - 1)) return false;
  for (const Edge& e : g.edges()) {
    if (g.topo_position(e.to) != g.topo_position(e.from) + 1) return false;
  }
  return true;
}

void PredictChain(const MappingCosts& c, std::span<const int> chain, std::span<const int> pu, TransferAccounting a,
                  double& latency_us, std::optional<double>& energy_uj) {
  latency_us = ChainCost(c, chain, pu, ChainOptions{Objective::kLatency, a});
  const double e = ChainCost(c, chain, pu, ChainOptions{Objective::kEnergy, a});
  energy_uj = std::isfinite(e) ? std::optional<double>(e) : std::nullopt;
}

void AddSinglePuBaselines(const MappingCosts& c, std::span<const int> chain, const ChainOptions& o, MapResult& r) {
  double best_us = kInf, best_uj = kInf;
  bool have_cpu = false;
  for (int p = 0; p < c.num_pus(); ++p) {
    bool all = true;
    for (int v : chain) all = all && c.supported(v, p);
    if (!all) continue;
    const std::vector<int> pu(chain.size(), p);
    double us = 0;
    std::optional<double> uj;
    PredictChain(c, chain, pu, o.accounting, us, uj);
    const std::string& name = c.pus()[p].name;
    r.baselines[name + "_only_us"] = us;
    if (!have_cpu && !c.accelerator(p)) {
      r.baselines["cpu_only_us"] = us;
      have_cpu = true;
    }
    if (us < best_us) {
      best_us = us;
      r.best_latency_pu = name;
    }
    if (uj) {
      r.baselines[name + "_only_uj"] = *uj;
      if (*uj < best_uj) {
        best_uj = *uj;
        r.best_energy_pu = name;
      }
    }
  }
  if (best_us < kInf) r.baselines["best_single_us"] = best_us;
  if (best_uj < kInf) r.baselines["best_single_uj"] = best_uj;
}

std::string DeviceCounts(const MappingCosts& c, const std::vector<int>& device) {
  std::vector<int> count(static_cast<size_t>(c.num_pus()), 0);
  for (int d : device) {
    if (d >= 0) ++count[d];
  }
  std::string out;
  for (int p = 0; p < c.num_pus(); ++p) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", c.pus()[p].name, count[p]);
  }
  return out;
}

}  // namespace mapping_internal

using mapping_internal::AddSinglePuBaselines;
using mapping_internal::DeviceCounts;
using mapping_internal::IsChain;
using mapping_internal::PredictChain;
using mapping_internal::TimePhases;

Result<MapResult> MapSequential(const Problem& problem, const MappingCosts& c, const MapOptions& o) {
  if (problem.graph == nullptr || problem.costs == nullptr || c.num_ops() != problem.graph->size() ||
      c.num_pus() != problem.costs->num_pus()) {
    return Error(ErrorCode::kInvalidArgument, "mapping: the graph, its cost model and the mapping costs must agree");
  }
  const OpGraph& g = *problem.graph;
  const std::vector<int>& chain = g.topological_order();
  const ChainOptions co{problem.objective, o.accounting};
  const auto t0 = std::chrono::steady_clock::now();
  Result<ChainMapping> m =
      o.algorithm == ChainAlgorithm::kDp ? MapChainDp(c, chain, co) : MapChainDijkstra(c, chain, co);
  if (!m.ok()) return m.status();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  MapResult r;
  r.chain = IsChain(g);
  r.device.assign(static_cast<size_t>(g.size()), -1);
  for (size_t i = 0; i < chain.size(); ++i) r.device[chain[i]] = m->pu[i];
  PredictChain(c, chain, m->pu, o.accounting, r.predicted_latency_us, r.predicted_energy_uj);
  AddSinglePuBaselines(c, chain, co, r);

  Schedule s = TimePhases(problem, c, {Phase{{chain}}}, r.device, std::vector<double>(g.size(), 1.0), o.accounting);
  SolveResult& res = r.result;
  res.formulation = fmt::format("{} {}", ToString(o.algorithm), ToString(o.accounting));
  res.objective = m->cost;
  res.seconds = seconds;
  const bool approximate = !r.chain && o.accounting == TransferAccounting::kNeighbour;
  res.status = approximate ? SolveStatus::kHeuristic : SolveStatus::kOptimal;
  if (!approximate) {
    res.bound = m->cost;
    res.gap = 0;
  }
  res.notes.push_back(fmt::format(
      "sequential mapping: shortest path over BIDENT's execution graph ({} nodes, {} edges) by {}, {} accounting, "
      "objective {}: predicted latency {:.3f} µs{}; operators per PU: {}",
      m->nodes, m->edges, o.algorithm == ChainAlgorithm::kDp ? "topological DP" : "Dijkstra", ToString(o.accounting),
      ToString(problem.objective), r.predicted_latency_us,
      r.predicted_energy_uj ? fmt::format(", energy {:.3f} µJ", *r.predicted_energy_uj) : std::string(),
      DeviceCounts(c, r.device)));
  bool boundary = false;
  for (int p = 0; p < c.num_pus(); ++p) boundary = boundary || c.boundary_us(p) > 0;
  if (o.accounting == TransferAccounting::kConservative) {
    res.notes.push_back(
        std::string("conservative accounting: every accelerator operator is charged its full H2D and D2H (an upper "
                    "bound on transfers), ") +
        (boundary ? "and each switch the boundary cost of the PU it enters"
                  : "so the optimum equals the greedy per-operator choice"));
  }
  if (approximate) {
    res.notes.push_back(
        "the graph is not a chain: neighbour accounting charges copies between topological neighbours, an "
        "approximation of the real data movement along edges; the exact ILP (hetplan map --compare-ilp, or "
        "hetplan partition) gives the true optimum of the edge-transfer model");
  }
  res.notes.push_back(fmt::format(
      "written timing: operators run one at a time in topological order, separated by the copies the accounting "
      "charges and never before an input's edge transfer (cost model) has arrived; makespan_us excludes the final "
      "D2H and energy_uj counts operators only (predicted {:.3f} µs, written makespan {:.3f} µs)",
      r.predicted_latency_us, s.makespan_us));
  res.schedule = std::move(s);
  return r;
}

}  // namespace hetplan
