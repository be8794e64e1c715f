#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <set>
#include <vector>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "hetplan/app/plan.h"
#include "hetplan/deploy/split.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/validate/validator.h"

namespace hetplan::cli {

namespace {

// Summary, from the typed plan: per PU its operators, busy time, the
// crossbars its resident operators take (and what rewritten ones write) and,
// with an energy, the PU's share.
void PrintDeviceLines(const Schedule& sched, const CostModel& costs) {
  std::vector<int> ops_on(static_cast<size_t>(costs.num_pus()), 0);
  std::vector<double> busy_on(static_cast<size_t>(costs.num_pus()), 0.0);
  std::vector<int64_t> crossbars_on(static_cast<size_t>(costs.num_pus()), 0);
  std::vector<double> energy_on(static_cast<size_t>(costs.num_pus()), 0.0);
  std::vector<int> rewritten_on(static_cast<size_t>(costs.num_pus()), 0);
  std::vector<int64_t> written_on(static_cast<size_t>(costs.num_pus()), 0);
  for (size_t v = 0; v < sched.ops.size(); ++v) {
    const ScheduledOp& op = sched.ops[v];
    const auto p = static_cast<size_t>(op.device);
    ++ops_on[p];
    busy_on[p] += op.finish_us - op.start_us;
    energy_on[p] += OperatorEnergy(costs, static_cast<int>(v), op).value_or(0.0);
    // A stream's copies each hold the operator's crossbars.
    const int64_t xb = costs.pu(op.device).spatial
                           ? costs.crossbars(static_cast<int>(v), op.device) * std::max<int64_t>(1, op.replicas)
                           : 0;
    (op.rewritten ? written_on[p] : crossbars_on[p]) += xb;
    rewritten_on[p] += op.rewritten;
  }
  for (int p = 0; p < costs.num_pus(); ++p) {
    const PuInfo& pu = costs.pu(p);
    std::printf("device    %-6s %4d operators, busy %10.1f µs", pu.name.c_str(), ops_on[static_cast<size_t>(p)],
                busy_on[static_cast<size_t>(p)]);
    if (pu.spatial) {
      std::printf(", crossbars %lld / %lld", static_cast<long long>(crossbars_on[static_cast<size_t>(p)]),
                  static_cast<long long>(pu.capacity));
      if (rewritten_on[static_cast<size_t>(p)] > 0) {
        std::printf(" resident, %d operators rewritten (%lld crossbars written an inference)",
                    rewritten_on[static_cast<size_t>(p)], static_cast<long long>(written_on[static_cast<size_t>(p)]));
      }
    }
    if (sched.energy_uj) std::printf(", energy %.1f µJ", energy_on[static_cast<size_t>(p)]);
    std::printf("\n");
  }
}

}  // namespace

void RegisterPartition(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "partition", "Assign every operator to a PU and schedule it (exact search, the CIM paper's MIP, or any method)");
  struct Opts {
    ModelOptions model;
    ProfilingFlags profiling;
    SolveFlags solve;
    std::string platform = "klein-arm";
    std::vector<std::string> sets;
    std::string costs, solver = "exact", objective = "latency", out, csv, trace;
    std::optional<double> latency_cap, max_latency;
    RefineFlags refine;
    std::string llm;
  };
  auto o = std::make_shared<Opts>();
  AddModelOptions(sub, &o->model);
  sub->add_option("--platform", o->platform, "Preset name (klein-arm, klein-x86, soc-example) or a YAML path")
      ->default_val("klein-arm");
  sub->add_option("--set", o->sets, "Override a platform field, PU.KEY=VALUE (repeatable), e.g. cim.crossbars=200");
  sub->add_option("--costs", o->costs, "Cost table (CSV/JSON) for PUs with cost: table (or instead of profiling)");
  sub->add_option("--solver", o->solver, "Planning method (hetplan solvers lists them)")->default_val("exact");
  sub->add_option("--objective", o->objective, "latency | energy | throughput (a stream's II: docs/throughput.md)")->default_val("latency");
  sub->add_option("--latency-cap", o->latency_cap, "With --objective energy: makespan ≤ this (µs)");
  sub->add_option("--max-latency", o->max_latency, "With --objective throughput: one input's latency ≤ this (µs)");
  AddSolveFlags(sub, &o->solve, /*lp_export=*/true);
  sub->add_option("--out", o->out, "Schedule file (JSON, docs/schedule-format.md)");
  sub->add_option("--csv", o->csv, "CSV summary, one row per operator");
  sub->add_option("--trace", o->trace, "Chrome trace (Perfetto, chrome://tracing)");
  AddProfilingFlags(sub, &o->profiling);
  AddBoundaryCostFlag(sub, &o->profiling);
  AddRefineFlags(sub, &o->refine);
  sub->add_option("--llm", o->llm,
                  "Plan LLM generation as one request: prompt=P,new=N (a decoder with a KV cache; docs/generation.md)");
  Register(sub, [o]() -> int {
    auto solver = ResolveSolverFlag(o->solver, o->solve.formulation);
    if (!solver.ok()) return ReportError(solver.status());
    // A flag the method ignores is refused before anything is loaded or profiled.
    if (Status st = CheckOptionsApply(*solver, MakeSolveOptions(o->solve)); !st.ok()) return ReportError(st);
    auto io = MakeImportOptions(o->model);
    if (!io.ok()) return ReportError(io.status());
    const PlanInputs in = MakePlanInputs(o->model.path, *io, o->platform, o->sets, o->costs, o->profiling);
    auto objective = ParseObjective(o->objective);
    if (!objective.ok()) return ReportError(objective.status());
    if (o->max_latency && *objective != Objective::kThroughput) {
      return ReportError(Error(ErrorCode::kInvalidArgument,
                               "--max-latency bounds one input of a stream: use it with --objective throughput (for "
                               "the energy objective, --latency-cap)"));
    }
    PlanSpec spec;
    spec.solver = *solver;
    spec.objective = *objective;
    spec.latency_cap_us = o->max_latency ? o->max_latency : o->latency_cap;
    spec.options = MakeSolveOptions(o->solve);
    if (!o->llm.empty()) {
      if (o->refine.rounds || !o->csv.empty() || !o->trace.empty()) {
        return ReportError(Error(ErrorCode::kInvalidArgument,
                                 "--llm writes the generation file and its phases' schedules (--out): drop {}",
                                 o->refine.rounds ? "--refine" : (o->csv.empty() ? "--trace" : "--csv")));
      }
      return PartitionGeneration(in, spec, o->llm, o->out);
    }
    auto pp = PrepareProblem(in);
    if (!pp.ok()) return ReportError(pp.status());
    std::vector<std::string> refine_lines;
    auto plan = o->refine.rounds ? PlanRefined(*pp, spec, o->refine, &refine_lines) : Plan(pp->subject(), spec);
    if (!plan.ok()) return ReportError(plan.status());
    const SolveResult& r = plan->result;
    if (!r.schedule) {
      std::printf("solver %s: %s after %.2f s — no schedule (nothing written)\n", r.solver.c_str(),
                  ToString(r.status).c_str(), r.seconds);
      return 3;
    }
    const nlohmann::json& s = plan->schedule;
    if (Status st = WriteScheduleOutputs(s, o->out, o->csv, o->trace); !st.ok()) return ReportError(st);
    const Schedule& sched = *r.schedule;
    const CostModel& costs = pp->costs;
    std::printf("model     %s (%d operators, fusion %s)\n", pp->model.path.c_str(), pp->model.graph.size(),
                ToString(pp->model.fusion).c_str());
    for (const auto& line : PlanAssumptionLines(pp->model.assumptions)) std::printf("assumes   %s\n", line.c_str());
    std::printf("platform  %s%s\n", pp->platform.name.c_str(),
                pp->platform.overrides.empty() ? "" : (" with " + fmt::format("{}", fmt::join(pp->platform.overrides, " "))).c_str());
    for (const auto& note : pp->notes) std::printf("costs     %s\n", note.c_str());
    for (const auto& note : pp->run_notes) std::printf("run       %s\n", note.c_str());
    PrintDeviceLines(sched, costs);
    std::printf("makespan  %.1f µs\n", sched.makespan_us);
    // A stream: the II and inputs per second; speedup against the CPU one input after another.
    const double per_input = sched.initiation_interval_us.value_or(sched.makespan_us);
    if (sched.initiation_interval_us) {
      std::printf("stream    II %.1f µs (%.1f inputs/s); makespan is one input's latency\n", per_input,
                  per_input > 0 ? 1e6 / per_input : 0.0);
    }
    if (plan->baselines.count("cpu_only_us")) {
      std::printf("cpu-only  %.1f µs   speedup %.2fx\n", plan->baselines.at("cpu_only_us"),
                  plan->baselines.at("cpu_only_us") / per_input);
    }
    if (sched.energy_uj) std::printf("energy    %.1f µJ\n", *sched.energy_uj);
    // The MIP's size, or the exact search's own statistics (ExactStats).
    // Both when the exact search fell back to the MIP.
    std::string size = std::string("no MIP");
    if (r.mip) size = fmt::format("{} variables, {} constraints", r.mip->variables, r.mip->constraints);
    if (r.exact) {
      const ExactStats& e = *r.exact;
      size = fmt::format("{}{} segment{} (largest {} operators), {} searches, {} branch-and-bound nodes{}",
                         r.mip ? size + " after the search's " : "", e.segments, e.segments == 1 ? "" : "s",
                         e.largest_segment, e.searches, e.nodes,
                         e.node_limit_reached ? ", stopped at the node limit" : "");
    }
    // The termination where it says more than the status (feasible: time_limit, node_limit, interrupted).
    std::string status = ToString(r.status);
    if (ToString(r.termination) != status) status += " (" + ToString(r.termination) + ")";
    std::printf("solver    %s (%s): %s, objective %.3f, bound %.3f, gap %.4g%%, %.2f s, %s\n", r.solver.c_str(),
                r.formulation.c_str(), status.c_str(), r.objective, r.bound, 100.0 * r.gap, r.seconds, size.c_str());
    for (const auto& line : refine_lines) std::printf("refine    %s\n", line.c_str());
    std::printf("validate  ok (%d operators, %d edges checked)\n", plan->validation.operators, plan->validation.edges);
    if (!o->out.empty()) std::printf("wrote     %s\n", o->out.c_str());
    return 0;
  });
}

