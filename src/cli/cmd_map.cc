// `hetplan map`: BIDENT operator-level mapping (sequential, intra-model
// parallel, two-request concurrent) for latency or energy.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "hetplan/app/plan.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/baselines.h"
#include "hetplan/solve/mapping.h"
#include "hetplan/util/io.h"

namespace hetplan::cli {
namespace {

struct MapOpts {
  ModelOptions model;
  ProfilingFlags profiling;
  std::string platform = "soc-example";
  std::vector<std::string> sets;
  std::string costs, mode = "sequential", accounting = "conservative", objective = "latency", algorithm = "dp";
  std::string second_model, second_costs, coexec, out, csv, trace, pair_baseline;
  bool joint = false, lockstep = false, compare_ilp = false;
  double ilp_time_limit = 60;
  RefineFlags refine;
};

PlanInputs MakeInputs(const MapOpts& o, const std::string& model, const std::string& costs, const ImportOptions& io) {
  return MakePlanInputs(model, io, o.platform, o.sets, costs, o.profiling);
}

int WriteOutputs(const MapOpts& o, const nlohmann::json& s) {
  if (Status st = WriteScheduleOutputs(s, o.out, o.csv, o.trace); !st.ok()) return ReportError(st);
  return 0;
}

void PrintHeader(const PreparedProblem& pp, const std::string& basis) {
  std::printf("model     %s (%d operators, fusion %s)\n", pp.model.path.c_str(), pp.model.graph.size(),
              ToString(pp.model.fusion).c_str());
  for (const auto& line : PlanAssumptionLines(pp.model.assumptions)) std::printf("assumes   %s\n", line.c_str());
  std::printf("platform  %s%s\n", pp.platform.name.c_str(),
              pp.platform.overrides.empty()
                  ? ""
                  : (" with " + fmt::format("{}", fmt::join(pp.platform.overrides, " "))).c_str());
  for (const auto& note : pp.notes) std::printf("costs     %s\n", note.c_str());
  for (const auto& note : pp.run_notes) std::printf("run       %s\n", note.c_str());
  if (basis == "analytical") {
    std::printf("costs     analytical: every number below is a model prediction, not a measurement\n");
  } else {
    std::printf("costs     %s\n", basis.c_str());
  }
}

std::string Energy(const std::optional<double>& uj) {
  return uj ? fmt::format("{:.3f} µJ", *uj) : std::string("n/a (a used PU has no power_w)");
}

std::string EnergyChange(double uj, double best_single_uj) {
  const double saving = 100.0 * (1.0 - uj / best_single_uj);
  if (saving >= 0) return fmt::format("energy saving {:.1f}% vs the lowest-energy single PU", saving);
  return fmt::format("{:.1f}% more energy than the lowest-energy single PU", -saving);
}

// The written schedule (validated by Plan) in two lines.
void PrintSchedule(const nlohmann::json& s, const ValidationReport& v) {
  std::printf("schedule  makespan %.3f µs, energy %s (written timing, operators only)\n",
              s["makespan_us"].get<double>(),
              s["energy_uj"].is_null() ? "n/a" : fmt::format("{:.3f} µJ", s["energy_uj"].get<double>()).c_str());
  std::printf("validate  ok (%d operators, %d edges checked)\n", v.operators, v.edges);
}

int RunSingle(const MapOpts& o, const PreparedProblem& pp, const PlanSpec& spec) {
  const bool parallel = o.mode == "parallel";
  const Objective objective = spec.objective;
  const TransferAccounting accounting = spec.options.mapping.accounting;
  const ChainAlgorithm algorithm = spec.options.mapping.algorithm;
  std::vector<std::string> refine_lines;
  auto plan = o.refine.rounds ? PlanRefined(pp, spec, o.refine, &refine_lines) : Plan(pp.subject(), spec);
  if (!plan.ok()) return ReportError(plan.status());
  const SolveResult& res = plan->result;
  const MappingStats& m = *res.mapping;
  const nlohmann::json& s = plan->schedule;
  const std::string basis = CostBasis(pp.costs.pus());
  PrintHeader(pp, basis);
  std::printf("mode      %s, accounting %s, objective %s, search %s\n", o.mode.c_str(), ToString(accounting).c_str(),
              ToString(objective).c_str(), ToString(algorithm).c_str());
  std::map<std::string, int> per_pu;
  for (const ScheduledOp& op : res.schedule->ops) ++per_pu[pp.costs.pu(op.device).name];
  std::string counts;
  for (int p = 0; p < pp.costs.num_pus(); ++p) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", pp.costs.pu(p).name, per_pu[pp.costs.pu(p).name]);
  }
  std::printf("mapping   %s\n", counts.c_str());
  std::printf("predicted latency %.3f µs, energy %s (%s, %s accounting)\n", m.predicted_latency_us,
              Energy(m.predicted_energy_uj).c_str(), basis.c_str(), ToString(accounting).c_str());
  const auto& b = m.references;
  if (b.contains("best_single_us")) {
    std::printf("best single PU  latency %.3f µs (%s)", b.at("best_single_us"), m.best_latency_pu.c_str());
    if (b.contains("best_single_uj"))
      std::printf(", energy %.3f µJ (%s)", b.at("best_single_uj"), m.best_energy_pu.c_str());
    std::printf("\n");
    std::printf("speedup   %.3fx over the best single PU", b.at("best_single_us") / m.predicted_latency_us);
    if (b.contains("best_single_uj") && m.predicted_energy_uj) {
      std::printf(", %s", EnergyChange(*m.predicted_energy_uj, b.at("best_single_uj")).c_str());
    }
    std::printf("\n");
  } else {
    std::printf("best single PU  none: no PU supports every operator\n");
  }
  std::printf("status    %s (%s)\n", ToString(res.status).c_str(),
              res.status == SolveStatus::kOptimal ? "exact for BIDENT's execution graph under this accounting"
              : parallel                                ? "BIDENT's phase-wise heuristic"
                         : "exact for its execution graph, which approximates this DAG's data movement");
  if (!m.chain && accounting == TransferAccounting::kNeighbour && !parallel) {
    std::printf(
        "approximation: the graph is not a chain, so neighbour accounting only approximates the real data "
        "movement; %s\n",
        o.compare_ilp ? "the exact ILP follows" : "add --compare-ilp for the exact ILP optimum");
  }
  if (parallel) {
    std::printf("heuristic: branches mapped independently; slowdowns applied after the search (parallel phases: %d",
                m.parallel_phases);
    if (m.shared_pu_phases > 0) {
      std::printf(", of which %d map two branches to one PU and are serialised in the schedule", m.shared_pu_phases);
    }
    std::printf(")\n");
  }
  for (const auto& line : refine_lines) std::printf("refine    %s\n", line.c_str());
  PrintSchedule(s, plan->validation);
  if (o.compare_ilp) {
    SolveOptions so;
    so.time_limit_s = o.ilp_time_limit;
    so.threads = 1;
    const Problem problem{&pp.model.graph, &pp.costs, objective, std::nullopt};
    auto ilp = Solve("exact", problem, so);
    if (!ilp.ok()) {
      std::printf("ilp       unavailable: %s\n", ilp.status().message().c_str());
    } else if (!ilp->schedule) {
      std::printf("ilp       %s after %.2f s, no schedule\n", ToString(ilp->status).c_str(), ilp->seconds);
    } else {
      std::printf(
          "ilp       exact optimum of the edge-transfer model (operators may overlap across PUs): %s %.3f, "
          "status %s, gap %.4g%%, %.2f s; this mapping's written %s %.3f\n",
          ToString(objective).c_str(), ilp->objective, ToString(ilp->status).c_str(), 100.0 * ilp->gap, ilp->seconds,
          objective == Objective::kLatency ? "makespan" : "energy",
          objective == Objective::kLatency || s["energy_uj"].is_null() ? s["makespan_us"].get<double>()
                                                                       : s["energy_uj"].get<double>());
    }
  }
  if (int rc = WriteOutputs(o, s); rc != 0) return rc;
  if (!o.out.empty()) std::printf("wrote     %s\n", o.out.c_str());
  return 0;
}

int RunConcurrent(const MapOpts& o, const PreparedProblem& pp, const PreparedProblem& pp1, bool same_model,
                  const PlanSpec& spec) {
  const Objective objective = spec.objective;
  const ChainAlgorithm algorithm = spec.options.concurrent.algorithm;
  const PlanSubject second = pp1.subject();
  auto plan = Plan(pp.subject(), spec, same_model ? nullptr : &second);
  if (!plan.ok()) return ReportError(plan.status());
  const ConcurrentStats& m = *plan->result.concurrent;
  // --pair-baseline: BIDENT's two-request baseline's schedule is written instead.
  std::optional<PlanOutput> baseline;
  if (!o.pair_baseline.empty()) {
    const Solver* method = FindSolver(o.pair_baseline);
    if (method == nullptr || method->info().family != MethodFamily::kBaseline || method->info().requests != 2) {
      return ReportError(Error(ErrorCode::kInvalidArgument, "--pair-baseline {}: not a two-request baseline; use {}",
                               o.pair_baseline, fmt::join(SolverNames(MethodFamily::kBaseline, 2), " or ")));
    }
    PlanSpec bspec = spec;
    bspec.solver = o.pair_baseline;
    auto r = Plan(pp.subject(), bspec, same_model ? nullptr : &second);
    if (!r.ok()) return ReportError(r.status());
    if (!r->result.schedule) return ReportError(Error(ErrorCode::kUnsupported, "{}: no schedule", o.pair_baseline));
    baseline = std::move(r).value();
  }
  const std::string basis = CostBasis(pp.costs.pus());
  const bool aligned = m.space == ConcurrentSpace::kAligned;

  PrintHeader(pp, basis);
  if (!same_model) {
    std::printf("model 2   %s (%d operators)\n", pp1.model.path.c_str(), pp1.model.graph.size());
  }
  std::printf("mode      concurrent (%s), %s state space%s, objective %s, search %s\n",
              same_model ? "same model twice" : "two models", aligned ? "aligned (l, d0, d1)" : "joint (i, j)",
              aligned ? "" : (m.solo_steps ? " with solo steps" : ", lockstep"), ToString(objective).c_str(),
              ToString(algorithm).c_str());
  std::printf("search    %lld states, %lld settled, %lld transitions, %lld co-execution entries, %.3f ms\n",
              static_cast<long long>(m.states), static_cast<long long>(m.expanded),
              static_cast<long long>(m.transitions), static_cast<long long>(m.coexec_entries),
              1e3 * plan->result.seconds);
  std::printf("predicted latency %.3f µs, energy %s (%s)\n", m.predicted_latency_us,
              Energy(m.predicted_energy_uj).c_str(), basis.c_str());
  // The search widened by the whole-request placements (mapping.md): say when one of them won.
  for (const std::string& note : plan->result.notes) {
    if (note.starts_with("the placement candidate")) std::printf("widened   %s\n", note.c_str());
  }
  const auto& b = plan->references.values;
  if (b.contains("best_serial_us")) {
    std::printf("best single PU  both requests back to back: latency %.3f µs (%s)", b.at("best_serial_us"),
                plan->references.best_pu.c_str());
    if (b.contains("best_serial_uj")) {
      std::printf(", energy %.3f µJ (%s)", b.at("best_serial_uj"), plan->references.best_energy_pu.c_str());
    }
    std::printf("\n");
    std::printf("speedup   %.3fx over the best single PU", b.at("best_serial_us") / m.predicted_latency_us);
    if (b.contains("best_serial_uj") && m.predicted_energy_uj) {
      std::printf(", %s", EnergyChange(*m.predicted_energy_uj, b.at("best_serial_uj")).c_str());
    }
    std::printf("\n");
  } else {
    std::printf("best single PU  none: no PU supports every operator of both models\n");
  }
  if (b.contains("naive_multi_pu_us")) {
    std::printf("naive     each request whole on one PU, priced as the plan: %.3f µs (speedup %.3fx over it)\n",
                b.at("naive_multi_pu_us"), b.at("naive_multi_pu_us") / m.predicted_latency_us);
  }
  std::printf("status    optimal within the state space and the whole-request placements under the co-execution "
              "cost model\n");
  const PlanOutput& written = baseline ? *baseline : *plan;
  if (baseline) {
    std::printf("baseline  %s: makespan %.3f µs, energy %s; its schedule is written, not the mapping's (%s)\n",
                o.pair_baseline.c_str(), baseline->result.schedule->makespan_us,
                Energy(baseline->result.schedule->energy_uj).c_str(),
                fmt::format("{}", fmt::join(baseline->result.notes, "; ")).c_str());
  }
  if (o.compare_ilp) std::printf("ilp       not applicable to the concurrent mode (the ILP plans one request)\n");
  PrintSchedule(written.schedule, written.validation);
  if (int rc = WriteOutputs(o, written.schedule); rc != 0) return rc;
  if (!o.out.empty()) std::printf("wrote     %s\n", o.out.c_str());
  return 0;
}

}  // namespace

