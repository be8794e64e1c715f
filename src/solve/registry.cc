// The planner registry and the Solve() facade.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hetplan/solve/solver.h"
#include "solve/backends.h"

namespace hetplan {
namespace {

struct Family {
  MethodInfo info;
  SolverFactory factory = nullptr;
};

struct Alias {
  std::string canonical;
  std::string notice;
};

struct Registry {
  std::mutex mu;
  // Never erased: FindSolver hands out raw pointers that stay valid.
  std::map<std::string, std::unique_ptr<Solver>> solvers;
  std::map<std::string, Family> families;  // by prefix
  std::map<std::string, Alias> aliases;
  std::vector<std::string> order;  // listed names, in registration order
};

Registry& GetRegistry() {
  static Registry* r = new Registry();  // never destroyed: safe at exit
  return *r;
}

void RegisterBuiltinSolvers();

std::string Names() {
  std::string names;
  for (const MethodInfo& m : ListSolvers()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

std::string ObjectiveList(const std::vector<Objective>& objectives) {
  std::string out;
  for (Objective o : objectives) out += (out.empty() ? "" : " and ") + ToString(o);
  return out;
}

// The checks every method shares, against what it declares.
Status CheckSupports(const MethodInfo& info, const Problem& p) {
  if (std::find(info.objectives.begin(), info.objectives.end(), p.objective) == info.objectives.end()) {
    return Error(ErrorCode::kUnsupported, "solver '{}' plans for the {} objective only, not {}", info.name,
                 ObjectiveList(info.objectives), ToString(p.objective));
  }
  if (p.num_requests() != info.requests) {
    return Error(ErrorCode::kUnsupported, "solver '{}' plans {} at once, but the problem has {}", info.name,
                 info.requests == 1 ? "one request" : "two requests",
                 p.num_requests() == 1 ? "one request" : "two requests");
  }
  if (!info.spatial_pus) {
    for (const PuInfo& pu : p.costs->pus()) {
      if (pu.spatial) {
        return Error(ErrorCode::kUnsupported,
                     "solver '{}' models serial CPU/GPU/NPU-style PUs only, but PU '{}' is spatial (a crossbar "
                     "budget); use a partitioning method (e.g. --solver exact) for CIM platforms",
                     info.name, pu.name);
      }
    }
  }
  if (!info.reprogram) {
    for (const PuInfo& pu : p.costs->pus()) {
      if (pu.reprogram) {
        return Error(ErrorCode::kUnsupported,
                     "solver '{}' does not model reprogramming, and PU '{}' reprograms; use --solver exact or a "
                     "one-request baseline, or remove {}.reprogram",
                     info.name, pu.name, pu.name);
      }
    }
  }
  if (!info.shared_adcs) {
    for (const PuInfo& pu : p.costs->pus()) {
      if (pu.adc_pool > 0) {
        return Error(ErrorCode::kUnsupported,
                     "solver '{}' does not model a shared ADC pool, and PU '{}' has one (shared_adcs: {}); use "
                     "--solver exact or a one-request baseline, or remove {}.shared_adcs",
                     info.name, pu.name, pu.adc_pool, pu.name);
      }
    }
  }
  return Status::Ok();
}

// Splits "single:cpu" into the family prefix and its argument.
bool SplitParametric(const std::string& name, std::string* prefix, std::string* argument) {
  const size_t colon = name.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= name.size()) return false;
  *prefix = name.substr(0, colon);
  *argument = name.substr(colon + 1);
  return true;
}

void RegisterBuiltinSolvers() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterSolver(backends::MakeExactSolver());
    RegisterSolver(backends::MakeMipSolver());
    for (auto& s : backends::MakeMappingSolvers()) RegisterSolver(std::move(s));
    for (auto& s : backends::MakeBaselineSolvers()) RegisterSolver(std::move(s));
    RegisterSolverFamily("single", backends::SingleFamilyInfo(), &backends::MakeSingleSolver);
    RegisterSolverAlias("ilp", "exact",
                        "solver 'ilp' is now called 'exact' (the exact search; the CIM paper's MIP on CBC is 'mip')");
    RegisterSolverAlias("pair:map", "map_concurrent", "solver 'pair:map' is now called 'map_concurrent'");
  });
}

}  // namespace

std::string ToString(MethodFamily f) {
  switch (f) {
    case MethodFamily::kExact:
      return "exact";
    case MethodFamily::kMip:
      return "mip";
    case MethodFamily::kMapping:
      return "mapping";
    case MethodFamily::kBaseline:
      return "baseline";
  }
  return "unknown";
}

void RegisterSolver(std::unique_ptr<Solver> solver) {
  if (!solver) return;
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string name = solver->info().name;
  // The first registration wins: pointers from FindSolver must never dangle.
  if (r.solvers.emplace(name, std::move(solver)).second) r.order.push_back(name);
}

void RegisterSolverFamily(const std::string& prefix, MethodInfo info, SolverFactory factory) {
  if (factory == nullptr) return;
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::string name = info.name;
  if (r.families.emplace(prefix, Family{std::move(info), factory}).second) r.order.push_back(name);
}

void RegisterSolverAlias(const std::string& alias, const std::string& canonical, const std::string& notice) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.aliases.emplace(alias, Alias{canonical, notice});
}

