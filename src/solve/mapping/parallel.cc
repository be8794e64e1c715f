// Intra-model parallel BIDENT mapping: fork/join phases, the sequential
// search on every branch, contention slowdowns applied after the search.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/graph/algorithms.h"
#include "solve/mapping/internal.h"

namespace hetplan {
namespace {

using mapping_internal::EntryCost;
using mapping_internal::ExitCost;
using mapping_internal::Price;
using mapping_internal::SwitchCost;

// A branch's path cost with each operator's w stretched by its slowdown;
// copies are not stretched (the slowdown models memory contention on the
// kernel). NaN when a needed power is missing.
double AdjustedBranchCost(const MappingCosts& c, const std::vector<int>& branch, const std::vector<int>& device,
                          const std::vector<double>& slowdown, const ChainOptions& o) {
  double sum = 0;
  for (size_t i = 0; i < branch.size(); ++i) {
    const int v = branch[i], p = device[v];
    double us = c.latency_us(v, p) * slowdown[v];
    if (o.accounting == TransferAccounting::kConservative) us += c.h2d_us(v, p) + c.d2h_us(v, p);
    sum += Price(c, p, us, o.objective);
    sum += i == 0 ? EntryCost(c, v, p, o) : SwitchCost(c, branch[i - 1], device[branch[i - 1]], v, p, o);
  }
  if (!branch.empty()) sum += ExitCost(c, branch.back(), device[branch.back()], o);
  return sum;
}

// SF(P_run, P_interfere) per operator: the largest factor over the PUs
// active on the other branches of its phase (a PU shared with another branch
// serialises rather than interferes, so it does not count). Counts the
// parallel phases, and those that map two branches to one PU, in `r`.
std::vector<double> ContentionSlowdowns(const MappingCosts& c, const std::vector<Phase>& phases, int n, MapResult& r) {
  const int k = c.num_pus();
  std::vector<double> slowdown(static_cast<size_t>(n), 1.0);
  std::vector<uint8_t> active;
  for (const Phase& phase : phases) {
    if (!phase.parallel()) continue;
    ++r.parallel_phases;
    const size_t nb = phase.branches.size();
    active.assign(nb * k, 0);
    std::vector<int> users(static_cast<size_t>(k), 0);
    for (size_t b = 0; b < nb; ++b) {
      for (int v : phase.branches[b]) {
        uint8_t& a = active[b * k + r.device[v]];
        if (!a) ++users[r.device[v]];
        a = 1;
      }
    }
    if (std::any_of(users.begin(), users.end(), [](int u) { return u > 1; })) ++r.shared_pu_phases;
    for (size_t b = 0; b < nb; ++b) {
      for (int v : phase.branches[b]) {
        const int p = r.device[v];
        double sf = 1.0;
        for (size_t other = 0; other < nb; ++other) {
          if (other == b) continue;
          for (int q = 0; q < k; ++q) {
            if (q != p && active[other * k + q]) sf = std::max(sf, c.slowdown(p, q));
          }
        }
        slowdown[v] = sf;
      }
    }
  }
  return slowdown;
}

// The plan being built, with what it is judged by.
struct ParallelPlan {
  Schedule schedule;
  std::vector<double> slowdown;
  double latency = 0, energy = 0;
  std::string fallback;  // the PU that runs the whole model, when that won
};

// The whole model on one PU is a candidate too. Branches mapped one by one
// never see the edge transfers between PUs that the written timing charges
// (measured hand-offs between two CPU cores have no H2D/D2H for the search
// to price), so a phase-wise mapping that alternates PUs can be predicted
// slower than one PU alone; the plan is then the best single PU. Compared on
// what the plan is judged by (`score`): for latency the larger of the
// written makespan and the predicted latency (the summary reports the one,
// the references are the other: best_single_us is the single PU's predicted
// latency, so a returned plan is predicted no slower than any single PU),
// for energy the predicted energy.
template <typename Score>
void TrySinglePus(const Problem& problem, const MappingCosts& c, const MapOptions& o, Score score, MapResult& r,
                  ParallelPlan& plan) {
  const OpGraph& g = *problem.graph;
  const std::vector<int>& order = g.topological_order();
  for (int p = 0; p < c.num_pus(); ++p) {
    if (!std::all_of(order.begin(), order.end(), [&](int v) { return c.supported(v, p); })) continue;
    const std::vector<int> device(static_cast<size_t>(g.size()), p);
    const std::vector<double> ones(static_cast<size_t>(g.size()), 1.0);
    Schedule one = mapping_internal::TimePhases(problem, c, {Phase{{order}}}, device, ones, o.accounting);
    double us = 0;
    std::optional<double> uj;
    mapping_internal::PredictChain(c, order, std::vector<int>(order.size(), p), o.accounting, us, uj);
    const double candidate = score(one, us, uj.value_or(std::numeric_limits<double>::quiet_NaN()));
    // NaN (no power) never wins; a NaN phase-wise energy loses to any number.
    const double current = score(plan.schedule, plan.latency, plan.energy);
    if (!(candidate < current || (std::isnan(current) && !std::isnan(candidate)))) continue;
    plan.fallback = c.pus()[p].name;
    r.device = device;
    plan.slowdown = ones;
    plan.latency = us;
    plan.energy = uj.value_or(std::numeric_limits<double>::quiet_NaN());
    r.predicted_latency_us = us;
    r.predicted_energy_uj = uj;
    r.shared_pu_phases = 0;
    plan.schedule = std::move(one);
  }
}

// What the result's notes say: the fallback, the method, the contention
// model, the prediction and the written timing.
void AddNotes(const Problem& problem, const MappingCosts& c, const MapOptions& o, size_t phases,
              double phase_wise_score, double plan_score, const ParallelPlan& plan, MapResult& r) {
  SolveResult& res = r.result;
  const bool latency = problem.objective == Objective::kLatency;
  if (!plan.fallback.empty()) {
    res.notes.push_back(fmt::format(
        "single-PU fallback: the phase-wise mapping's {} ({:.3f} {}) is worse than the whole model on {} ({:.3f} "
        "{}), so the plan is the whole model on {}",
        latency ? "larger of written makespan and predicted latency" : "predicted energy", phase_wise_score,
        latency ? "µs" : "µJ", plan.fallback, plan_score, latency ? "µs" : "µJ", plan.fallback));
  }
  res.notes.push_back(fmt::format(
      "intra-model parallel mapping (BIDENT's phase-wise heuristic): {} phases, {} with parallel branches; each "
      "branch is mapped alone by the sequential search ({}, {} accounting, objective {}), not jointly, so no "
      "optimality is claimed; operators per PU: {}",
      phases, r.parallel_phases, ToString(o.algorithm), ToString(o.accounting), ToString(problem.objective),
      mapping_internal::DeviceCounts(c, r.device)));
  res.notes.push_back(
      "contention: each operator on a parallel branch runs SF(run, interfere) times slower, the largest factor over "
      "the PUs active on the other branches of its phase (static, over the whole phase); applied after the search, "
      "so it changes no assignment");
  res.notes.push_back(
      fmt::format("predicted latency {:.3f} µs = {}{}", plan.latency,
                  plan.fallback.empty() ? "Σ over phases of the slowest contention-adjusted branch"
                                        : "the whole model on " + plan.fallback + " under the accounting",
                  r.predicted_energy_uj ? fmt::format("; energy {:.3f} µJ", plan.energy) : std::string()));
  if (r.shared_pu_phases > 0) {
    res.notes.push_back(fmt::format(
        "{} parallel phase(s) map two branches to one PU: the max-branch formula assumes they overlap, but a serial "
        "PU runs one operator at a time, so the written schedule serialises them (written makespan {:.3f} µs vs "
        "predicted {:.3f} µs)",
        r.shared_pu_phases, plan.schedule.makespan_us, plan.latency));
  }
  res.notes.push_back(fmt::format(
      "written timing: phases run one after another (barriers); inside a phase each branch's operators follow one "
      "another with the copies the accounting charges, after their inputs' edge transfers and when their PU is free; "
      "makespan_us excludes the final D2H and energy_uj counts operators only (written makespan {:.3f} µs)",
      plan.schedule.makespan_us));
}

}  // namespace

Result<MapResult> MapParallel(const Problem& problem, const MappingCosts& c, const MapOptions& o) {
  if (problem.graph == nullptr || problem.costs == nullptr || c.num_ops() != problem.graph->size() ||
      c.num_pus() != problem.costs->num_pus()) {
    return Error(ErrorCode::kInvalidArgument, "mapping: the graph, its cost model and the mapping costs must agree");
  }
  const OpGraph& g = *problem.graph;
  const ChainOptions co{problem.objective, o.accounting};
  HETPLAN_RETURN_IF_ERROR(CheckChain(c, g.topological_order(), problem.objective));
  const std::vector<Phase> phases = Phases(g);

  MapResult r;
  r.chain = mapping_internal::IsChain(g);
  r.device.assign(static_cast<size_t>(g.size()), -1);
  const auto t0 = std::chrono::steady_clock::now();
  for (const Phase& phase : phases) {
    for (const std::vector<int>& branch : phase.branches) {
      Result<ChainMapping> m =
          o.algorithm == ChainAlgorithm::kDp ? MapChainDp(c, branch, co) : MapChainDijkstra(c, branch, co);
      if (!m.ok()) return m.status();
      for (size_t i = 0; i < branch.size(); ++i) r.device[branch[i]] = m->pu[i];
    }
  }
  ParallelPlan plan;
  plan.slowdown = ContentionSlowdowns(c, phases, g.size(), r);
  // BIDENT's prediction: Σ over phases of the slowest adjusted branch; energy
  // is additive over every operator.
  const ChainOptions lat{Objective::kLatency, o.accounting}, en{Objective::kEnergy, o.accounting};
  for (const Phase& phase : phases) {
    double slowest = 0;
    for (const std::vector<int>& branch : phase.branches) {
      slowest = std::max(slowest, AdjustedBranchCost(c, branch, r.device, plan.slowdown, lat));
      plan.energy += AdjustedBranchCost(c, branch, r.device, plan.slowdown, en);
    }
    plan.latency += slowest;
  }
  r.predicted_latency_us = plan.latency;
  if (std::isfinite(plan.energy)) r.predicted_energy_uj = plan.energy;
  mapping_internal::AddSinglePuBaselines(c, g.topological_order(), co, r);

  plan.schedule = mapping_internal::TimePhases(problem, c, phases, r.device, plan.slowdown, o.accounting);
  auto score = [&](const Schedule& sched, double us, double uj) {
    return problem.objective == Objective::kLatency ? std::max(sched.makespan_us, us) : uj;
  };
  const double phase_wise_score = score(plan.schedule, plan.latency, plan.energy);
  TrySinglePus(problem, c, o, score, r, plan);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SolveResult& res = r.result;
  res.formulation = fmt::format("{} {}", ToString(o.algorithm), ToString(o.accounting));
  res.objective = problem.objective == Objective::kLatency ? plan.latency : plan.energy;
  res.seconds = seconds;
  res.status = SolveStatus::kHeuristic;
  AddNotes(problem, c, o, phases.size(), phase_wise_score, score(plan.schedule, plan.latency, plan.energy), plan, r);
  res.schedule = std::move(plan.schedule);
  return r;
}

}  // namespace hetplan
