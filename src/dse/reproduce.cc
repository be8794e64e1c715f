// Reproduce: zoo → Klein grid → BIDENT-style sweep → schedules → report.
#include "hetplan/dse/reproduce.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "hetplan/app/frontier.h"
#include "hetplan/report/html_report.h"
#include "hetplan/report/plots.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/clock.h"
#include "hetplan/util/io.h"
#include "dse/internal.h"

namespace hetplan {
namespace {

using dse::ModelName;


std::string ModelsDir(const ReproduceOptions& o) {
  if (!o.models_dir.empty()) return o.models_dir;
  return HETPLAN_DEFAULT_ZOO_DIR;
}

// Runs `python export.py --out-dir DIR --models a,b [--calibrator C]` with
// output in `log` (the INT8 models need hetplan_calibrate, built beside hetplan).
Status ExportModels(const std::string& python, const std::string& dir, const std::vector<std::string>& models,
                    const std::string& log) {
  const std::string script = std::string(HETPLAN_SOURCE_DIR) + "/models/export.py";
  std::error_code ec;
  if (!std::filesystem::exists(script, ec)) {
    return Error(ErrorCode::kNotFound, "{}: the zoo exporter is missing; cannot create {}", script,
                 fmt::format("{}", fmt::join(models, ", ")));
  }
  std::filesystem::create_directories(dir, ec);
  const std::string list = fmt::format("{}", fmt::join(models, ","));
  const pid_t pid = fork();
  if (pid < 0) return Error(ErrorCode::kIoError, "cannot start {}: fork failed", python);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execl(python.c_str(), python.c_str(), script.c_str(), "--out-dir", dir.c_str(), "--models", list.c_str(),
          "--calibrator", HETPLAN_CALIBRATOR, static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    auto text = ReadFile(log);
    return Error(ErrorCode::kInternal, "exporting {} with {} {} failed (exit {}); see {}: {}", list, python, script,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, log,
                 text.ok() ? text->substr(text->size() > 600 ? text->size() - 600 : 0) : std::string());
  }
  return Status::Ok();
}

std::string Command(const DseSpec& s) {
  std::string cmd = "hetplan dse";
  for (const std::string& m : s.models) cmd += " " + m;
  for (const std::string& p : s.platforms) cmd += " --platform " + p;
  for (const std::string& o : s.overrides) cmd += " --set " + o;
  for (const SweepAxis& a : s.sweeps) cmd += fmt::format(" --sweep {}={}", a.key, fmt::join(a.values, ","));
  cmd += fmt::format(" --solvers {}", fmt::join(s.solvers, ","));
  if (s.objectives.size() > 1 || s.objectives.front() != Objective::kLatency) {
    std::vector<std::string> names;
    for (Objective o : s.objectives) names.push_back(ToString(o));
    cmd += fmt::format(" --objective {}", fmt::join(names, ","));
  }
  if (s.import.fusion != FusionLevel::kNone) cmd += " --fusion " + ToString(s.import.fusion);
  if (s.all_pairs) cmd += " --pairs all";
  cmd += fmt::format(" --time-limit {:g} --warmup {} --runs {} --out {}", s.solve.time_limit_s, s.profile.warmup,
                     s.profile.runs, s.out_path);
  if (!s.schedules_dir.empty()) cmd += " --schedules " + s.schedules_dir;
  return cmd;
}

// A sweep value as a number (NaN when it is not one); values come from our
// own specs and rows, but a stray one must not throw.
double ToNumber(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0' ? v : std::nan("");
}

}  // namespace

Result<FrontierStageResult> ComputeFrontiers(const FrontierStageSpec& spec) {
  const auto t0 = Clock::now();
  FrontierStageResult res;
  std::error_code ec;
  std::filesystem::create_directories(spec.dir, ec);
  if (ec) return Error(ErrorCode::kIoError, "{}: cannot create the folder: {}", spec.dir, ec.message());
  TableCache tables;  // each model's host profile read once for every platform
  auto inputs = [&](const std::string& model, const std::string& platform) {
    PlanInputs in;
    in.model_path = model;
    in.import = spec.import;
    in.platform = platform;
    in.costs.profile = spec.profile;
    return in;
  };
  auto options = [&] {
    FrontierSpec fs;
    fs.options.time_limit_s = spec.time_limit_s;
    fs.saturation = true;
    return fs;
  };
  // One curve's bookkeeping: counted, named where the limit stopped it, kept
  // for the comparison with the grid.
  auto record = [&](const std::string& model, const std::string& platform, const std::string& ns,
                    const FrontierCurve& curve) {
    ++res.curves;
    if (!curve.complete) {
      res.stopped.push_back(fmt::format("{} on {} at {} ns ({})", ModelName(model), platform, ns, curve.termination));
    }
    res.points.push_back({ModelName(model), platform, ToNumber(ns), curve});
  };
  auto frontier = [&](const std::string& model, const std::string& platform,
                      const std::string& ns) -> Result<nlohmann::json> {
    PlanInputs in = inputs(model, platform);
    in.overrides = {std::string(kMvmLatencyKey) + "=" + ns};
    HETPLAN_ASSIGN_OR_RETURN(PreparedProblem pp, PrepareProblem(in, &tables));
    HETPLAN_ASSIGN_OR_RETURN(FrontierOutput f, PlanFrontier(pp.subject(), options()));
    record(model, platform, ns, f.read.curves.front());
    return std::move(f.json);
  };
  for (const std::string& platform : spec.platforms) {
    const std::string pname = std::filesystem::path(platform).stem().string();
    if (!spec.latencies_ns.empty()) {
      // Fig. 3: one curve per MVM latency in one file, as `hetplan frontier
      // --sweep cim.mvm_latency_ns=…` writes it.
      FrontierSpec fs = options();
      fs.axis = FrontierAxis{kMvmLatencyKey, spec.latencies_ns};
      HETPLAN_ASSIGN_OR_RETURN(FrontierOutput f, PlanFrontiers(inputs(spec.fig3_model, platform), fs));
      for (size_t i = 0; i < spec.latencies_ns.size(); ++i) {
        record(spec.fig3_model, platform, spec.latencies_ns[i], f.read.curves[i]);
      }
      const std::string path =
          (std::filesystem::path(spec.dir) / fmt::format("fig3_{}_{}.json", ModelName(spec.fig3_model), pname))
              .string();
      HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(path, f.json.dump(1) + "\n"));
      res.files.push_back(path);
    }
    for (const std::string& m : spec.fig4_models) {
      if (m == spec.fig3_model) continue;  // its 50 ns curve is in the Fig. 3 file
      HETPLAN_ASSIGN_OR_RETURN(nlohmann::json f, frontier(m, platform, "50"));
      const std::string path =
          (std::filesystem::path(spec.dir) / fmt::format("fig4_{}_{}_50ns.json", ModelName(m), pname)).string();
      HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(path, f.dump(1) + "\n"));
      res.files.push_back(path);
    }
  }
  res.seconds = SecondsSince(t0);
  return res;
}

