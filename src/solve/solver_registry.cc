// The solver facade: registry by name, problem validation, common helpers.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hetplan/solve/problem.h"
#include "hetplan/solve/solvers.h"

namespace hetplan {
namespace {

struct Registry {
  std::mutex mu;
  // Never erased: FindSolver hands out raw pointers that stay valid.
  std::map<std::string, std::unique_ptr<Solver>> solvers;
};

Registry& GetRegistry() {
  static Registry* r = new Registry();  // never destroyed: safe at exit
  return *r;
}

bool Finite(double x) { return std::isfinite(x); }

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Status ValidateOptions(const SolveOptions& o) {
  if (std::isnan(o.time_limit_s) || o.time_limit_s <= 0) {
    return Error(ErrorCode::kInvalidArgument, "time limit {} s: must be > 0 (use inf for no limit)", o.time_limit_s);
  }
  if (!Finite(o.relative_gap) || o.relative_gap < 0) {
    return Error(ErrorCode::kInvalidArgument, "relative gap {}: must be a finite number ≥ 0 (e.g. 1e-4)",
                 o.relative_gap);
  }
  if (o.threads < 0) {
    return Error(ErrorCode::kInvalidArgument, "threads {}: must be ≥ 0 (0 = all cores)", o.threads);
  }
  return Status::Ok();
}

}  // namespace

Result<Objective> ParseObjective(std::string_view text) {
  const std::string t = LowerAscii(text);
  if (t == "latency") return Objective::kLatency;
  if (t == "energy") return Objective::kEnergy;
  return Error(ErrorCode::kInvalidArgument, "objective '{}': unknown; use 'latency' or 'energy'", text);
}

std::string ToString(Objective o) {
  switch (o) {
    case Objective::kLatency:
      return "latency";
    case Objective::kEnergy:
      return "energy";
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
  return Status::Ok();
}

std::optional<double> ScheduleEnergy(const Problem& p, const Schedule& s) {
  const CostModel& c = *p.costs;
  double sum = 0;
  for (size_t v = 0; v < s.ops.size(); ++v) {
    const ScheduledOp& op = s.ops[v];
    if (op.device < 0) continue;
    const auto& power = c.pu(op.device).power_w;
    if (!power) return std::nullopt;
    sum += c.latency_us(static_cast<int>(v), op.device) * op.slowdown * *power;
  }
  return sum;
}

void RegisterSolver(std::unique_ptr<Solver> solver) {
  if (!solver) return;
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string name = solver->name();
  // The first registration wins: pointers from FindSolver must never dangle.
  r.solvers.emplace(std::move(name), std::move(solver));
}

void RegisterBuiltinSolvers() {
  static std::once_flag once;
  std::call_once(once, [] { RegisterSolver(MakeIlpCbcSolver()); });
}

const Solver* FindSolver(const std::string& name) {
  RegisterBuiltinSolvers();
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.solvers.find(name);
  return it == r.solvers.end() ? nullptr : it->second.get();
}

std::vector<std::string> SolverNames() {
  RegisterBuiltinSolvers();
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [name, solver] : r.solvers) names.push_back(name);
  return names;  // sorted: std::map order
}

Result<SolveResult> Solve(const std::string& solver, const Problem& problem, const SolveOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const Solver* backend = FindSolver(solver);
  if (backend == nullptr) {
    std::string names;
    for (const std::string& n : SolverNames()) names += (names.empty() ? "" : ", ") + n;
    return Error(ErrorCode::kNotFound, "solver '{}': unknown; available: {}", solver, names);
  }
  HETPLAN_RETURN_IF_ERROR(ValidateOptions(options));
  HETPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  HETPLAN_ASSIGN_OR_RETURN(SolveResult result, backend->SolveValidated(problem, options));
  if (result.solver.empty()) result.solver = backend->name();
  if (result.seconds <= 0) {
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return result;
}

}  // namespace hetplan