// --model: the file against the model it says it plans: the SHA-256, every
// operator's name at its id and every edge, per request. Violations, one a
// line; an error when the model cannot be imported as planned.
Result<std::vector<std::string>> CheckAgainstModel(const std::string& schedule_path, const std::string& model_path) {
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(schedule_path, int64_t{1} << 30));
  const nlohmann::json s = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!s.is_object() || !s.contains("model") || !s["model"].is_object()) {
    return Error(ErrorCode::kParseError, "{}: no model block to check --model against", schedule_path);
  }
  // Only the model block: the rest of the file is checked as it is, however damaged.
  PlanFile plan;
  plan.fusion = s["model"].value("fusion", std::string("none"));
  HETPLAN_ASSIGN_OR_RETURN(plan.assumptions, ReadPlanAssumptions(s["model"], schedule_path));
  HETPLAN_ASSIGN_OR_RETURN(LoadedModel m, LoadPlannedModel(plan, model_path, schedule_path));
  std::vector<std::string> out;
  std::vector<std::pair<int64_t, std::string>> requests;  // (id offset, sha256)
  if (s.contains("requests") && s["requests"].is_array()) {
    for (const auto& r : s["requests"]) requests.emplace_back(r.value("id_offset", int64_t{0}), r.value("sha256", ""));
  } else {
    requests.emplace_back(0, s["model"].value("sha256", std::string()));
  }
  std::map<int64_t, std::string> names;
  std::set<std::pair<int64_t, int64_t>> file_edges;
  for (const auto& o : s.value("operators", nlohmann::json::array())) {
    if (o.is_object() && o.contains("id") && o["id"].is_number_integer()) names[o["id"].get<int64_t>()] = o.value("name", "");
  }
  for (const auto& e : s.value("edges", nlohmann::json::array())) {
    if (e.is_object() && e.contains("from") && e.contains("to") && e["from"].is_number_integer() &&
        e["to"].is_number_integer()) {
      file_edges.emplace(e["from"].get<int64_t>(), e["to"].get<int64_t>());
    }
  }
  for (const auto& [offset, sha] : requests) {
    if (sha != m.sha256) {
      out.push_back(fmt::format("model: the file plans a model with SHA-256 {}… but {} has {}…", sha.substr(0, 12),
                                model_path, m.sha256.substr(0, 12)));
    }
    for (const Operator& op : m.graph.operators()) {
      auto it = names.find(offset + op.id);
      if (it == names.end() || it->second != op.name) {
        out.push_back(fmt::format("model: operator id {} is '{}' in the model but {} in the file", offset + op.id,
                                  op.name, it == names.end() ? "missing" : "'" + it->second + "'"));
      }
    }
    for (const Edge& e : m.graph.edges()) {
      if (!file_edges.erase({offset + e.from, offset + e.to})) {
        out.push_back(fmt::format("model: edge {} -> {} ('{}' -> '{}') is missing from the file", offset + e.from,
                                  offset + e.to, m.graph.op(e.from).name, m.graph.op(e.to).name));
      }
    }
  }
  for (const auto& [from, to] : file_edges) {
    out.push_back(fmt::format("model: edge {} -> {} is in the file but not in the model", from, to));
  }
  return out;
}