std::string FrontierGridCheck::Summary() const {
  if (compared == 0) return "no grid point to compare with";
  return fmt::format("the frontier equals the grid's {} at {} of {} points where both are optimal (largest "
                     "difference {:.2g} %)",
                     solver, agree, compared, max_rel_diff * 100);
}

FrontierGridCheck CompareWithGrid(const FrontierStageResult& frontiers, const std::vector<nlohmann::json>& rows,
                                  const std::string& solver) {
  FrontierGridCheck check;
  check.solver = solver;
  for (const nlohmann::json& r : rows) {
    if (r.value("solver", "") != solver || r.value("objective", "") != "latency" ||
        r.value("status", "") != "optimal") {
      continue;
    }
    const double makespan = RowNumber(r, "makespan_us");
    const std::string xb = RowParam(r, kCrossbarsKey), lat = RowParam(r, kMvmLatencyKey);
    if (!std::isfinite(makespan) || xb.empty() || lat.empty()) continue;
    const double budget = ToNumber(xb), ns = ToNumber(lat);
    if (!std::isfinite(budget) || !std::isfinite(ns)) continue;
    for (const FrontierStageResult::Curve& c : frontiers.points) {
      if (c.model != r.value("model", "") || c.platform != r.value("platform", "") || c.mvm_ns != ns) {
        continue;
      }
      const FrontierStepPoint* step = nullptr;
      for (const FrontierStepPoint& bp : c.curve.steps) {
        if (static_cast<double>(bp.crossbars) <= budget) step = &bp;
      }
      if (step == nullptr || step->status != "optimal") continue;
      const double a = step->makespan_us, b = makespan;
      const double rel = std::abs(a - b) / std::max(std::abs(b), 1e-12);
      ++check.compared;
      // Both are proven within their gaps (1e-4 each) of the same optimum.
      check.agree += rel <= 2e-4 + 1e-9;
      check.max_rel_diff = std::max(check.max_rel_diff, rel);
    }
  }
  return check;
}