Result<ResolvedName> ResolveSolverName(const std::string& name) {
  RegisterBuiltinSolvers();
  ResolvedName out;
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    if (auto a = r.aliases.find(name); a != r.aliases.end()) {
      out.canonical = a->second.canonical;
      out.notice = a->second.notice;
    } else {
      out.canonical = name;
    }
  }
  if (FindSolver(out.canonical) == nullptr) {
    return Error(ErrorCode::kNotFound, "solver '{}': unknown; available: {} (hetplan solvers lists what each does)",
                 name, Names());
  }
  return out;
}

const Solver* FindSolver(const std::string& name) {
  RegisterBuiltinSolvers();
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string key = name;
  if (auto a = r.aliases.find(key); a != r.aliases.end()) key = a->second.canonical;
  if (auto it = r.solvers.find(key); it != r.solvers.end()) return it->second.get();
  std::string prefix, argument;
  if (!SplitParametric(key, &prefix, &argument)) return nullptr;
  auto fam = r.families.find(prefix);
  if (fam == r.families.end()) return nullptr;
  std::unique_ptr<Solver> made = fam->second.factory(argument);
  if (!made) return nullptr;
  const Solver* ptr = made.get();
  r.solvers.emplace(key, std::move(made));
  return ptr;
}

std::vector<MethodInfo> ListSolvers() {
  RegisterBuiltinSolvers();
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<MethodInfo> out;
  for (const std::string& name : r.order) {
    if (auto it = r.solvers.find(name); it != r.solvers.end()) {
      if (it->second->info().listed) out.push_back(it->second->info());
      continue;
    }
    for (const auto& [prefix, family] : r.families) {
      if (family.info.name == name) out.push_back(family.info);
    }
  }
  return out;
}

std::vector<std::string> SolverNames() {
  std::vector<std::string> names;
  for (const MethodInfo& m : ListSolvers()) names.push_back(m.name);
  return names;
}

std::vector<std::string> SolverNames(MethodFamily family, int requests) {
  std::vector<std::string> names;
  for (const MethodInfo& m : ListSolvers()) {
    if (m.family == family && m.requests == requests && m.name.find('<') == std::string::npos) {
      names.push_back(m.name);
    }
  }
  return names;
}

namespace {

// What Solve() checks after every method, as OR-Tools' math_opt checks a
// solve's result: status, termination, schedule, bound and gap agree with
// each other and with what the method promises (MethodInfo). A result that
// breaks one is a bug in the method; it is refused, never reported.
Status CheckResult(const MethodInfo& info, const SolveOptions& options, const SolveResult& r) {
  auto bad = [&](const std::string& what) {
    return Error(ErrorCode::kInternal, "solver {}: {} (status {}, termination {}); a bug in the method, please report it",
                 info.name, what, ToString(r.status), ToString(r.termination));
  };
  const bool found = r.status == SolveStatus::kOptimal || r.status == SolveStatus::kFeasible ||
                     r.status == SolveStatus::kHeuristic;
  if (found && !r.schedule) return bad("a status that claims a schedule, without one");
  if (!found && r.schedule) return bad("a schedule with a status that claims none");
  switch (r.status) {
    case SolveStatus::kOptimal:
      if (!info.proves_optimality) return bad("optimal from a method that proves nothing");
      if (r.termination != Termination::kProved) return bad("optimal, but stopped before a proof");
      if (!std::isnan(r.gap) && r.gap > options.relative_gap + 1e-9) {
        return bad(fmt::format("optimal with a gap of {:g}, above the tolerance {:g}", r.gap, options.relative_gap));
      }
      break;
    case SolveStatus::kHeuristic:
      if (r.termination != Termination::kCompleted) return bad("a heuristic result with a search's termination");
      break;
    case SolveStatus::kInfeasible:
      if (r.termination != Termination::kProvedInfeasible) return bad("infeasible without a proof of it");
      break;
    case SolveStatus::kFeasible:
      if (r.termination == Termination::kProved || r.termination == Termination::kCompleted ||
          r.termination == Termination::kProvedInfeasible) {
        return bad("stopped early, but the termination says it finished");
      }
      break;
    case SolveStatus::kNoSolution:  // a heuristic may finish without a schedule (nothing within a cap)
      if (r.termination == Termination::kProved || r.termination == Termination::kProvedInfeasible) {
        return bad("no schedule, but the termination says the search finished");
      }
      break;
  }
  if (!std::isnan(r.bound) && !std::isnan(r.objective) && r.bound > r.objective * (1 + 1e-9) + 1e-9) {
    return bad(fmt::format("a bound {:g} above the objective {:g}", r.bound, r.objective));
  }
  return Status::Ok();
}

}  // namespace

Result<SolveResult> Solve(const std::string& solver, const Problem& problem, const SolveOptions& options) {
  // The call's one clock: every method reads the time left from it.
  const Deadline deadline = Deadline::In(options.time_limit_s);
  HETPLAN_ASSIGN_OR_RETURN(ResolvedName resolved, ResolveSolverName(solver));
  const Solver* backend = FindSolver(resolved.canonical);
  HETPLAN_RETURN_IF_ERROR(ValidateSolveOptions(options));
  HETPLAN_RETURN_IF_ERROR(CheckOptionsApply(resolved.canonical, options));
  HETPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  HETPLAN_RETURN_IF_ERROR(CheckSupports(backend->info(), problem));
  HETPLAN_ASSIGN_OR_RETURN(SolveResult result, backend->SolveValidated(problem, options, deadline));
  result.solver = resolved.canonical;
  result.seconds = deadline.ElapsedSeconds();
  HETPLAN_RETURN_IF_ERROR(CheckResult(backend->info(), options, result));
  return result;
}

}  // namespace hetplan
