// hetplan._core: the extension module under the `hetplan` package
// (docs/python.md). Every function calls the library the CLI calls — the
// importer, the platform loader, the profiler, the application layer's Plan()
// and RunDse() — and converts arguments and results; nothing is planned here.
// Argument checking that Python does better (types, paths, dicts) lives in
// the package's Python code; this file trusts the types it is handed.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "call.h"
#include "convert.h"
#include "hetplan/app/costs.h"
#include "hetplan/app/generation.h"
#include "hetplan/app/plan.h"
#include "hetplan/cost/cim_model.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/dse/dse.h"
#include "hetplan/report/graph_report.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/solve/solver.h"
#include "hetplan/validate/validator.h"
#include "plan_call.h"

namespace hetplan::python {
namespace {

using Clock = std::chrono::steady_clock;

// --- models ---------------------------------------------------------------

ImportOptions MakeImport(const std::string& fusion, const std::map<std::string, std::vector<int64_t>>& shapes,
                         int max_operators, double max_model_mib) {
  ImportOptions io;
  io.fusion = Unwrap(ParseFusionLevel(fusion));
  io.input_shapes = shapes;
  io.max_operators = max_operators;
  if (!(max_model_mib > 0)) {
    Throw(Error(ErrorCode::kInvalidArgument, "max_model_mib {}: must be > 0 (MiB)", max_model_mib));
  }
  io.max_file_bytes = static_cast<int64_t>(max_model_mib * 1024 * 1024);
  return io;
}

std::shared_ptr<ModelRef> Loaded(LoadedModel m, bool from_file) {
  auto ref = std::make_shared<ModelRef>();
  ref->model = std::move(m);
  ref->from_file = from_file;
  return ref;
}

std::shared_ptr<ModelRef> LoadModelFile(const std::string& path, const std::string& fusion,
                                        const std::map<std::string, std::vector<int64_t>>& shapes, int max_operators,
                                        double max_model_mib) {
  const ImportOptions io = MakeImport(fusion, shapes, max_operators, max_model_mib);
  CallControl call{py::none()};
  auto model = call.Run<Result<LoadedModel>>([&]() { return LoadOnnxModel(path, io); });
  if (call.raised()) call.Reraise();
  return Loaded(Unwrap(std::move(model)), true);
}

std::shared_ptr<ModelRef> LoadModelBytes(const py::bytes& data, const std::string& label, const std::string& fusion,
                                         const std::map<std::string, std::vector<int64_t>>& shapes,
                                         int max_operators, double max_model_mib) {
  const ImportOptions io = MakeImport(fusion, shapes, max_operators, max_model_mib);
  const std::string_view bytes = data;  // valid while `data` lives: the whole call
  if (static_cast<int64_t>(bytes.size()) > io.max_file_bytes) {
    Throw(Error(ErrorCode::kLimitExceeded, "{}: {} bytes exceed the model size limit of {} bytes; raise max_model_mib",
                label, bytes.size(), io.max_file_bytes));
  }
  CallControl call{py::none()};
  auto model = call.Run<Result<LoadedModel>>([&]() { return LoadOnnxModelFromBytes(bytes, label, io); });
  if (call.raised()) call.Reraise();
  return Loaded(Unwrap(std::move(model)), false);
}

// --- platforms --------------------------------------------------------------

std::shared_ptr<Platform> WithOverrides(const Platform& p, const std::vector<std::string>& overrides) {
  auto out = std::make_shared<Platform>(p);
  for (const std::string& o : overrides) Check(ApplyOverride(*out, o));
  return out;
}

// --- cost tables --------------------------------------------------------------

std::shared_ptr<CostTable> Profile(const ModelRef& model, const Platform& platform, const std::string& pu,
                                         std::optional<int> threads, int warmup, int runs, std::optional<int> model_runs,
                                         bool in_context, const std::string& cache_dir, py::object progress) {
  const ProcessingUnit* chosen = Unwrap(ProfiledPu(platform, pu));
  Check(CheckPuRuntime(*chosen, platform.source + ": PU " + chosen->name));
  // Measured as the PU runs: its runtime (OpenVINO's device), provider and cores.
  ProfileOptions po = ForPu(ProfileOptions{}, *chosen);
  po.threads = threads.value_or(chosen->threads);
  po.warmup = warmup;
  po.runs = runs;
  po.model_runs = model_runs;
  po.in_context = in_context;
  po.cache_dir = cache_dir;
  const std::string name = chosen->name;
  CallControl call(std::move(progress));
  if (call.has_progress()) {
    po.progress = [&call, name](int done, int total) {
      call.Post([name, done, total]() { return py::make_tuple(name, done, total); });
    };
  }
  auto table = call.Run<Result<CostTable>>([&]() -> Result<CostTable> {
    HETPLAN_ASSIGN_OR_RETURN(CostTable t, ProfileOperators(model.model, name, po));
    if (!po.cache_dir.empty()) {
      // Later plans of this model with the same settings find it in memory,
      // under the key ResolveCosts looks up (it measures without progress).
      ProfileOptions key = po;
      key.progress = nullptr;
      std::lock_guard<std::recursive_mutex> lock(model.mu);
      model.cache.Put(ProfileCacheKey(model.model, name, key), t);
    }
    return t;
  });
  if (call.raised()) call.Reraise();
  return std::make_shared<CostTable>(Unwrap(std::move(table)));
}

// --- plan specs -------------------------------------------------------------

struct SpecAndNotice {
  PlanSpec spec;
  std::optional<std::string> notice;  // an old method name's notice
};

// What a Python keyword left as None is not given: the option keeps
// SolveOptions' default and is not listed in SolveOptions::given, so a method
// that ignores it does not refuse it (the CLI's flags work the same way).
struct SolveKeywords {
  std::optional<double> time_limit, gap;
  std::optional<int> threads;
  std::optional<int64_t> search_nodes;
  std::optional<bool> warm_start, log;
  std::string write_lp, write_mps;
  std::optional<std::string> mip_backend;
  std::optional<std::string> accounting, algorithm, space;
  std::optional<bool> solo_steps;
  std::optional<int> axonn_max_switches, hetero_max_pus;
};

// Sets `field` from `value` when given, and lists it as given.
template <typename T, typename V>
void SetGiven(SolveOptions& o, const char* name, const std::optional<V>& value, T& field) {
  if (!value) return;
  field = static_cast<T>(*value);
  o.given.push_back(name);
}

SolveOptions SolveOptionsOf(const SolveKeywords& k) {
  SolveOptions o;
  SetGiven(o, "time_limit_s", k.time_limit, o.time_limit_s);
  SetGiven(o, "relative_gap", k.gap, o.relative_gap);
  SetGiven(o, "threads", k.threads, o.threads);
  SetGiven(o, "exact.node_limit", k.search_nodes, o.exact.node_limit);
  SetGiven(o, "warm_start", k.warm_start, o.warm_start);
  SetGiven(o, "log", k.log, o.log);
  SetGiven(o, "mip.write_lp", k.write_lp.empty() ? std::nullopt : std::optional<std::string>(k.write_lp), o.mip.write_lp);
  SetGiven(o, "mip.write_mps", k.write_mps.empty() ? std::nullopt : std::optional<std::string>(k.write_mps),
           o.mip.write_mps);
  if (k.mip_backend) {
    o.mip.backend = Unwrap(ParseMipBackend(*k.mip_backend));
    o.given.push_back("mip.backend");
  }
  if (k.accounting) {
    o.mapping.accounting = Unwrap(ParseTransferAccounting(*k.accounting));
    o.given.push_back("mapping.accounting");
  }
  if (k.algorithm) {
    o.mapping.algorithm = Unwrap(ParseChainAlgorithm(*k.algorithm));
    o.concurrent.algorithm = o.mapping.algorithm;
  }
  if (k.space) {
    if (*k.space == "aligned") {
      o.concurrent.space = ConcurrentSpace::kAligned;
    } else if (*k.space == "joint") {
      o.concurrent.space = ConcurrentSpace::kJoint;
    } else {
      Throw(Error(ErrorCode::kInvalidArgument, "space '{}' is unknown; use joint or aligned", *k.space));
    }
    o.given.push_back("concurrent.space");
  }
  SetGiven(o, "concurrent.solo_steps", k.solo_steps, o.concurrent.solo_steps);
  SetGiven(o, "baseline.axonn_max_switches", k.axonn_max_switches, o.baseline.axonn_max_switches);
  SetGiven(o, "baseline.hetero_max_pus", k.hetero_max_pus, o.baseline.hetero_max_pus);
  return o;
}

SpecAndNotice SolverSpec(const std::string& solver, const std::string& objective, std::optional<double> latency_cap,
                         bool method_references, const SolveKeywords& keywords,
                         const std::shared_ptr<CostTable>& coexec) {
  SpecAndNotice out;
  const ResolvedName name = Unwrap(ResolveSolverName(solver));
  out.notice = name.notice;
  PlanSpec& spec = out.spec;
  spec.solver = name.canonical;
  spec.objective = Unwrap(ParseObjective(objective));
  spec.latency_cap_us = latency_cap;
  spec.method_references = method_references;
  spec.options = SolveOptionsOf(keywords);
  if (coexec) spec.extra_coexec = coexec->coexec;
  Check(ValidateSolveOptions(spec.options));
  return out;
}

PlanSpec MapSpec(const std::string& mode, const std::string& objective, const std::optional<std::string>& accounting,
                 const std::string& algorithm, bool second_model, bool joint, bool lockstep,
                 const std::shared_ptr<CostTable>& coexec) {
  MapSettings s;
  s.mode = Unwrap(ParseMapMode(mode));
  s.objective = Unwrap(ParseObjective(objective));
  if (accounting) s.accounting = Unwrap(ParseTransferAccounting(*accounting));
  s.algorithm = Unwrap(ParseChainAlgorithm(algorithm));
  s.second_model = second_model;
  s.joint = joint;
  s.lockstep = lockstep;
  if (coexec) s.coexec = coexec->coexec;
  return Unwrap(MapPlanSpec(s));
}

// --- planning -----------------------------------------------------------------

struct PlanResult {
  PlanRun run;
  bool interrupted = false;  // Ctrl-C (or another signal handler) stopped it
};

// boundary_cost= of partition, map, plan and dse: "fitted" charges the fitted
// segment boundary (--boundary-cost).
bool ChargesBoundary(const std::string& boundary_cost) {
  if (boundary_cost != "none" && boundary_cost != "fitted") {
    Throw(Error(ErrorCode::kInvalidArgument, "boundary_cost '{}' is unknown; use none or fitted", boundary_cost));
  }
  return boundary_cost == "fitted";
}

PlanCall MakeCall(const PlanSpec& spec, std::shared_ptr<ModelRef> model,
                  std::shared_ptr<Platform> platform, std::shared_ptr<CostTable> table,
                  const std::string& table_label, const std::string& costs_path,
                  std::shared_ptr<ModelRef> second, std::shared_ptr<CostTable> second_table,
                  const std::string& second_label, const std::string& second_path, int warmup, int runs,
                  const std::string& cache_dir, const std::string& boundary_cost) {
  PlanCall call;
  call.charge_boundary = ChargesBoundary(boundary_cost);
  call.spec = spec;
  call.model = std::move(model);
  call.platform = std::move(platform);
  call.costs = CostChoice{std::move(table), table_label, costs_path};
  call.second = std::move(second);
  call.second_costs = CostChoice{std::move(second_table), second_label, second_path};
  call.profile.warmup = warmup;
  call.profile.runs = runs;
  call.profile.cache_dir = cache_dir;
  return call;
}

std::shared_ptr<PlanResult> RunPlanCall(const PlanCall& plan, py::object progress) {
  CallControl call(std::move(progress));
  ProfileProgress on_profile;
  if (call.has_progress()) {
    on_profile = [&call](const std::string& pu, int done, int total) {
      call.Post([pu, done, total]() { return py::make_tuple(pu, done, total); });
    };
  }
  auto run = call.Run<Result<PlanRun>>([&]() { return RunPlan(plan, call.interrupt(), on_profile); });
  // Ctrl-C stopped a solve that has a schedule: that schedule is the answer
  // (status feasible, termination interrupted). Anything else that was
  // raised — Ctrl-C before any schedule, a failing callback — propagates.
  const bool usable = run.ok() && run->out.result.schedule.has_value();
  if (call.raised() && !(call.keyboard_interrupt() && usable)) call.Reraise();
  auto out = std::make_shared<PlanResult>();
  out->run = Unwrap(std::move(run));
  out->interrupted = call.raised();
  return out;
}

// plan_generation: `partition --llm` (docs/generation.md), the GIL released
// while it profiles and solves; {generation, prefill, decode}: the generation
// file (validated with both phases' schedule files, named as given) and the
// two schedule files, as the CLI writes them.
py::dict PlanGenerationCall(const std::string& model, const std::string& platform,
                            const std::vector<std::string>& overrides, const std::string& llm, const PlanSpec& spec,
                            int warmup, int runs, const std::string& cache_dir, const std::string& prefill_file,
                            const std::string& decode_file) {
  const GenerationSpec request = Unwrap(ParseGenerationSpec(llm));
  PlanInputs in;
  in.model_path = model;
  in.platform = platform;
  in.overrides = overrides;
  in.costs.profile.warmup = warmup;
  in.costs.profile.runs = runs;
  in.costs.profile.cache_dir = cache_dir;
  std::optional<Result<GenerationOutput>> g;
  std::optional<Result<nlohmann::json>> file;
  {
    py::gil_scoped_release release;
    g = PlanGeneration(in, request, spec);
    if (g->ok()) file = CheckedGenerationJson(**g, prefill_file, decode_file);
  }
  const GenerationOutput& out = Unwrap(std::move(*g));
  py::dict d;
  d["generation"] = ToPython(Unwrap(std::move(*file)));
  d["prefill"] = ToPython(out.prefill.plan.schedule);
  d["decode"] = ToPython(out.decode.plan.schedule);
  return d;
}

// The same RunPlan as RunPlanCall, `repeats` times in C++ with the GIL
// released: the reference for bench/python_call_overhead.py.
std::vector<double> TimeRunPlan(const PlanCall& plan, int repeats) {
  std::vector<double> seconds;
  Status failed;
  {
    py::gil_scoped_release release;
    for (int i = 0; i < repeats && failed.ok(); ++i) {
      const auto t0 = Clock::now();
      auto run = RunPlan(plan, nullptr, {});
      seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (!run.ok()) failed = run.status();
    }
  }
  Check(failed);
  return seconds;
}

py::object OptionalNumber(double v) { return std::isnan(v) ? py::object(py::none()) : py::object(py::float_(v)); }
py::object OptionalNumber(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::object(py::none());
}

py::dict StringDoubleMap(const std::map<std::string, double>& m) {
  py::dict d;
  for (const auto& [k, v] : m) d[py::str(k)] = v;
  return d;
}

const nlohmann::json& ScheduleOf(const PlanResult& r) {
  if (!r.run.out.result.schedule) {
    const SolveResult& s = r.run.out.result;
    Throw(Error(ErrorCode::kInvalidArgument, "solver {}: {} after {:.2f} s — no schedule", s.solver,
                ToString(s.status), s.seconds));
  }
  return r.run.out.schedule;
}

py::dict ValidationDict(const ValidationReport& v) {
  py::dict d;
  d["ok"] = v.ok();
  d["violations"] = v.violations;
  d["operators"] = v.operators;
  d["edges"] = v.edges;
  return d;
}

py::dict Stats(const SolveResult& r) {
  py::dict d;
  if (r.mip) {
    d["mip"] = py::dict(py::arg("variables") = r.mip->variables, py::arg("constraints") = r.mip->constraints,
                        py::arg("big_m") = r.mip->big_m,
                        py::arg("backend") = r.mip->backend.empty() ? py::object(py::none())
                                                                    : py::object(py::str(r.mip->backend)));
  }
  if (r.exact) {
    const ExactStats& e = *r.exact;
    d["exact"] = py::dict(py::arg("segments") = e.segments, py::arg("largest_segment") = e.largest_segment,
                          py::arg("searches") = e.searches, py::arg("nodes") = e.nodes,
                          py::arg("node_limit_reached") = e.node_limit_reached,
                          py::arg("mip_fallback") = e.mip_fallback);
  }
  if (r.mapping) {
    const MappingStats& m = *r.mapping;
    d["mapping"] = py::dict(
        py::arg("accounting") = ToString(m.accounting), py::arg("algorithm") = ToString(m.algorithm),
        py::arg("predicted_latency_us") = m.predicted_latency_us,
        py::arg("predicted_energy_uj") = OptionalNumber(m.predicted_energy_uj),
        py::arg("references") = StringDoubleMap(m.references), py::arg("best_latency_pu") = m.best_latency_pu,
        py::arg("best_energy_pu") = m.best_energy_pu, py::arg("parallel") = m.parallel, py::arg("chain") = m.chain,
        py::arg("parallel_phases") = m.parallel_phases, py::arg("shared_pu_phases") = m.shared_pu_phases);
  }
  if (r.concurrent) {
    const ConcurrentStats& c = *r.concurrent;
    d["concurrent"] = py::dict(
        py::arg("space") = ToString(c.space), py::arg("algorithm") = ToString(c.algorithm),
        py::arg("solo_steps") = c.solo_steps, py::arg("states") = c.states, py::arg("expanded") = c.expanded,
        py::arg("transitions") = c.transitions, py::arg("coexec_entries") = c.coexec_entries,
        py::arg("predicted_latency_us") = c.predicted_latency_us,
        py::arg("predicted_energy_uj") = OptionalNumber(c.predicted_energy_uj));
  }
  return d;
}

// --- dse ----------------------------------------------------------------------

py::dict ProgressDict(const DseProgress& p) {
  const char* phase = p.phase == DseProgress::Phase::kProfiling ? "profiling"
                      : p.phase == DseProgress::Phase::kSolving ? "solving"
                                                                : "done";
  return py::dict(py::arg("phase") = phase, py::arg("done") = p.done, py::arg("total") = p.total,
                  py::arg("resumed") = p.resumed, py::arg("elapsed_s") = p.elapsed_s,
                  py::arg("eta_s") = p.eta_s < 0 ? py::object(py::none()) : py::object(py::float_(p.eta_s)),
                  py::arg("message") = p.message);
}

py::dict SummaryDict(const DseSummary& s) {
  return py::dict(py::arg("points") = s.points, py::arg("ran") = s.ran, py::arg("resumed") = s.resumed,
                  py::arg("failed") = s.failed, py::arg("not_applicable") = s.not_applicable,
                  py::arg("time_limited") = s.time_limited, py::arg("profile_s") = s.profile_s,
                  py::arg("solve_s") = s.solve_s, py::arg("wall_s") = s.wall_s, py::arg("jobs") = s.jobs,
                  py::arg("host_cpu") = s.host_cpu, py::arg("time_limited_points") = s.time_limited_points,
                  py::arg("profile_notes") = s.profile_notes, py::arg("interrupted") = s.interrupted);
}

py::tuple Dse(const std::vector<std::string>& models, const std::vector<std::string>& platforms,
              const std::vector<std::string>& overrides, const std::vector<std::string>& sweeps,
              const std::vector<std::string>& solvers, const std::vector<std::string>& objectives,
              std::optional<double> latency_cap, const std::string& fusion, int warmup, int runs,
              const std::string& cache_dir, double time_limit, double gap, int threads, int64_t search_nodes,
              bool warm_start, int jobs, const std::string& out, bool resume, const std::string& schedules,
              const std::string& boundary_cost, py::object progress) {
  DseSpec spec;
  spec.charge_boundary = ChargesBoundary(boundary_cost);
  spec.models = models;
  spec.platforms = platforms;
  spec.overrides = overrides;
  for (const std::string& s : sweeps) spec.sweeps.push_back(Unwrap(ParseSweep(s)));
  spec.solvers = ExpandSolverNames(solvers);
  spec.objectives.clear();
  for (const std::string& o : objectives) spec.objectives.push_back(Unwrap(ParseObjective(o)));
  spec.latency_cap_us = latency_cap;
  spec.import.fusion = Unwrap(ParseFusionLevel(fusion));
  spec.profile.warmup = warmup;
  spec.profile.runs = runs;
  spec.profile.cache_dir = cache_dir;
  spec.solve.time_limit_s = time_limit;
  spec.solve.relative_gap = gap;
  spec.solve.threads = threads;
  spec.solve.exact.node_limit = search_nodes;
  spec.solve.warm_start = warm_start;
  spec.jobs = jobs;
  spec.out_path = out;
  spec.resume = resume;
  spec.schedules_dir = schedules;
  CallControl call(std::move(progress), CallControl::Mode::kWorker);  // progress comes from dse's threads
  spec.solve.interrupt = call.interrupt();
  DseProgressFn on_progress;
  if (call.has_progress()) {
    on_progress = [&call](const DseProgress& p) { call.Post([p]() { return py::make_tuple(ProgressDict(p)); }); };
  }
  auto summary = call.Run<Result<DseSummary>>([&]() { return RunDse(spec, on_progress); });
  // Ctrl-C: the points done are in the results file; they are returned.
  if (call.raised() && !(call.keyboard_interrupt() && summary.ok())) call.Reraise();
  DseSummary s = Unwrap(std::move(summary));
  DseResults results = Unwrap(ReadDseResults(out));
  return py::make_tuple(SummaryDict(s), ToPython(nlohmann::json(results.rows)), results.bad_lines);
}

void Bind(py::module_& m) {
  m.doc() = "hetplan's C++ library (internal: use the hetplan package)";
  RegisterErrors(m);
  CallControl::InitMainThread();
  m.attr("source_dir") = HETPLAN_SOURCE_DIR;
  m.attr("default_cache_dir") = kDefaultProfileCacheDir;
  m.attr("schedule_format_version") = py::int_(kScheduleFormatVersion);
  m.attr("nondeterministic_fields") = py::cast(
      std::vector<std::string>(std::begin(kNondeterministicFields), std::end(kNondeterministicFields)));
  m.def("onnxruntime_version", &OnnxRuntimeVersion);
  m.def("cpu_model_name", &CpuModelName);

  // Models.
  py::class_<ModelRef, std::shared_ptr<ModelRef>>(m, "Model")
      .def_property_readonly("path", [](const ModelRef& r) { return r.model.path; })
      .def_property_readonly("from_file", [](const ModelRef& r) { return r.from_file; })
      .def_property_readonly("sha256", [](const ModelRef& r) { return r.model.sha256; })
      .def_property_readonly("fusion", [](const ModelRef& r) { return ToString(r.model.fusion); })
      .def_property_readonly("onnx_nodes", [](const ModelRef& r) { return r.model.onnx_nodes; })
      .def_property_readonly("folded_nodes", [](const ModelRef& r) { return r.model.folded_nodes; })
      .def_property_readonly("num_operators", [](const ModelRef& r) { return r.model.graph.size(); })
      .def_property_readonly("num_edges", [](const ModelRef& r) { return r.model.graph.edges().size(); })
      .def("graph_json", [](const ModelRef& r) { return ToPython(GraphToJson(r.model)); })
      .def("summary", [](const ModelRef& r) { return GraphSummaryText(r.model); })
      .def("dot", [](const ModelRef& r) { return GraphToDot(r.model.graph); });
  m.def(
      "parse_shape",
      [](const std::string& text) {
        auto kv = Unwrap(ParseShapeOverride(text));
        return py::make_tuple(kv.first, kv.second);
      },
      py::arg("text"));
  m.def("load_model", &LoadModelFile, py::arg("path"), py::arg("fusion"), py::arg("shapes"),
        py::arg("max_operators"), py::arg("max_model_mib"));
  m.def("load_model_bytes", &LoadModelBytes, py::arg("data"), py::arg("label"), py::arg("fusion"),
        py::arg("shapes"), py::arg("max_operators"), py::arg("max_model_mib"));

  // Platforms.
  py::class_<Platform, std::shared_ptr<Platform>>(m, "Platform")
      .def_property_readonly("name", [](const Platform& p) { return p.name; })
      .def_property_readonly("description", [](const Platform& p) { return p.description; })
      .def_property_readonly("source", [](const Platform& p) { return p.source; })
      .def_property_readonly("overrides", [](const Platform& p) { return p.overrides; })
      .def_property_readonly("pus",
                             [](const Platform& p) {
                               std::vector<std::string> names;
                               for (const ProcessingUnit& pu : p.pus) names.push_back(pu.name);
                               return names;
                             })
      .def("with_overrides", &WithOverrides, py::arg("overrides"))
      .def("to_dict", [](const Platform& p) { return ToPython(PlatformToJson(p)); })
      .def(
          "layers",
          [](const Platform& p, const ModelRef& model) { return ToPython(CimLayersJson(p, model.model.graph)); },
          py::arg("model"));
  m.def(
      "load_platform",
      [](const std::string& name_or_path) { return std::make_shared<Platform>(Unwrap(LoadPlatform(name_or_path))); },
      py::arg("name_or_path"));
  m.def(
      "parse_platform",
      [](const std::string& text, const std::string& label) {
        return std::make_shared<Platform>(Unwrap(ParsePlatformYaml(text, label)));
      },
      py::arg("text"), py::arg("label"));

  // Cost tables.
  py::class_<CostTable, std::shared_ptr<CostTable>>(m, "CostTable")
      .def_property_readonly("meta", [](const CostTable& t) { return t.meta; })
      .def_property_readonly("num_ops", [](const CostTable& t) { return t.ops.size(); })
      .def("to_dict", [](const CostTable& t) { return ToPython(CostTableToJson(t)); })
      .def("to_csv", [](const CostTable& t) { return CostTableToCsv(t); })
      .def(
          "save", [](const CostTable& t, const std::string& csv, const std::string& json) {
            Check(SaveCostTable(t, csv, json));
          },
          py::arg("csv"), py::arg("json"));
  m.def(
      "load_cost_table",
      [](const std::string& path) { return std::make_shared<CostTable>(Unwrap(LoadCostTable(path))); },
      py::arg("path"));
  m.def("profile", &Profile, py::arg("model"), py::arg("platform"), py::arg("pu"), py::arg("threads"),
        py::arg("warmup"), py::arg("runs"), py::arg("model_runs"), py::arg("in_context"), py::arg("cache_dir"),
        py::arg("progress"));

  // Methods.
  m.def("list_solvers", []() {
    nlohmann::json out = nlohmann::json::array();
    for (const MethodInfo& info : ListSolvers()) out.push_back(MethodInfoToJson(info));
    return ToPython(out);
  });
  m.def("resolve_solver", [](const std::string& name) {
    const ResolvedName r = Unwrap(ResolveSolverName(name));
    return py::make_tuple(r.canonical, r.notice ? py::object(py::str(*r.notice)) : py::object(py::none()));
  });
  m.def("method_info", [](const std::string& name) {
    const ResolvedName r = Unwrap(ResolveSolverName(name));
    return ToPython(MethodInfoToJson(FindSolver(r.canonical)->info()));
  });

  // Plans.
  py::class_<PlanSpec>(m, "PlanSpec")
      .def_property_readonly("solver", [](const PlanSpec& s) { return s.solver; })
      .def_property_readonly("objective", [](const PlanSpec& s) { return ToString(s.objective); });
  m.def(
      "solver_spec",
      [](const std::string& solver, const std::string& objective, std::optional<double> latency_cap,
         bool method_references, std::optional<double> time_limit, std::optional<double> gap,
         std::optional<int> threads, std::optional<int64_t> search_nodes, std::optional<bool> warm_start,
         std::optional<bool> log, const std::string& write_lp, const std::string& write_mps,
         const std::optional<std::string>& mip_backend, const std::optional<std::string>& accounting, const std::optional<std::string>& algorithm,
         const std::optional<std::string>& space, std::optional<bool> solo_steps,
         std::optional<int> axonn_max_switches, std::optional<int> hetero_max_pus,
         const std::shared_ptr<CostTable>& coexec) {
        const SolveKeywords k{time_limit, gap,     threads,    search_nodes, warm_start,         log,
                              write_lp,   write_mps, mip_backend, accounting, algorithm, space,         solo_steps,
                              axonn_max_switches, hetero_max_pus};
        SpecAndNotice s = SolverSpec(solver, objective, latency_cap, method_references, k, coexec);
        return py::make_tuple(s.spec, s.notice ? py::object(py::str(*s.notice)) : py::object(py::none()));
      },
      py::arg("solver"), py::arg("objective"), py::arg("latency_cap"), py::arg("method_references"),
      py::arg("time_limit"), py::arg("gap"), py::arg("threads"), py::arg("search_nodes"), py::arg("warm_start"),
      py::arg("log"), py::arg("write_lp"), py::arg("write_mps"), py::arg("mip_backend"), py::arg("accounting"), py::arg("algorithm"),
      py::arg("space"), py::arg("solo_steps"), py::arg("axonn_max_switches"), py::arg("hetero_max_pus"),
      py::arg("coexec"));
  m.def("map_spec", &MapSpec, py::arg("mode"), py::arg("objective"), py::arg("accounting"), py::arg("algorithm"),
        py::arg("second_model"), py::arg("joint"), py::arg("lockstep"), py::arg("coexec"));

  py::class_<PlanCall>(m, "PlanCall");
  m.def("make_call", &MakeCall, py::arg("spec"), py::arg("model"), py::arg("platform"), py::arg("table"),
        py::arg("table_label"), py::arg("costs_path"), py::arg("second"), py::arg("second_table"),
        py::arg("second_label"), py::arg("second_path"), py::arg("warmup"), py::arg("runs"), py::arg("cache_dir"),
        py::arg("boundary_cost"));
  m.def("run_plan", &RunPlanCall, py::arg("call"), py::arg("progress"));
  m.def("plan_generation", &PlanGenerationCall, py::arg("model"), py::arg("platform"), py::arg("overrides"),
        py::arg("llm"), py::arg("spec"), py::arg("warmup"), py::arg("runs"),
        py::arg("cache_dir"), py::arg("prefill_file"), py::arg("decode_file"));
  m.def("_time_run_plan", &TimeRunPlan, py::arg("call"), py::arg("repeats"));

  // The schedule file read back into its type (plan/plan_file.h), read-only.
  py::class_<PlanFileDevice>(m, "PlanFileDevice")
      .def_readonly("name", &PlanFileDevice::name)
      .def_readonly("kind", &PlanFileDevice::kind)
      .def_readonly("costs", &PlanFileDevice::costs)
      .def_readonly("execution", &PlanFileDevice::execution)
      .def_readonly("capacity_crossbars", &PlanFileDevice::capacity_crossbars)
      .def_readonly("shared_adcs", &PlanFileDevice::shared_adcs)
      .def_readonly("power_w", &PlanFileDevice::power_w)
      .def_readonly("boundary_us", &PlanFileDevice::boundary_us)
      .def_readonly("threads", &PlanFileDevice::threads)
      .def_readonly("configured", &PlanFileDevice::configured)
      .def_readonly("provider", &PlanFileDevice::provider)
      .def_readonly("provider_options", &PlanFileDevice::provider_options)
      .def_readonly("cores", &PlanFileDevice::cores)
      .def("spatial", &PlanFileDevice::spatial)
      .def("executable", &PlanFileDevice::executable);
  py::class_<PlanFileWrite>(m, "PlanFileWrite")
      .def_readonly("start_us", &PlanFileWrite::start_us)
      .def_readonly("finish_us", &PlanFileWrite::finish_us)
      .def_readonly("write_us", &PlanFileWrite::write_us)
      .def_readonly("energy_uj", &PlanFileWrite::energy_uj)
      .def_readonly("rows", &PlanFileWrite::rows)
      .def_readonly("rows_written", &PlanFileWrite::rows_written);
  py::class_<PlanFileWeight>(m, "PlanFileWeight")
      .def_readonly("rows", &PlanFileWeight::rows)
      .def_readonly("cols", &PlanFileWeight::cols)
      .def_readonly("bits", &PlanFileWeight::bits)
      .def_readonly("groups", &PlanFileWeight::groups)
      .def_readonly("directions", &PlanFileWeight::directions)
      .def_readonly("n_mvm", &PlanFileWeight::n_mvm)
      .def_readonly("product", &PlanFileWeight::product);
  py::class_<PlanFileOperator>(m, "PlanFileOperator")
      .def_readonly("name", &PlanFileOperator::name)
      .def_readonly("type", &PlanFileOperator::type)
      .def_readonly("device", &PlanFileOperator::device)
      .def_readonly("nodes", &PlanFileOperator::nodes)
      .def_readonly("device_index", &PlanFileOperator::device_index)
      .def_readonly("start_us", &PlanFileOperator::start_us)
      .def_readonly("finish_us", &PlanFileOperator::finish_us)
      .def_readonly("slowdown", &PlanFileOperator::slowdown)
      .def_readonly("crossbars", &PlanFileOperator::crossbars)
      .def_readonly("request", &PlanFileOperator::request)
      .def_readonly("predicted_us", &PlanFileOperator::predicted_us)
      .def_readonly("cost_us", &PlanFileOperator::cost_us)
      .def_readonly("op_energy_uj", &PlanFileOperator::op_energy_uj)
      .def_readonly("adcs", &PlanFileOperator::adcs)
      .def_readonly("crossbar_ids", &PlanFileOperator::crossbar_ids)
      .def_readonly("write", &PlanFileOperator::write)
      .def_readonly("output_bytes", &PlanFileOperator::output_bytes)
      .def_readonly("weight", &PlanFileOperator::weight)
      .def_readonly("replicas", &PlanFileOperator::replicas)
      .def_readonly("stage", &PlanFileOperator::stage)
      .def_readonly("mvms", &PlanFileOperator::mvms)
      .def_readonly("mvm_us", &PlanFileOperator::mvm_us);
  py::class_<PlanFileEdge>(m, "PlanFileEdge")
      .def_readonly("from_", &PlanFileEdge::from)
      .def_readonly("to", &PlanFileEdge::to)
      .def_readonly("bytes", &PlanFileEdge::bytes)
      .def_readonly("transfer_us", &PlanFileEdge::transfer_us)
      .def_readonly("elements", &PlanFileEdge::elements)
      .def_readonly("transfer_start_us", &PlanFileEdge::transfer_start_us);
  py::class_<PlanFileRequest>(m, "PlanFileRequest")
      .def_readonly("file", &PlanFileRequest::file)
      .def_readonly("sha256", &PlanFileRequest::sha256)
      .def_readonly("operators", &PlanFileRequest::operators)
      .def_readonly("id_offset", &PlanFileRequest::id_offset);
  py::class_<PlanFile>(m, "PlanFile")
      .def_readonly("version", &PlanFile::version)
      .def_readonly("model_name", &PlanFile::model_name)
      .def_readonly("model_file", &PlanFile::model_file)
      .def_readonly("model_sha256", &PlanFile::model_sha256)
      .def_readonly("fusion", &PlanFile::fusion)
      .def_readonly("platform", &PlanFile::platform)
      .def_readonly("overrides", &PlanFile::overrides)
      .def_readonly("devices", &PlanFile::devices)
      .def_readonly("operators", &PlanFile::operators)
      .def_readonly("edges", &PlanFile::edges)
      .def_readonly("makespan_us", &PlanFile::makespan_us)
      .def_readonly("energy_uj", &PlanFile::energy_uj)
      .def_readonly("initiation_interval_us", &PlanFile::initiation_interval_us)
      .def_readonly("pipelined_ii_us", &PlanFile::pipelined_ii_us)
      .def_readonly("solver", &PlanFile::solver)
      .def_readonly("solver_status", &PlanFile::solver_status)
      .def_readonly("baselines", &PlanFile::baselines)
      .def_readonly("requests", &PlanFile::requests)
      .def_property_readonly("predicted_unsplit_us", &PlanFile::PredictedUnsplitUs)
      .def("find_device", &PlanFile::FindDevice, py::arg("name"));

  py::class_<PlanResult, std::shared_ptr<PlanResult>>(m, "PlanResult")
      .def_property_readonly("has_schedule", [](const PlanResult& r) { return r.run.out.result.schedule.has_value(); })
      .def_property_readonly("interrupted",
                             [](const PlanResult& r) {
                               return r.interrupted || r.run.out.result.termination == Termination::kInterrupted;
                             })
      .def_property_readonly("solver", [](const PlanResult& r) { return r.run.out.result.solver; })
      .def_property_readonly("status", [](const PlanResult& r) { return ToString(r.run.out.result.status); })
      .def_property_readonly("termination",
                             [](const PlanResult& r) { return ToString(r.run.out.result.termination); })
      .def_property_readonly("objective", [](const PlanResult& r) { return OptionalNumber(r.run.out.result.objective); })
      .def_property_readonly("bound", [](const PlanResult& r) { return OptionalNumber(r.run.out.result.bound); })
      .def_property_readonly("gap", [](const PlanResult& r) { return OptionalNumber(r.run.out.result.gap); })
      .def_property_readonly("seconds", [](const PlanResult& r) { return r.run.out.result.seconds; })
      .def_property_readonly("formulation", [](const PlanResult& r) { return r.run.out.result.formulation; })
      .def_property_readonly("notes", [](const PlanResult& r) { return r.run.out.result.notes; })
      .def_property_readonly("cost_notes", [](const PlanResult& r) { return r.run.costs.notes; })
      .def_property_readonly("run_notes",
                             [](const PlanResult& r) {
                               std::vector<std::string> notes = r.run.costs.run_notes;
                               for (const auto& n : r.run.second_costs.run_notes) notes.push_back(n);
                               return notes;
                             })
      .def_property_readonly("makespan_us",
                             [](const PlanResult& r) {
                               const auto& s = r.run.out.result.schedule;
                               return s ? py::object(py::float_(s->makespan_us)) : py::object(py::none());
                             })
      .def_property_readonly("energy_uj",
                             [](const PlanResult& r) {
                               const auto& s = r.run.out.result.schedule;
                               return s ? OptionalNumber(s->energy_uj) : py::object(py::none());
                             })
      .def_property_readonly("references", [](const PlanResult& r) { return StringDoubleMap(r.run.out.references.values); })
      .def_property_readonly("best_pu", [](const PlanResult& r) { return r.run.out.references.best_pu; })
      .def_property_readonly("best_energy_pu", [](const PlanResult& r) { return r.run.out.references.best_energy_pu; })
      .def_property_readonly("baselines", [](const PlanResult& r) { return StringDoubleMap(r.run.out.baselines); })
      .def_property_readonly("stats", [](const PlanResult& r) { return Stats(r.run.out.result); })
      .def("schedule", [](const PlanResult& r) { return ToPython(ScheduleOf(r)); })
      .def("plan_file", [](const PlanResult& r) { return Unwrap(ReadPlanFile(ScheduleOf(r), "the plan")); })
      .def("schedule_text", [](const PlanResult& r) { return ScheduleFileText(ScheduleOf(r)); })
      .def("csv", [](const PlanResult& r) { return ScheduleJsonToCsv(ScheduleOf(r)); })
      .def("trace", [](const PlanResult& r) { return ToPython(ScheduleJsonToChromeTrace(ScheduleOf(r))); })
      .def(
          "write",
          [](const PlanResult& r, const std::string& json, const std::string& csv, const std::string& trace) {
            Check(WriteScheduleOutputs(ScheduleOf(r), json, csv, trace));
          },
          py::arg("json"), py::arg("csv"), py::arg("trace"))
      .def("validate", [](const PlanResult& r) { return ValidationDict(ValidateScheduleJson(ScheduleOf(r))); });

  // Validation of schedule files and documents.
  m.def(
      "validate_file",
      [](const std::string& path) { return ValidationDict(Unwrap(ValidateScheduleFile(path))); }, py::arg("path"));
  m.def(
      "validate_json",
      [](py::handle doc) { return ValidationDict(ValidateScheduleJson(Unwrap(FromPython(doc, "schedule")))); },
      py::arg("schedule"));

  // Design-space exploration.
  m.def("dse", &Dse, py::arg("models"), py::arg("platforms"), py::arg("overrides"), py::arg("sweeps"),
        py::arg("solvers"), py::arg("objectives"), py::arg("latency_cap"), py::arg("fusion"), py::arg("warmup"),
        py::arg("runs"), py::arg("cache_dir"), py::arg("time_limit"), py::arg("gap"), py::arg("threads"),
        py::arg("search_nodes"), py::arg("warm_start"), py::arg("jobs"), py::arg("out"), py::arg("resume"),
        py::arg("schedules"), py::arg("boundary_cost"), py::arg("progress"));
  m.def(
      "read_dse_results",
      [](const std::string& path) {
        DseResults r = Unwrap(ReadDseResults(path));
        return py::make_tuple(ToPython(nlohmann::json(r.rows)), r.bad_lines);
      },
      py::arg("path"));
}

}  // namespace
}  // namespace hetplan::python

PYBIND11_MODULE(_core, m) { hetplan::python::Bind(m); }