namespace {

// What every stage of Reproduce reads: the options, the output folder, the
// zoo and the models each study takes from it.
struct ReproducePlan {
  ReproducePlan(const ReproduceOptions& options, std::filesystem::path out_dir)
      : o(options), out(std::move(out_dir)) {}

  const ReproduceOptions& o;
  std::filesystem::path out;
  std::string zoo;
  std::vector<std::string> klein_models, bident_models, pair_models;
  std::string gantt_model;
  double limit = 0;                      // the ILP time limit per point
  std::vector<std::string> all_solvers;  // o.solver and every baseline

  // Hands a stage's line to the caller, when it asked for them.
  void Stage(const std::string& line) const {
    if (o.stage) o.stage(line);
  }
  std::string PathOf(const std::string& m) const { return (std::filesystem::path(zoo) / (m + ".onnx")).string(); }
  // The settings every sweep shares, with its results in `results` under the
  // output folder (removed first unless resuming).
  DseSpec Base(const std::string& results) const {
    std::error_code ec;
    DseSpec s;
    s.profile.cache_dir = o.cache_dir;
    s.profile.warmup = o.quick ? 5 : 20;
    s.profile.runs = o.quick ? 20 : 200;
    s.solve.time_limit_s = limit;
    s.jobs = o.jobs;
    s.out_path = (out / results).string();
    s.resume = o.resume;
    s.import.fusion = o.fusion;
    if (!o.resume) std::filesystem::remove(s.out_path, ec);
    return s;
  }
};

// Picks the zoo and each study's models in it, INT8 (the *_int8 models)
// unless FP32 is asked for.
Status ChooseModels(ReproducePlan* p) {
  const ReproduceOptions& o = p->o;
  if (o.precision != "int8" && o.precision != "fp32") {
    return Error(ErrorCode::kInvalidArgument, "reproduce: precision '{}' is not one of int8, fp32", o.precision);
  }
  p->zoo = ModelsDir(o);
  auto zoo_names = [&](std::vector<std::string> names) {
    if (o.precision == "int8") {
      for (std::string& m : names) m += "_int8";
    }
    return names;
  };
  p->klein_models = zoo_names(o.quick ? std::vector<std::string>{"resnet18", "mobilenetv2", "yolov5n"}
                                      : std::vector<std::string>{"resnet18", "resnet50", "mobilenetv2", "yolov5n"});
  p->bident_models =
      zoo_names(o.quick ? std::vector<std::string>{"resnet18", "mobilenetv2"}
                        : std::vector<std::string>{"resnet18", "resnet50", "mobilenetv2", "vit_b_16", "yolov5n"});
  // BIDENT's pair study: the zoo and its workload families (models/families.py).
  p->pair_models = zoo_names(
      o.quick ? std::vector<std::string>{"resnet18", "mobilenetv2", "kan", "hyena"}
              : std::vector<std::string>{"resnet18", "resnet50", "mobilenetv2", "vit_b_16", "yolov5n", "llama_layer",
                                         "mamba", "hyena", "kan", "snn_vgg9", "bitnet", "vla_pipeline"});
  p->gantt_model = zoo_names({"resnet18"}).front();
  return Status::Ok();
}

// Exports the models the studies need that the zoo lacks (models/export.py).
Status ExportMissingModels(const ReproducePlan& p, ReproduceSummary* sum) {
  std::error_code ec;
  std::vector<std::string> missing;
  for (const auto* list : {&p.klein_models, &p.bident_models, &p.pair_models}) {
    for (const std::string& m : *list) {
      if (!std::filesystem::exists(std::filesystem::path(p.zoo) / (m + ".onnx"), ec) &&
          std::find(missing.begin(), missing.end(), m) == missing.end()) {
        missing.push_back(m);
      }
    }
  }
  if (!missing.empty()) {
    const auto ts = Clock::now();
    p.Stage(fmt::format("zoo: exporting {} into {} (models/export.py)", fmt::join(missing, ", "), p.zoo));
    HETPLAN_RETURN_IF_ERROR(ExportModels(p.o.python, p.zoo, missing, (p.out / "export.log").string()));
    sum->stages.push_back(fmt::format("zoo: exported {} in {:.1f} s", fmt::join(missing, ", "), SecondsSince(ts)));
    p.Stage(sum->stages.back());
  }
  return Status::Ok();
}

// 1. The CIM paper's grid: ILP and every baseline. Returns its spec, which
// the frontiers and the report build on.
Result<DseSpec> RunKleinGrid(const ReproducePlan& p, ReproduceSummary* sum) {
  const ReproduceOptions& o = p.o;
  DseSpec klein = p.Base("klein.jsonl");
  for (const std::string& m : p.klein_models) klein.models.push_back(p.PathOf(m));
  klein.platforms = {"klein-arm", "klein-x86"};
  klein.sweeps = {{"cim.crossbars", o.quick ? std::vector<std::string>{"25", "100"}
                                            : std::vector<std::string>{"25", "50", "100", "200"}},
                  {"cim.mvm_latency_ns", o.quick ? std::vector<std::string>{"50", "1000"}
                                                 : std::vector<std::string>{"50", "100", "500", "1000"}}};
  klein.solvers = p.all_solvers;
  sum->commands.push_back(Command(klein));
  const auto ts = Clock::now();
  p.Stage("klein grid: " + sum->commands.back());
  HETPLAN_ASSIGN_OR_RETURN(sum->klein, RunDse(klein, o.progress));
  sum->stages.push_back(fmt::format(
      "CIM paper grid: {} points ({} run, {} resumed; {} ILP points stopped by the {:g} s limit) in {:.1f} s, of "
      "which loading + host profiling {:.1f} s",
      sum->klein.points, sum->klein.ran, sum->klein.resumed, sum->klein.time_limited, p.limit, SecondsSince(ts),
      sum->klein.profile_s));
  p.Stage(sum->stages.back());
  return klein;
}

// 1a. The same grid with the weights as cells store them, PUMA's layout:
// INT8 weights in 2-bit cells, each slice in crossbars of its own (issue
// 44). Only the grid's partitioning method; the report sets it beside the
// idealised plans.
Result<DseSpec> RunPhysicalGrid(const ReproducePlan& p, const DseSpec& klein, ReproduceSummary* sum) {
  DseSpec phys = p.Base("klein_physical.jsonl");
  phys.models = klein.models;
  phys.platforms = klein.platforms;
  phys.sweeps = klein.sweeps;
  phys.sweeps.push_back({"cim.bits_per_cell", {"2"}});
  phys.sweeps.push_back({"cim.weight_bits", {"8"}});
  phys.sweeps.push_back({"cim.slice_mapping", {"crossbars"}});
  phys.solvers = {p.o.solver};
  sum->commands.push_back(Command(phys));
  const auto ts = Clock::now();
  p.Stage("physical grid: " + sum->commands.back());
  HETPLAN_ASSIGN_OR_RETURN(const DseSummary s, RunDse(phys, p.o.progress));
  sum->stages.push_back(fmt::format(
      "the grid with PUMA's cell layout (2-bit cells, slices in crossbars of their own): {} points in {:.1f} s",
      s.points, SecondsSince(ts)));
  p.Stage(sum->stages.back());
  return phys;
}

// 1b. The exact frontiers behind Fig. 3 and 4: every crossbar budget, not
// the grid's four (--quick: ResNet-18 only), with the grid's costs.
Status RunFrontierStage(const ReproducePlan& p, const DseSpec& klein, ReproduceSummary* sum) {
  const ReproduceOptions& o = p.o;
  const auto ts = Clock::now();
  FrontierStageSpec fs;
  fs.fig3_model = p.PathOf(p.gantt_model);
  if (!o.quick) {
    for (const std::string& m : p.klein_models) fs.fig4_models.push_back(p.PathOf(m));
  }
  fs.platforms = klein.platforms;
  fs.latencies_ns = klein.sweeps[1].values;
  fs.import = klein.import;
  fs.profile = klein.profile;
  fs.time_limit_s = o.frontier_time_limit_s > 0 ? o.frontier_time_limit_s : (o.quick ? 10.0 : 30.0);
  fs.dir = (p.out / "frontiers").string();
  p.Stage(fmt::format("exact frontiers: {} at {} ns{} on {} ({:g} s limit each)", p.gantt_model,
                      fmt::join(fs.latencies_ns, "/"), o.quick ? "" : " and the other models at 50 ns",
                      fmt::join(fs.platforms, ", "), fs.time_limit_s));
  HETPLAN_ASSIGN_OR_RETURN(FrontierStageResult fr, ComputeFrontiers(fs));
  sum->commands.push_back(fmt::format(
      "hetplan frontier MODEL --platform P --set cim.mvm_latency_ns=NS --saturation --time-limit {:g} --fusion {} "
      "--warmup {} --runs {} --out {}/… (per curve; reproduce joins a model's latencies into one multi-curve file)",
      fs.time_limit_s, ToString(fs.import.fusion), fs.profile.warmup, fs.profile.runs, fs.dir));
  // The frontier and the grid plan the same problems at the grid's budgets.
  HETPLAN_ASSIGN_OR_RETURN(DseResults grid_rows, ReadDseResults(klein.out_path));
  const FrontierGridCheck check = CompareWithGrid(fr, grid_rows.rows, o.solver);
  sum->frontier_files = fr.files;
  sum->stages.push_back(fmt::format(
      "exact frontiers (Fig. 3/4 over every crossbar budget): {} curves in {} files under {}, {} stopped by the "
      "{:g} s limit{}{}, in {:.1f} s; at the grid's budgets {}",
      fr.curves, fr.files.size(), fs.dir, fr.stopped.size(), fs.time_limit_s, fr.stopped.empty() ? "" : ": ",
      fmt::join(fr.stopped, "; "), SecondsSince(ts), check.Summary()));
  p.Stage(sum->stages.back());
  return Status::Ok();
}

// 2. BIDENT-style: CPU + GPU + NPU, latency and energy.
Result<DseSpec> RunBidentSweep(const ReproducePlan& p, ReproduceSummary* sum) {
  DseSpec bident = p.Base("bident.jsonl");
  for (const std::string& m : p.bident_models) bident.models.push_back(p.PathOf(m));
  bident.platforms = {"soc-example"};
  bident.objectives = {Objective::kLatency, Objective::kEnergy};
  bident.solvers = p.all_solvers;
  bident.solvers.insert(bident.solvers.begin() + 1, {"map", "map_parallel"});
  // Two requests of each model: BIDENT's concurrent search and its baselines.
  bident.solvers.push_back("map_concurrent");
  for (const std::string& s : SolverNames(MethodFamily::kBaseline, 2)) bident.solvers.push_back(s);
  sum->commands.push_back(Command(bident));
  const auto ts = Clock::now();
  p.Stage("BIDENT-style sweep: " + sum->commands.back());
  HETPLAN_ASSIGN_OR_RETURN(sum->bident, RunDse(bident, p.o.progress));
  sum->stages.push_back(fmt::format("BIDENT-style sweep (soc-example, roofline costs): {} points in {:.1f} s",
                                    sum->bident.points, SecondsSince(ts)));
  p.Stage(sum->stages.back());
  return bident;
}

// 2b. BIDENT's pair study: every pair of models as two requests at once.
Result<DseSpec> RunPairStudy(const ReproducePlan& p, ReproduceSummary* sum) {
  DseSpec pairs = p.Base("pairs.jsonl");
  for (const std::string& m : p.pair_models) pairs.models.push_back(p.PathOf(m));
  pairs.platforms = {"soc-example"};
  pairs.solvers = {"map_concurrent"};
  for (const std::string& s : SolverNames(MethodFamily::kBaseline, 2)) pairs.solvers.push_back(s);
  pairs.all_pairs = true;
  sum->commands.push_back(Command(pairs));
  const auto ts = Clock::now();
  p.Stage("pair study: " + sum->commands.back());
  HETPLAN_ASSIGN_OR_RETURN(sum->pairs, RunDse(pairs, p.o.progress));
  sum->stages.push_back(fmt::format("BIDENT's pair study (soc-example, roofline costs): {} points over {} models in "
                                    "{:.1f} s",
                                    sum->pairs.points, p.pair_models.size(), SecondsSince(ts)));
  p.Stage(sum->stages.back());
  return pairs;
}

// 3. Schedules for the Gantt charts; returns the schedule files written.
Result<std::vector<std::string>> RunScheduleStage(const ReproducePlan& p, ReproduceSummary* sum) {
  std::error_code ec;
  DseSpec gantt = p.Base("schedules.jsonl");
  gantt.resume = false;
  std::filesystem::remove(gantt.out_path, ec);
  gantt.models = {p.PathOf(p.gantt_model)};
  gantt.platforms = {"klein-arm"};
  gantt.overrides = {"cim.crossbars=100", "cim.mvm_latency_ns=50"};
  gantt.solvers = {p.o.solver};
  gantt.schedules_dir = (p.out / "schedules").string();
  DseSpec gantt_soc = gantt;
  gantt_soc.out_path = (p.out / "schedules_soc.jsonl").string();
  std::filesystem::remove(gantt_soc.out_path, ec);
  gantt_soc.platforms = {"soc-example"};
  gantt_soc.overrides.clear();
  gantt_soc.solvers = {"map_parallel"};
  std::vector<std::string> schedule_files;
  for (const DseSpec* spec : {&gantt, &gantt_soc}) {
    sum->commands.push_back(Command(*spec));
    HETPLAN_ASSIGN_OR_RETURN(DseSummary s, RunDse(*spec, {}));
    HETPLAN_ASSIGN_OR_RETURN(DseResults rows, ReadDseResults(spec->out_path));
    for (const nlohmann::json& r : rows.rows) {
      if (r.contains("schedule_file") && r["schedule_file"].is_string()) {
        schedule_files.push_back(r["schedule_file"].get<std::string>());
      }
    }
  }
  return schedule_files;
}

// 4. The report over the sweeps' `results` files, with notes on how they
// were produced (`t0`: when Reproduce started).
Status DrawReport(const ReproducePlan& p, const std::vector<std::string>& results,
                  const std::vector<std::string>& schedule_files, Clock::time_point t0, ReproduceSummary* sum) {
  const ReproduceOptions& o = p.o;
  const double before_report = SecondsSince(t0);
  sum->stages.push_back(
      fmt::format("everything before drawing the report: {:.1f} s ({:.1f} min)", before_report, before_report / 60));
  ReportInputs ri;
  ri.results = results;
  ri.out_dir = (p.out / "report").string();
  ri.schedule_files = schedule_files;
  ri.frontier_files = sum->frontier_files;
  ri.run_notes.push_back(fmt::format("produced by `hetplan reproduce{}{}{}` into {}", o.quick ? " --quick" : "",
                                     o.precision == "int8" ? "" : " --precision " + o.precision,
                                     o.fusion == FusionLevel::kActivation ? "" : " --fusion " + ToString(o.fusion),
                                     o.out_dir));
  ri.run_notes.push_back(
      o.precision == "int8"
          ? "models: the INT8 zoo (*_int8, post-training static quantization), as the CIM paper ran them: host "
            "costs of ONNX Runtime's integer kernels, one byte per element on the bus and in CIM loads and stores"
          : "models: the FP32 zoo, four bytes per element on the bus and in CIM loads and stores");
  for (const std::string& s : sum->stages) ri.run_notes.push_back(s);
  for (const std::string& c : sum->commands) ri.run_notes.push_back("equivalent: " + c);
  ri.run_notes.push_back(fmt::format(
      "ILP points take turns on the MIP solver (one at a time, all cores); baselines run beside them on {} worker "
      "thread{}",
      sum->klein.jobs, sum->klein.jobs == 1 ? "" : "s"));
  ri.run_notes.push_back(fmt::format(
      "ILP time limit {:g} s per point (the CIM paper used 600 s with Gurobi); a point stopped by it is reported as "
      "feasible with its gap, never as optimal",
      p.limit));
  if (o.quick) ri.run_notes.push_back("--quick: a 2 × 2 grid, 20 profiling runs per operator");
  const auto ts = Clock::now();
  HETPLAN_ASSIGN_OR_RETURN(ReportOutput rep, WriteReport(ri));
  sum->report_html = rep.html_path;
  sum->report_md = rep.markdown_path;
  sum->stages.push_back(fmt::format("report: {} figures in {:.1f} s", rep.figures.size(), SecondsSince(ts)));
  return Status::Ok();
}

}  // namespace