void RegisterValidate(CLI::App& app) {
  auto* sub = app.add_subcommand("validate", "Check a schedule file against every constraint, from the file alone");
  auto path = std::make_shared<std::string>();
  auto model = std::make_shared<std::string>();
  sub->add_option("schedule", *path, "Schedule JSON")->required();
  sub->add_option("--model", *model,
                  "Also check the file against the ONNX model it plans: its SHA-256, every operator at its id and "
                  "every edge");
  Register(sub, [path, model]() -> int {
    auto report = ValidateScheduleFile(*path);
    if (!report.ok()) return ReportError(report.status());
    if (!model->empty()) {
      auto against = CheckAgainstModel(*path, *model);
      if (!against.ok()) return ReportError(against.status());
      report->violations.insert(report->violations.end(), against->begin(), against->end());
    }
    if (report->ok()) {
      std::printf("%s: valid (%d operators, %d edges)\n", path->c_str(), report->operators, report->edges);
      return 0;
    }
    for (const auto& v : report->violations) std::printf("%s: %s\n", path->c_str(), v.c_str());
    std::fprintf(stderr, "hetplan: error: %s: %zu violation%s\n", path->c_str(), report->violations.size(),
                 report->violations.size() == 1 ? "" : "s");
    return 1;
  });
}

}  // namespace hetplan::cli