void RegisterMap(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "map", "Map each operator to a PU by shortest-path search (BIDENT): sequential, parallel or concurrent");
  auto o = std::make_shared<MapOpts>();
  AddModelOptions(sub, &o->model);
  sub->add_option("--platform", o->platform, "Preset name (soc-example, ...) or a YAML path")
      ->default_val("soc-example");
  sub->add_option("--set", o->sets, "Override a platform field, PU.KEY=VALUE (repeatable), e.g. gpu.power_w=5");
  sub->add_option("--costs", o->costs, "Cost table (CSV/JSON) for PUs with cost: table (or instead of profiling)");
  sub->add_option("--mode", o->mode, "sequential | parallel | concurrent")
      ->default_val("sequential")
      ->check(CLI::IsMember({"sequential", "parallel", "concurrent"}));
  auto* accounting = sub->add_option("--accounting", o->accounting,
                                     "conservative (every accelerator operator pays its H2D+D2H) | neighbour "
                                     "(copies on PU switches)")
                         ->default_val("conservative");
  sub->add_option("--objective", o->objective, "latency | energy")->default_val("latency");
  sub->add_option("--algorithm", o->algorithm, "dp | dijkstra (same optimum)")->default_val("dp");
  sub->add_option("--second-model", o->second_model,
                  "Concurrent mode: the second request's model (default: MODEL again)");
  sub->add_option("--second-costs", o->second_costs, "Cost table for --second-model");
  sub->add_option("--coexec", o->coexec, "Cost table whose coexec rows price operator pairs of the two models");
  sub->add_flag("--joint", o->joint,
                "Concurrent, same model: search the joint (i, j) space instead of the aligned one");
  sub->add_flag("--lockstep", o->lockstep,
                "Concurrent, joint space: BIDENT's literal transitions only (no solo steps while both run)");
  sub->add_option("--pair-baseline", o->pair_baseline,
                  "Concurrent: write the schedule of BIDENT's two-request baseline pair_serial or pair_naive_multi_pu "
                  "instead of the mapping's");
  sub->add_option("--out", o->out, "Schedule file (JSON, docs/schedule-format.md)");
  sub->add_option("--csv", o->csv, "CSV summary, one row per operator");
  sub->add_option("--trace", o->trace, "Chrome trace (Perfetto, chrome://tracing)");
  sub->add_flag("--compare-ilp", o->compare_ilp,
                MethodChoicesHelp("Also plan with", {"exact"}) + ", and print its optimum beside the mapping's");
  sub->add_option("--ilp-time-limit", o->ilp_time_limit, "Time limit for --compare-ilp in seconds")->default_val(60);
  AddProfilingFlags(sub, &o->profiling);
  AddBoundaryCostFlag(sub, &o->profiling);
  AddRefineFlags(sub, &o->refine);
  Register(sub, [o, accounting]() -> int {
    auto objective = ParseObjective(o->objective);
    if (!objective.ok()) return ReportError(objective.status());
    auto acc = ParseTransferAccounting(o->accounting);
    if (!acc.ok()) return ReportError(acc.status());
    auto algorithm = ParseChainAlgorithm(o->algorithm);
    if (!algorithm.ok()) return ReportError(algorithm.status());
    if (o->mode != "concurrent" &&
        (!o->second_model.empty() || o->joint || o->lockstep || !o->coexec.empty() || !o->pair_baseline.empty())) {
      return ReportError(
          Error(ErrorCode::kInvalidArgument,
                "--second-model, --coexec, --joint, --lockstep and --pair-baseline apply to --mode concurrent only"));
    }
    if (o->mode == "concurrent" && o->profiling.boundary_cost != "none") {
      // The two-request search prices each request's operators with their
      // copies folded in and has no state for "the PU before"; charging a
      // boundary there would be a number it does not optimise.
      return ReportError(Error(ErrorCode::kUnsupported,
                               "--boundary-cost {}: the concurrent (two-request) search does not model segment "
                               "boundaries; use --mode sequential or parallel, or --boundary-cost none",
                               o->profiling.boundary_cost));
    }
    if (o->mode == "concurrent" && o->refine.rounds) {
      return ReportError(Error(ErrorCode::kUnsupported,
                               "--refine: a two-request plan is not split and run one round at a time; use --mode "
                               "sequential or parallel"));
    }
    auto mode = ParseMapMode(o->mode);
    if (!mode.ok()) return ReportError(mode.status());
    MapSettings settings;
    settings.mode = *mode;
    settings.objective = *objective;
    if (accounting->count() > 0) settings.accounting = *acc;
    settings.algorithm = *algorithm;
    settings.second_model = !o->second_model.empty();
    settings.joint = o->joint;
    settings.lockstep = o->lockstep;
    if (!o->coexec.empty()) {
      auto t = LoadCostTable(o->coexec);
      if (!t.ok()) return ReportError(t.status());
      settings.coexec = t->coexec;
    }
    auto spec = MapPlanSpec(settings);
    if (!spec.ok()) return ReportError(spec.status());
    auto io = MakeImportOptions(o->model);
    if (!io.ok()) return ReportError(io.status());
    auto pp = PrepareProblem(MakeInputs(*o, o->model.path, o->costs, *io));
    if (!pp.ok()) return ReportError(pp.status());
    if (o->mode != "concurrent") return RunSingle(*o, *pp, *spec);
    if (o->second_model.empty()) return RunConcurrent(*o, *pp, *pp, true, *spec);
    auto pp1 = PrepareProblem(MakeInputs(*o, o->second_model, o->second_costs, *io));
    if (!pp1.ok()) return ReportError(pp1.status());
    return RunConcurrent(*o, *pp, *pp1, false, *spec);
  });
}

}  // namespace hetplan::cli
