// The plan types: objective names, problem validation, schedule energy,
// status and termination names.
#include "hetplan/plan/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hetplan/plan/result.h"
#include "hetplan/util/text.h"

namespace hetplan {
namespace {

bool Finite(double x) { return std::isfinite(x); }

// Two requests: the split lies inside the graph and each chain lists its
// request's operators once.
Status ValidateRequests(const OpGraph& g, const RequestSet& r) {
  const int n = g.size();
  if (r.split <= 0 || r.split >= n) {
    return Error(ErrorCode::kInvalidArgument,
                 "two-request problem: request 1 starts at operator {} of {}; each request needs an operator",
                 r.split, n);
  }
  std::vector<char> seen(static_cast<size_t>(n), 0);
  auto check = [&](const std::vector<int>& chain, int lo, int hi, int request) -> Status {
    if (static_cast<int>(chain.size()) != hi - lo) {
      return Error(ErrorCode::kInvalidArgument, "two-request problem: request {}'s chain has {} operators, not {}",
                   request, chain.size(), hi - lo);
    }
    for (int v : chain) {
      if (v < lo || v >= hi || seen[v]) {
        return Error(ErrorCode::kInvalidArgument,
                     "two-request problem: request {}'s chain lists operator {} outside its range or twice", request, v);
      }
      seen[v] = 1;
    }
    return Status::Ok();
  };
  HETPLAN_RETURN_IF_ERROR(check(r.chain0, 0, r.split, 0));
  return check(r.chain1, r.split, n, 1);
}

}  // namespace

Result<Objective> ParseObjective(std::string_view text) {
  const std::string t = LowerAscii(text);
  if (t == "latency") return Objective::kLatency;
  if (t == "energy") return Objective::kEnergy;
  if (t == "throughput") return Objective::kThroughput;
  return Error(ErrorCode::kInvalidArgument, "objective '{}': unknown; use 'latency', 'energy' or 'throughput'", text);
}

std::string ToString(Objective o) {
  switch (o) {
    case Objective::kLatency:
      return "latency";
    case Objective::kEnergy:
      return "energy";
    case Objective::kThroughput:
      return "throughput";
  }
  return "unknown";
}

std::string ToString(SolveStatus s) {
  switch (s) {
    case SolveStatus::kOptimal:
      return "optimal";
    case SolveStatus::kFeasible:
      return "feasible";
    case SolveStatus::kInfeasible:
      return "infeasible";
    case SolveStatus::kNoSolution:
      return "no_solution";
    case SolveStatus::kHeuristic:
      return "heuristic";
  }
  return "unknown";
}

std::string ToString(Termination t) {
  switch (t) {
    case Termination::kProved:
      return "proved";
    case Termination::kTimeLimit:
      return "time_limit";
    case Termination::kNodeLimit:
      return "node_limit";
    case Termination::kCompleted:
      return "completed";
    case Termination::kProvedInfeasible:
      return "proved_infeasible";
    case Termination::kInterrupted:
      return "interrupted";
    case Termination::kNumerical:
      return "numerical";
  }
  return "unknown";
}

Status ValidateProblem(const Problem& p) {
  if (p.graph == nullptr || p.costs == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "problem: the graph and the cost model must both be set");
  }
  const OpGraph& g = *p.graph;
  const CostModel& c = *p.costs;
  if (c.num_pus() < 1) {
    return Error(ErrorCode::kInvalidArgument, "cost model: no processing units; the platform needs at least one PU");
  }
  if (c.num_ops() != g.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "cost model has {} operators but graph '{}' has {}; build the cost model from this graph", c.num_ops(),
                 g.name(), g.size());
  }
  if (c.num_edges() != static_cast<int>(g.edges().size())) {
    return Error(ErrorCode::kInvalidArgument,
                 "cost model has {} edges but graph '{}' has {}; build the cost model from this graph", c.num_edges(),
                 g.name(), g.edges().size());
  }
  for (int q = 0; q < c.num_pus(); ++q) {
    const PuInfo& pu = c.pu(q);
    if (pu.spatial && pu.capacity < 0) {
      return Error(ErrorCode::kInvalidArgument, "PU '{}': spatial PU with capacity {}; the capacity must be ≥ 0",
                   pu.name, pu.capacity);
    }
    if (pu.power_w && (!Finite(*pu.power_w) || *pu.power_w < 0)) {
      return Error(ErrorCode::kInvalidArgument, "PU '{}': power_w {} must be finite and ≥ 0", pu.name, *pu.power_w);
    }
    if (pu.reprogram && (!pu.spatial || !(pu.write_ns_per_row > 0) || !(pu.endurance_writes > 0) ||
                         !(pu.lifetime_inferences > 0) || !Finite(pu.endurance_writes) ||
                         !Finite(pu.lifetime_inferences))) {
      return Error(ErrorCode::kInvalidArgument,
                   "PU '{}': reprogramming needs a spatial PU, write_ns_per_row > 0 and a finite endurance budget > 0",
                   pu.name);
    }
    if (pu.reprogram) {
      for (int r = 0; r < q; ++r) {
        if (c.pu(r).reprogram) {
          return Error(ErrorCode::kInvalidArgument, "PUs '{}' and '{}' both reprogram; reprogram one PU at most",
                       c.pu(r).name, pu.name);
        }
      }
    }
    if (pu.adc_pool < 0 || (pu.adc_pool > 0 && !pu.spatial)) {
      return Error(ErrorCode::kInvalidArgument,
                   "PU '{}': a shared ADC pool of {} needs a spatial PU and a pool ≥ 1; set none (0) otherwise",
                   pu.name, pu.adc_pool);
    }
  }
  for (int v = 0; v < g.size(); ++v) {
    const std::string& name = g.op(v).name;
    bool any = false;
    std::vector<std::string> why;
    for (int q = 0; q < c.num_pus(); ++q) {
      const PuInfo& pu = c.pu(q);
      if (!c.supported(v, q)) {
        why.push_back(fmt::format("{}: unsupported", pu.name));
        continue;
      }
      const double t = c.latency_us(v, q);
      if (!Finite(t) || t < 0) {
        return Error(ErrorCode::kInvalidArgument,
                     "operator '{}' (id {}) on PU '{}': latency {} µs must be finite and ≥ 0", name, v, pu.name, t);
      }
      if (pu.spatial) {
        const int64_t xb = c.crossbars(v, q);
        if (xb < 0) {
          return Error(ErrorCode::kInvalidArgument, "operator '{}' (id {}) on PU '{}': {} crossbars; must be ≥ 0", name,
                       v, pu.name, xb);
        }
        if (xb > pu.capacity) {
          why.push_back(fmt::format("{}: needs {} crossbars, capacity {}", pu.name, xb, pu.capacity));
          continue;
        }
        const int64_t adcs = c.adcs(v, q);
        if (adcs < 0 || (adcs > 0 && pu.adc_pool == 0) || adcs > pu.adc_pool) {
          return Error(ErrorCode::kInvalidArgument,
                       "operator '{}' (id {}) on PU '{}': holds {} ADCs of a shared pool of {}; must be 0 to the pool",
                       name, v, pu.name, adcs, pu.adc_pool);
        }
      }
      any = true;
    }
    if (!any) {
      std::string considered;
      for (size_t i = 0; i < why.size(); ++i) considered += (i ? "; " : "") + why[i];
      return Error(ErrorCode::kInfeasible,
                   "operator '{}' (id {}, {}) can run on no PU (considered {}); support its type on some PU or "
                   "raise the capacity",
                   name, v, g.op(v).type, considered);
    }
  }
  for (int e = 0; e < c.num_edges(); ++e) {
    for (int a = 0; a < c.num_pus(); ++a) {
      for (int b = 0; b < c.num_pus(); ++b) {
        const double t = c.transfer_us(e, a, b);
        if (!Finite(t) || t < 0) {
          const Edge& edge = g.edges()[e];
          return Error(ErrorCode::kInvalidArgument,
                       "edge '{}' → '{}': transfer {} µs from PU '{}' to '{}' must be finite and ≥ 0",
                       g.op(edge.from).name, g.op(edge.to).name, t, c.pu(a).name, c.pu(b).name);
        }
      }
    }
  }
  if (p.latency_cap_us && (std::isnan(*p.latency_cap_us) || *p.latency_cap_us < 0)) {
    return Error(ErrorCode::kInvalidArgument, "latency cap {} µs: must be ≥ 0", *p.latency_cap_us);
  }
  if (p.requests != nullptr) HETPLAN_RETURN_IF_ERROR(ValidateRequests(g, *p.requests));
  return Status::Ok();
}