Result<ReproduceSummary> Reproduce(const ReproduceOptions& o) {
  const auto t0 = Clock::now();
  ReproduceSummary sum;
  ReproducePlan p(o, std::filesystem::path(o.out_dir));
  std::error_code ec;
  std::filesystem::create_directories(p.out, ec);
  if (ec) return Error(ErrorCode::kIoError, "{}: cannot create the folder: {}", o.out_dir, ec.message());
  HETPLAN_RETURN_IF_ERROR(ChooseModels(&p));
  HETPLAN_RETURN_IF_ERROR(ExportMissingModels(p, &sum));
  p.limit = o.time_limit_s > 0 ? o.time_limit_s : (o.quick ? 5.0 : 10.0);
  p.all_solvers = {o.solver};
  for (const std::string& b : SolverNames(MethodFamily::kBaseline, 1)) p.all_solvers.push_back(b);

  HETPLAN_ASSIGN_OR_RETURN(const DseSpec klein, RunKleinGrid(p, &sum));
  HETPLAN_ASSIGN_OR_RETURN(const DseSpec physical, RunPhysicalGrid(p, klein, &sum));
  HETPLAN_RETURN_IF_ERROR(RunFrontierStage(p, klein, &sum));
  HETPLAN_ASSIGN_OR_RETURN(const DseSpec bident, RunBidentSweep(p, &sum));
  HETPLAN_ASSIGN_OR_RETURN(const DseSpec pairs, RunPairStudy(p, &sum));
  HETPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> schedule_files, RunScheduleStage(p, &sum));
  HETPLAN_RETURN_IF_ERROR(DrawReport(p, {klein.out_path, physical.out_path, bident.out_path, pairs.out_path},
                                     schedule_files, t0, &sum));
  sum.wall_s = SecondsSince(t0);
  sum.stages.push_back(fmt::format("total wall time: {:.1f} s ({:.1f} min)", sum.wall_s, sum.wall_s / 60));
  nlohmann::json j = {{"wall_s", sum.wall_s},     {"quick", o.quick},          {"stages", sum.stages},
                      {"precision", o.precision}, {"fusion", ToString(o.fusion)},
                      {"commands", sum.commands}, {"report", sum.report_html}, {"host_cpu", sum.klein.host_cpu},
                      {"frontiers", sum.frontier_files}};
  HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((p.out / "reproduce.json").string(), j.dump(1) + "\n"));
  return sum;
}

}  // namespace hetplan
