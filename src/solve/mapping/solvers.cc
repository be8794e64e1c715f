// BIDENT's mapping as planners: "map" (sequential shortest path),
// "map_parallel" (phase-wise intra-model parallelism) and "map_concurrent"
// (two requests at once). See docs/mapping.md.
#include <memory>

#include "hetplan/solve/mapping.h"
#include "hetplan/solve/solver.h"
#include "solve/backends.h"

namespace hetplan {
namespace {

MethodInfo MappingInfo(std::string name, std::string summary, std::string mode, int requests) {
  MethodInfo m;
  m.name = std::move(name);
  m.summary = std::move(summary);
  m.family = MethodFamily::kMapping;
  m.objectives = {Objective::kLatency, Objective::kEnergy};
  m.requests = requests;
  m.spatial_pus = false;
  m.schedule_mode = std::move(mode);
  m.docs = "docs/mapping.md";
  return m;
}

// The one-request modes: MapResult's extras become MappingStats.
class OneRequestMapping final : public Solver {
 public:
  explicit OneRequestMapping(bool parallel)
      : info_(parallel ? MappingInfo("map_parallel",
                                     "BIDENT's intra-model parallel mapping (phase-wise heuristic, contention)",
                                     "map-parallel", 1)
                       : MappingInfo("map", "BIDENT's sequential mapping: shortest path over its execution graph",
                                     "map-sequential", 1)),
        parallel_(parallel) {
    // Exact for a chain under its accounting (status optimal), otherwise heuristic.
    info_.proves_optimality = !parallel;
  }
  const MethodInfo& info() const override { return info_; }
  Result<SolveResult> SolveValidated(const Problem& problem, const SolveOptions& options,
                                     const Deadline& /*deadline*/) const override {
    HETPLAN_ASSIGN_OR_RETURN(MappingCosts mc, BuildMappingCosts(*problem.graph, *problem.costs));
    HETPLAN_ASSIGN_OR_RETURN(MapResult r, parallel_ ? MapParallel(problem, mc, options.mapping)
                                                    : MapSequential(problem, mc, options.mapping));
    SolveResult out = std::move(r.result);
    out.termination = out.status == SolveStatus::kOptimal ? Termination::kProved : Termination::kCompleted;
    MappingStats& st = out.mapping.emplace();
    st.accounting = options.mapping.accounting;
    st.algorithm = options.mapping.algorithm;
    st.predicted_latency_us = r.predicted_latency_us;
    st.predicted_energy_uj = r.predicted_energy_uj;
    st.references = std::move(r.baselines);
    st.best_latency_pu = std::move(r.best_latency_pu);
    st.best_energy_pu = std::move(r.best_energy_pu);
    st.parallel = parallel_;
    st.chain = r.chain;
    st.parallel_phases = r.parallel_phases;
    st.shared_pu_phases = r.shared_pu_phases;
    return out;
  }

 private:
  MethodInfo info_;
  bool parallel_;
};

class ConcurrentMappingSolver final : public Solver {
 public:
  ConcurrentMappingSolver()
      : info_(MappingInfo("map_concurrent",
                          "BIDENT's two-request co-scheduling: Dijkstra/DP over joint or aligned states",
                          "map-concurrent", 2)) {
    info_.proves_optimality = true;  // within its state space and co-execution cost model
  }
  const MethodInfo& info() const override { return info_; }
  Result<SolveResult> SolveValidated(const Problem& problem, const SolveOptions& options,
                                     const Deadline& /*deadline*/) const override {
    ConcurrentOptions co;
    co.objective = problem.objective;
    co.space = options.concurrent.space;
    co.algorithm = options.concurrent.algorithm;
    co.solo_steps = options.concurrent.solo_steps;
    return SolveConcurrent(problem, co);
  }

 private:
  MethodInfo info_;
};

}  // namespace

namespace backends {

std::vector<std::unique_ptr<Solver>> MakeMappingSolvers() {
  std::vector<std::unique_ptr<Solver>> out;
  out.push_back(std::make_unique<OneRequestMapping>(false));
  out.push_back(std::make_unique<OneRequestMapping>(true));
  out.push_back(std::make_unique<ConcurrentMappingSolver>());
  return out;
}

}  // namespace backends
}  // namespace hetplan