double ScheduledDuration(const CostModel& c, int v, const ScheduledOp& op) {
  return c.replicated_latency_us(v, op.device, op.replicas) * op.slowdown +
         (op.rewritten ? c.write_us(v, op.device) : 0.0);
}

std::optional<double> OperatorEnergy(const CostModel& c, int v, const ScheduledOp& op) {
  const auto& power = c.pu(op.device).power_w;
  if (!power) return std::nullopt;
  return ScheduledDuration(c, v, op) * *power + c.op_energy_uj(v, op.device) +
         (op.rewritten ? c.write(v, op.device).uj : 0.0);
}

std::vector<CrossbarRanges> PhysicalCrossbars(const Problem& p, const Schedule& s, int q) {
  const CostModel& c = *p.costs;
  const int n = static_cast<int>(s.ops.size());
  std::vector<CrossbarRanges> ids(n);
  int64_t resident = 0;
  std::vector<int> rewritten;
  for (int v = 0; v < n; ++v) {
    if (s.ops[v].device != q || c.crossbars(v, q) <= 0) continue;
    if (s.ops[v].rewritten) {
      rewritten.push_back(v);
      continue;
    }
    ids[v].push_back({resident, resident + c.crossbars(v, q) - 1});
    resident += c.crossbars(v, q);
  }
  std::stable_sort(rewritten.begin(), rewritten.end(),
                   [&](int a, int b) { return s.ops[a].start_us < s.ops[b].start_us; });
  for (size_t i = 0; i < rewritten.size(); ++i) {
    const int v = rewritten[i];
    // What the rewritten operators placed before it still hold when it starts.
    CrossbarRanges busy;
    for (size_t j = 0; j < i; ++j) {
      if (s.ops[rewritten[j]].finish_us > s.ops[v].start_us) {
        busy.insert(busy.end(), ids[rewritten[j]].begin(), ids[rewritten[j]].end());
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t need = c.crossbars(v, q), at = resident;
    for (size_t b = 0; need > 0; ++b) {
      const int64_t gap_end = b < busy.size() ? busy[b].first : INT64_MAX;
      if (gap_end > at) {
        const int64_t take = std::min(need, gap_end - at);
        ids[v].push_back({at, at + take - 1});
        need -= take;
      }
      if (b < busy.size()) at = std::max(at, busy[b].second + 1);
    }
  }
  return ids;
}

std::optional<double> ScheduleEnergy(const Problem& p, const Schedule& s) {
  double sum = 0;
  for (size_t v = 0; v < s.ops.size(); ++v) {
    if (s.ops[v].device < 0) continue;
    const std::optional<double> e = OperatorEnergy(*p.costs, static_cast<int>(v), s.ops[v]);
    if (!e) return std::nullopt;
    sum += *e;
  }
  return sum;
}

}  // namespace hetplan
