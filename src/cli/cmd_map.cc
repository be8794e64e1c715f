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
#include "hetplan/app/pipeline.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/baselines.h"
#include "hetplan/solve/mapping.h"
#include "hetplan/util/io.h"

namespace hetplan::cli {
namespace {

struct MapOpts {
  ModelOptions model;
  std::string platform = "soc-example";
  std::vector<std::string> sets;
  std::string costs, mode = "sequential", accounting = "conservative", objective = "latency", algorithm = "dp";
  std::string second_model, second_costs, coexec, out, csv, trace, cache_dir = ".cache/hetplan", pair_baseline;
  bool joint = false, lockstep = false, compare_ilp = false, no_cache = false;
  double ilp_time_limit = 60;
  int warmup = 20, runs = 200;
};

// "analytical", "measured", "synthetic", ... when every PU agrees, else the
// per-PU list: what the printed numbers rest on.
std::string CostBasis(const std::vector<PuInfo>& pus) {
  std::set<std::string> labels;
  for (const PuInfo& pu : pus) labels.insert(pu.cost_label);
  if (labels.size() == 1) return *labels.begin();
  std::string out = "mixed:";
  for (const PuInfo& pu : pus) out += fmt::format(" {} {}", pu.name, pu.cost_label);
  return out;
}

PlanInputs MakeInputs(const MapOpts& o, const std::string& model, const std::string& costs, const ImportOptions& io) {
  PlanInputs in;
  in.model_path = model;
  in.import = io;
  in.platform = o.platform;
  in.overrides = o.sets;
  in.costs_path = costs;
  in.profile.warmup = o.warmup;
  in.profile.runs = o.runs;
  in.profile.cache_dir = o.no_cache ? "" : o.cache_dir;
  if (isatty(fileno(stderr))) {
    in.profile.progress = [](int done, int total) {
      std::fprintf(stderr, "\rprofiling %d/%d operators", done, total);
      if (done == total) std::fprintf(stderr, "\n");
    };
  }
  return in;
}

int WriteOutputs(const MapOpts& o, const nlohmann::json& s) {
  if (!o.out.empty()) {
    if (Status st = WriteFileAtomic(o.out, s.dump(1) + "\n"); !st.ok()) return ReportError(st);
  }
  if (!o.csv.empty()) {
    if (Status st = WriteFileAtomic(o.csv, ScheduleJsonToCsv(s)); !st.ok()) return ReportError(st);
  }
  if (!o.trace.empty()) {
    if (Status st = WriteFileAtomic(o.trace, ScheduleJsonToChromeTrace(s).dump() + "\n"); !st.ok()) {
      return ReportError(st);
    }
  }
  return 0;
}

void PrintHeader(const PreparedProblem& pp, const std::string& basis) {
  std::printf("model     %s (%d operators, fusion %s)\n", pp.model.path.c_str(), pp.model.graph.size(),
              ToString(pp.model.fusion).c_str());
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

// Prints the schedule line and validates; non-zero on an invalid schedule.
int CheckAndReport(const nlohmann::json& s, const std::string& what) {
  ValidationReport v = ValidateScheduleJson(s);
  if (!v.ok()) {
    return ReportError(Error(ErrorCode::kInternal, "the {} schedule fails validation (a bug in hetplan): {}", what,
                             v.violations.front()));
  }
  std::printf("schedule  makespan %.3f µs, energy %s (written timing, operators only)\n",
              s["makespan_us"].get<double>(),
              s["energy_uj"].is_null() ? "n/a" : fmt::format("{:.3f} µJ", s["energy_uj"].get<double>()).c_str());
  std::printf("validate  ok (%d operators, %d edges checked)\n", v.operators, v.edges);
  return 0;
}

int RunSingle(const MapOpts& o, const PreparedProblem& pp, const MappingCosts& mc, Objective objective,
              TransferAccounting accounting, ChainAlgorithm algorithm) {
  const Problem problem{&pp.model.graph, &pp.costs, objective, std::nullopt};
  if (Status st = ValidateProblem(problem); !st.ok()) return ReportError(st);
  MapOptions mo{accounting, algorithm};
  const bool parallel = o.mode == "parallel";
  auto r = parallel ? MapParallel(problem, mc, mo) : MapSequential(problem, mc, mo);
  if (!r.ok()) return ReportError(r.status());
  const std::string basis = CostBasis(pp.costs.pus());
  ScheduleContext ctx{&pp.model,    &pp.platform, &problem, &r->result, parallel ? "map-parallel" : "map-sequential",
                      r->baselines, pp.notes};
  nlohmann::json s = ScheduleToJson(ctx);
  s["mapping"] = {{"mode", o.mode},
                  {"accounting", ToString(accounting)},
                  {"algorithm", ToString(algorithm)},
                  {"cost_basis", basis},
                  {"predicted_latency_us", r->predicted_latency_us},
                  {"predicted_energy_uj", r->predicted_energy_uj ? nlohmann::json(*r->predicted_energy_uj) : nullptr},
                  {"chain", r->chain},
                  {"parallel_phases", r->parallel_phases},
                  {"shared_pu_phases", r->shared_pu_phases}};

  PrintHeader(pp, basis);
  std::printf("mode      %s, accounting %s, objective %s, search %s\n", o.mode.c_str(), ToString(accounting).c_str(),
              ToString(objective).c_str(), ToString(algorithm).c_str());
  std::map<std::string, int> per_pu;
  for (int d : r->device) ++per_pu[pp.costs.pu(d).name];
  std::string counts;
  for (int p = 0; p < pp.costs.num_pus(); ++p) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", pp.costs.pu(p).name, per_pu[pp.costs.pu(p).name]);
  }
  std::printf("mapping   %s\n", counts.c_str());
  std::printf("predicted latency %.3f µs, energy %s (%s, %s accounting)\n", r->predicted_latency_us,
              Energy(r->predicted_energy_uj).c_str(), basis.c_str(), ToString(accounting).c_str());
  const auto& b = r->baselines;
  if (b.contains("best_single_us")) {
    std::printf("best single PU  latency %.3f µs (%s)", b.at("best_single_us"), r->best_latency_pu.c_str());
    if (b.contains("best_single_uj"))
      std::printf(", energy %.3f µJ (%s)", b.at("best_single_uj"), r->best_energy_pu.c_str());
    std::printf("\n");
    std::printf("speedup   %.3fx over the best single PU", b.at("best_single_us") / r->predicted_latency_us);
    if (b.contains("best_single_uj") && r->predicted_energy_uj) {
      std::printf(", %s", EnergyChange(*r->predicted_energy_uj, b.at("best_single_uj")).c_str());
    }
    std::printf("\n");
  } else {
    std::printf("best single PU  none: no PU supports every operator\n");
  }
  std::printf("status    %s (%s)\n", ToString(r->result.status).c_str(),
              r->result.status == SolveStatus::kOptimal ? "exact for BIDENT's execution graph under this accounting"
              : parallel                                ? "BIDENT's phase-wise heuristic"
                         : "exact for its execution graph, which approximates this DAG's data movement");
  if (!r->chain && accounting == TransferAccounting::kNeighbour && !parallel) {
    std::printf(
        "approximation: the graph is not a chain, so neighbour accounting only approximates the real data "
        "movement; %s\n",
        o.compare_ilp ? "the exact ILP follows" : "add --compare-ilp for the exact ILP optimum");
  }
  if (parallel) {
    std::printf("heuristic: branches mapped independently; slowdowns applied after the search (parallel phases: %d",
                r->parallel_phases);
    if (r->shared_pu_phases > 0) {
      std::printf(", of which %d map two branches to one PU and are serialised in the schedule", r->shared_pu_phases);
    }
    std::printf(")\n");
  }
  if (int rc = CheckAndReport(s, "map"); rc != 0) return rc;
  if (o.compare_ilp) {
    SolveOptions so;
    so.time_limit_s = o.ilp_time_limit;
    so.threads = 1;
    auto ilp = Solve("ilp", problem, so);
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

int RunConcurrent(const MapOpts& o, const PreparedProblem& pp, const MappingCosts& mc0, const PreparedProblem& pp1,
                  const MappingCosts& mc1, bool same_model, Objective objective, ChainAlgorithm algorithm) {
  const OpGraph& g0 = pp.model.graph;
  const OpGraph& g1 = pp1.model.graph;
  // Co-execution rows from every table used, plus --coexec, without duplicates.
  std::set<std::tuple<std::string, std::string, std::string, std::string, double>> seen;
  std::vector<CoExecution> rows;
  auto collect = [&](const CostTable& t) {
    for (const CoExecution& c : t.coexec) {
      if (seen.emplace(c.op_a, c.pu_a, c.op_b, c.pu_b, c.makespan_us).second) rows.push_back(c);
    }
  };
  for (const auto& [pu, t] : pp.tables) collect(t);
  for (const auto& [pu, t] : pp1.tables) collect(t);
  if (!o.coexec.empty()) {
    auto t = LoadCostTable(o.coexec);
    if (!t.ok()) return ReportError(t.status());
    collect(*t);
  }
  const CoexecCosts coexec = BuildCoexecCosts(g0, g0.topological_order(), g1, g1.topological_order(), mc0.pus(), rows);
  ConcurrentOptions co;
  co.objective = objective;
  co.space = same_model && !o.joint ? ConcurrentSpace::kAligned : ConcurrentSpace::kJoint;
  co.algorithm = algorithm == ChainAlgorithm::kDp ? ConcurrentAlgorithm::kDp : ConcurrentAlgorithm::kDijkstra;
  co.solo_steps = !o.lockstep;
  auto plan = MapConcurrent(g0, mc0, g1, mc1, coexec, co);
  if (!plan.ok()) return ReportError(plan.status());

  const Problem problem{&plan->graph, &plan->costs, objective, std::nullopt};
  LoadedModel combined;
  combined.path = pp.model.path;
  combined.sha256 = pp.model.sha256;
  combined.fusion = pp.model.fusion;
  const std::string basis = CostBasis(pp.costs.pus());
  // --pair-baseline: BIDENT's two-request baseline instead of the mapping.
  std::optional<SolveResult> baseline;
  if (!o.pair_baseline.empty()) {
    auto r = RunPairBaseline(o.pair_baseline, problem, g0.size());
    if (!r.ok()) return ReportError(r.status());
    if (!r->schedule) return ReportError(Error(ErrorCode::kUnsupported, "{}: no schedule", o.pair_baseline));
    baseline = std::move(r).value();
  }
  ScheduleContext ctx{&combined,
                      &pp.platform,
                      &problem,
                      baseline ? &*baseline : &plan->result,
                      baseline ? "pair-baseline" : "map-concurrent",
                      plan->baselines,
                      pp.notes};
  nlohmann::json s = ScheduleToJson(ctx);
  auto request = [](const PreparedProblem& p, int offset) {
    return nlohmann::json{
        {"file", p.model.path}, {"sha256", p.model.sha256}, {"operators", p.model.graph.size()}, {"id_offset", offset}};
  };
  s["requests"] = {request(pp, 0), request(pp1, g0.size())};
  s["mapping"] = {{"mode", "concurrent"},
                  {"space", co.space == ConcurrentSpace::kAligned ? "aligned" : "joint"},
                  {"solo_steps", co.space == ConcurrentSpace::kJoint && co.solo_steps},
                  {"algorithm", ToString(algorithm)},
                  {"cost_basis", basis},
                  {"states", plan->mapping.states},
                  {"coexec_entries", coexec.size()},
                  {"predicted_latency_us", plan->predicted_latency_us},
                  {"predicted_energy_uj",
                   plan->predicted_energy_uj ? nlohmann::json(*plan->predicted_energy_uj) : nlohmann::json(nullptr)}};

  PrintHeader(pp, basis);
  if (!same_model) {
    std::printf("model 2   %s (%d operators)\n", pp1.model.path.c_str(), g1.size());
  }
  std::printf("mode      concurrent (%s), %s state space%s, objective %s, search %s\n",
              same_model ? "same model twice" : "two models",
              co.space == ConcurrentSpace::kAligned ? "aligned (l, d0, d1)" : "joint (i, j)",
              co.space == ConcurrentSpace::kJoint ? (co.solo_steps ? " with solo steps" : ", lockstep") : "",
              ToString(objective).c_str(), algorithm == ChainAlgorithm::kDp ? "dp" : "dijkstra");
  std::printf("search    %lld states, %lld settled, %lld transitions, %zu co-execution entries, %.3f ms\n",
              static_cast<long long>(plan->mapping.states), static_cast<long long>(plan->mapping.expanded),
              static_cast<long long>(plan->mapping.transitions), coexec.size(), 1e3 * plan->result.seconds);
  std::printf("predicted latency %.3f µs, energy %s (%s)\n", plan->predicted_latency_us,
              Energy(plan->predicted_energy_uj).c_str(), basis.c_str());
  const auto& b = plan->baselines;
  if (b.contains("best_serial_us")) {
    std::printf("best single PU  both requests back to back: latency %.3f µs (%s)", b.at("best_serial_us"),
                plan->best_serial_pu.c_str());
    if (b.contains("best_serial_uj")) {
      std::printf(", energy %.3f µJ (%s)", b.at("best_serial_uj"), plan->best_serial_energy_pu.c_str());
    }
    std::printf("\n");
    std::printf("speedup   %.3fx over the best single PU", b.at("best_serial_us") / plan->predicted_latency_us);
    if (b.contains("best_serial_uj") && plan->predicted_energy_uj) {
      std::printf(", %s", EnergyChange(*plan->predicted_energy_uj, b.at("best_serial_uj")).c_str());
    }
    std::printf("\n");
  } else {
    std::printf("best single PU  none: no PU supports every operator of both models\n");
  }
  if (b.contains("naive_multi_pu_us")) {
    std::printf("naive     whole models on the best PU pair: %.3f µs (speedup %.3fx over it)\n",
                b.at("naive_multi_pu_us"), b.at("naive_multi_pu_us") / plan->predicted_latency_us);
  }
  std::printf("status    optimal within the state space under the co-execution cost model\n");
  if (baseline) {
    std::printf("baseline  %s: makespan %.3f µs, energy %s; its schedule is written, not the mapping's (%s)\n",
                o.pair_baseline.c_str(), baseline->schedule->makespan_us, Energy(baseline->schedule->energy_uj).c_str(),
                fmt::format("{}", fmt::join(baseline->notes, "; ")).c_str());
  }
  if (o.compare_ilp) std::printf("ilp       not applicable to the concurrent mode (the ILP plans one request)\n");
  if (int rc = CheckAndReport(s, "concurrent map"); rc != 0) return rc;
  if (int rc = WriteOutputs(o, s); rc != 0) return rc;
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
  sub->add_flag("--compare-ilp", o->compare_ilp, "Also solve the exact ILP (CBC) and print its optimum");
  sub->add_option("--ilp-time-limit", o->ilp_time_limit, "Time limit for --compare-ilp in seconds")->default_val(60);
  sub->add_option("--warmup", o->warmup, "Profiler warm-up runs per operator")->default_val(20);
  sub->add_option("--runs", o->runs, "Profiler timed runs per operator")->default_val(200);
  sub->add_option("--cache-dir", o->cache_dir, "Profile cache folder")->default_val(".cache/hetplan");
  sub->add_flag("--no-cache", o->no_cache, "Profile afresh and do not cache");
  Register(sub, [o, accounting]() -> int {
    auto objective = ParseObjective(o->objective);
    if (!objective.ok()) return ReportError(objective.status());
    auto acc = ParseTransferAccounting(o->accounting);
    if (!acc.ok()) return ReportError(acc.status());
    auto algorithm = ParseChainAlgorithm(o->algorithm);
    if (!algorithm.ok()) return ReportError(algorithm.status());
    if (o->mode == "concurrent" && accounting->count() > 0 && *acc != TransferAccounting::kConservative) {
      return ReportError(Error(ErrorCode::kInvalidArgument,
                               "--accounting {}: the concurrent mode charges every operator its full H2D and D2H "
                               "(BIDENT); neighbour accounting applies to --mode sequential and parallel",
                               o->accounting));
    }
    if (o->mode != "concurrent" &&
        (!o->second_model.empty() || o->joint || o->lockstep || !o->coexec.empty() || !o->pair_baseline.empty())) {
      return ReportError(
          Error(ErrorCode::kInvalidArgument,
                "--second-model, --coexec, --joint, --lockstep and --pair-baseline apply to --mode concurrent only"));
    }
    auto io = MakeImportOptions(o->model);
    if (!io.ok()) return ReportError(io.status());
    auto pp = PrepareProblem(MakeInputs(*o, o->model.path, o->costs, *io));
    if (!pp.ok()) return ReportError(pp.status());
    auto mc = BuildMappingCosts(pp->model.graph, pp->costs, pp->platform, pp->tables);
    if (!mc.ok()) return ReportError(mc.status());
    if (o->mode != "concurrent") return RunSingle(*o, *pp, *mc, *objective, *acc, *algorithm);

    if (o->second_model.empty()) return RunConcurrent(*o, *pp, *mc, *pp, *mc, true, *objective, *algorithm);
    auto pp1 = PrepareProblem(MakeInputs(*o, o->second_model, o->second_costs, *io));
    if (!pp1.ok()) return ReportError(pp1.status());
    auto mc1 = BuildMappingCosts(pp1->model.graph, pp1->costs, pp1->platform, pp1->tables);
    if (!mc1.ok()) return ReportError(mc1.status());
    return RunConcurrent(*o, *pp, *mc, *pp1, *mc1, false, *objective, *algorithm);
  });
}

}  // namespace hetplan::cli
