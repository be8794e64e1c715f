// RunDse: load and profile everything first (sequentially), then run the
// points on a worker pool with one exclusive lane for CBC-backed solvers, and
// append one JSON line per finished point.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "hetplan/app/plan.h"
#include "hetplan/cost/build.h"
#include "hetplan/dse/dse.h"
#include "hetplan/platform/platform.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"

namespace hetplan {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string ModelName(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json Num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
nlohmann::json Num(const std::optional<double>& v) { return v ? Num(*v) : nlohmann::json(nullptr); }

std::string VariantKey(int platform, const std::vector<std::string>& overrides) {
  return fmt::format("{}|{}", platform, fmt::join(overrides, ";"));
}

// What every worker reads (never writes) once the points start.
struct Shared {
  const DseSpec* spec = nullptr;
  std::vector<LoadedModel> models;
  std::map<std::string, Platform> variants;  // VariantKey → platform with the point's overrides
  // (model, VariantKey) → the point's cost sources and their notes.
  std::map<std::pair<int, std::string>, ResolvedCosts> costs;
  std::string host_cpu;
};

const Solver& MethodOf(const DsePoint& pt) { return *FindSolver(pt.solver); }

bool InCbcLane(const DsePoint& pt) { return MethodOf(pt).UsesCbc(pt.objective); }

// Runs one point; never throws; the line to write.
nlohmann::json RunPoint(const Shared& sh, const DsePoint& pt) {
  const DseSpec& spec = *sh.spec;
  const LoadedModel& model = sh.models[pt.model];
  const std::string vk = VariantKey(pt.platform, pt.overrides);
  const Platform& platform = sh.variants.at(vk);
  const MethodInfo& info = MethodOf(pt).info();
  const auto t0 = Clock::now();
  nlohmann::json line;
  line["key"] = PointKey(model.sha256, spec.platforms[pt.platform], pt.overrides, pt.solver, pt.objective);
  line["model"] = ModelName(model.path);
  line["model_file"] = model.path;
  line["model_sha256"] = model.sha256;
  line["operators"] = model.graph.size();
  line["edges"] = model.graph.edges().size();
  line["platform"] = spec.platforms[pt.platform];
  line["platform_name"] = platform.name;
  line["overrides"] = pt.overrides;
  line["params"] = pt.params;
  line["solver"] = pt.solver;
  line["objective"] = ToString(pt.objective);
  line["host_cpu"] = sh.host_cpu;
  line["profile"] = {{"warmup", spec.profile.warmup}, {"runs", spec.profile.runs}};
  if (info.time_limit) line["time_limit_s"] = Num(spec.solve.time_limit_s);
  auto fail = [&](const std::string& status, const std::string& message) {
    line["status"] = status;
    line["message"] = message;
    line["wall_s"] = Since(t0);
    line["finished_at"] = UtcNow();
    return line;
  };
  try {
    const ResolvedCosts& resolved = sh.costs.at({pt.model, vk});
    auto costs = BuildCostModel(model.graph, platform, resolved.sources);
    if (!costs.ok()) return fail("error", costs.status().message());
    nlohmann::json basis = nlohmann::json::object();
    for (const PuInfo& pu : costs->pus()) basis[pu.name] = pu.cost_label;
    line["cost_basis"] = basis;
    PlanSpec ps;
    ps.solver = pt.solver;
    ps.objective = pt.objective;
    ps.latency_cap_us = pt.objective == Objective::kEnergy ? spec.latency_cap_us : std::nullopt;
    ps.options = spec.solve;
    const PlanSubject subject{&model, &platform, &*costs, &resolved.notes};
    auto plan = Plan(subject, ps);
    if (!plan.ok()) {
      const ErrorCode code = plan.status().code();
      return fail(code == ErrorCode::kInfeasible    ? "infeasible"
                  : code == ErrorCode::kUnsupported ? "not_applicable"
                  : code == ErrorCode::kInternal && plan.status().message().find("fails validation") !=
                                                        std::string::npos
                      ? "invalid"
                      : "error",
                  plan.status().message());
    }
    const SolveResult& r = plan->result;
    const bool pair = info.requests == 2;
    const std::map<std::string, double>& refs = plan->references.values;
    const auto ref = [&](const char* key) { return refs.contains(key) ? Num(refs.at(key)) : nlohmann::json(nullptr); };
    if (pair) line["requests"] = 2;
    if (r.mapping) {
      line["predicted_latency_us"] = r.mapping->predicted_latency_us;
      line["predicted_energy_uj"] = Num(r.mapping->predicted_energy_uj);
    } else if (r.concurrent) {
      line["predicted_latency_us"] = r.concurrent->predicted_latency_us;
      line["predicted_energy_uj"] = Num(r.concurrent->predicted_energy_uj);
    }
    line["status"] = ToString(r.status);
    line["termination"] = ToString(r.termination);
    line["objective_value"] = Num(r.objective);
    line["bound"] = Num(r.bound);
    line["gap"] = Num(r.gap);
    line["seconds"] = r.seconds;
    line["variables"] = r.mip ? r.mip->variables : 0;
    line["constraints"] = r.mip ? r.mip->constraints : 0;
    line["formulation"] = r.formulation.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.formulation);
    line["notes"] = r.notes;
    line["time_limited"] = r.termination == Termination::kTimeLimit;
    line["cpu_only_us"] = ref("cpu_only_us");
    line["best_single_us"] = ref("best_single_us");
    line["best_single_pu"] = pair || plan->references.best_pu.empty() ? nlohmann::json(nullptr)
                                                                      : nlohmann::json(plan->references.best_pu);
    line["best_single_uj"] = ref("best_single_uj");
    if (!r.schedule) {
      line["makespan_us"] = nullptr;
      line["energy_uj"] = nullptr;
      line["speedup"] = nullptr;
      line["wall_s"] = Since(t0);
      line["finished_at"] = UtcNow();
      return line;
    }
    const Schedule& s = *r.schedule;
    const nlohmann::json& file = plan->schedule;
    const auto per = [&](const char* key) { return refs.contains(key) ? refs.at(key) : std::nan(""); };
    line["valid"] = true;
    line["makespan_us"] = s.makespan_us;
    line["energy_uj"] = Num(s.energy_uj);
    line["speedup"] = refs.contains("cpu_only_us") && s.makespan_us > 0 ? Num(per("cpu_only_us") / s.makespan_us)
                                                                        : nlohmann::json(nullptr);
    line["speedup_vs_best_single"] = refs.contains("best_single_us") && s.makespan_us > 0
                                         ? Num(per("best_single_us") / s.makespan_us)
                                         : nlohmann::json(nullptr);
    line["energy_saving_vs_best_single"] = refs.contains("best_single_uj") && s.energy_uj && per("best_single_uj") > 0
                                               ? Num(1.0 - *s.energy_uj / per("best_single_uj"))
                                               : nlohmann::json(nullptr);
    if (pair) {
      line["best_serial_us"] = Num(per("best_serial_us"));
      line["best_serial_pu"] = plan->references.best_pu;
      line["best_serial_uj"] = Num(per("best_serial_uj"));
      line["naive_multi_pu_us"] = Num(per("naive_multi_pu_us"));
      line["speedup_vs_serial"] = s.makespan_us > 0 ? Num(per("best_serial_us") / s.makespan_us) : nullptr;
      line["energy_saving_vs_serial"] =
          s.energy_uj ? Num(1.0 - *s.energy_uj / per("best_serial_uj")) : nlohmann::json(nullptr);
    }
    // Per device: operators, busy time, crossbars.
    const OpGraph* graph = plan->combined ? &plan->combined->graph : &model.graph;
    const CostModel* cm = plan->combined ? &plan->combined->costs : &*costs;
    nlohmann::json devices = nlohmann::json::object();
    int64_t crossbars_used = 0, crossbar_capacity = 0;
    for (int p = 0; p < cm->num_pus(); ++p) {
      const PuInfo& pu = cm->pu(p);
      int ops = 0;
      double busy = 0;
      int64_t xb = 0;
      for (int v = 0; v < graph->size(); ++v) {
        if (s.ops[v].device != p) continue;
        ++ops;
        busy += s.ops[v].finish_us - s.ops[v].start_us;
        if (pu.spatial) xb += cm->crossbars(v, p);
      }
      nlohmann::json d = {{"operators", ops}, {"busy_us", busy}, {"kind", ToString(pu.kind)}};
      if (pu.spatial) {
        // What holding every operator this PU supports would take (eq. 1 summed).
        int64_t all = 0;
        for (int v = 0; v < graph->size(); ++v) all += cm->supported(v, p) ? cm->crossbars(v, p) : 0;
        d["crossbars_for_all"] = all;
        d["crossbars"] = xb;
        d["capacity"] = pu.capacity;
        crossbars_used += xb;
        crossbar_capacity += pu.capacity;
      }
      devices[pu.name] = std::move(d);
    }
    line["devices"] = std::move(devices);
    line["crossbars_used"] = crossbars_used;
    line["crossbar_capacity"] = crossbar_capacity;
    if (!spec.schedules_dir.empty()) {
      const std::string path = (std::filesystem::path(spec.schedules_dir) /
                                (Sha256Hex(line["key"].get<std::string>()).substr(0, 16) + ".json"))
                                   .string();
      if (Status st = WriteFileAtomic(path, ScheduleFileText(file)); !st.ok()) return fail("error", st.message());
      line["schedule_file"] = path;
    }
    line["wall_s"] = Since(t0);
    line["finished_at"] = UtcNow();
    return line;
  } catch (const std::exception& e) {
    return fail("error", fmt::format("internal error: {}", e.what()));
  }
}

// Keys already in the file (status other than "error"); truncates a partial
// last line so that appending starts on a fresh line.
Result<std::set<std::string>> ResumeKeys(const std::string& path, int* bad_lines) {
  std::set<std::string> keys;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return keys;
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  const std::string& t = *text;
  if (!t.empty() && t.back() != '\n') {
    const size_t last = t.find_last_of('\n');
    const size_t keep = last == std::string::npos ? 0 : last + 1;
    std::filesystem::resize_file(path, keep, ec);
    if (ec) return Error(ErrorCode::kIoError, "{}: cannot drop the partial last line: {}", path, ec.message());
  }
  auto rows = ReadDseResults(path);
  if (!rows.ok()) return rows.status();
  *bad_lines = rows->bad_lines;
  for (const nlohmann::json& row : rows->rows) {
    if (!row.contains("key") || !row["key"].is_string()) continue;
    if (row.value("status", "") == "error") continue;
    keys.insert(row["key"].get<std::string>());
  }
  return keys;
}

std::string Describe(const Shared& sh, const DsePoint& pt) {
  return fmt::format("{} {} {} {}{}", ModelName(sh.models[pt.model].path), sh.spec->platforms[pt.platform],
                     fmt::join(pt.overrides, " "), pt.solver,
                     pt.objective == Objective::kLatency ? "" : " (" + ToString(pt.objective) + ")");
}

}  // namespace

Result<DseSummary> RunDse(const DseSpec& spec_in, const DseProgressFn& progress) {
  DseSpec spec = spec_in;  // with every solver by its canonical name
  const auto t0 = Clock::now();
  if (spec.models.empty()) return Error(ErrorCode::kInvalidArgument, "dse: no models; name at least one ONNX file");
  if (spec.platforms.empty()) {
    return Error(ErrorCode::kInvalidArgument, "dse: no platform; add --platform klein-arm (or a YAML file)");
  }
  if (spec.solvers.empty()) return Error(ErrorCode::kInvalidArgument, "dse: no solver; e.g. --solvers ilp,greedy");
  if (spec.objectives.empty()) return Error(ErrorCode::kInvalidArgument, "dse: no objective");
  if (spec.out_path.empty()) return Error(ErrorCode::kInvalidArgument, "dse: no results file; add --out results.jsonl");
  if (spec.jobs < 0) return Error(ErrorCode::kInvalidArgument, "dse: jobs {} must be ≥ 0 (0 = all cores)", spec.jobs);
  for (std::string& s : spec.solvers) {
    auto resolved = ResolveSolverName(s);
    if (!resolved.ok()) return Error(ErrorCode::kInvalidArgument, "dse: {}", resolved.status().message());
    s = resolved->canonical;
  }
  std::set<std::string> seen_keys;
  for (const SweepAxis& axis : spec.sweeps) {
    if (!seen_keys.insert(axis.key).second) {
      return Error(ErrorCode::kInvalidArgument, "dse: --sweep {} is given twice; give all its values in one --sweep",
                   axis.key);
    }
  }

  Shared sh;
  sh.spec = &spec;
  sh.host_cpu = CpuModelName();
  DseSummary summary;
  summary.host_cpu = sh.host_cpu;
  const std::vector<DsePoint> points = ExpandPoints(spec);
  summary.points = static_cast<int>(points.size());

  // Platforms and every override combination, checked before anything runs.
  std::vector<Platform> bases;
  for (const std::string& name : spec.platforms) {
    HETPLAN_ASSIGN_OR_RETURN(Platform p, LoadPlatform(name));
    bases.push_back(std::move(p));
  }
  for (const DsePoint& pt : points) {
    const std::string vk = VariantKey(pt.platform, pt.overrides);
    if (sh.variants.contains(vk)) continue;
    Platform p = bases[pt.platform];
    for (const std::string& o : pt.overrides) {
      if (Status st = ApplyOverride(p, o); !st.ok()) {
        return Error(st.code(), "dse: platform {}: {}", spec.platforms[pt.platform], st.message());
      }
    }
    sh.variants.emplace(vk, std::move(p));
  }

  // Models, then host profiles: sequentially, before any point runs.
  TableCache tables;
  DseProgress prog;
  prog.phase = DseProgress::Phase::kProfiling;
  prog.total = static_cast<int>(spec.models.size());
  for (size_t m = 0; m < spec.models.size(); ++m) {
    prog.message = "loading and profiling " + spec.models[m];
    prog.done = static_cast<int>(m);
    prog.elapsed_s = Since(t0);
    if (progress) progress(prog);
    HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(spec.models[m], spec.import));
    CostInputs in;
    in.profile = spec.profile;
    if (progress) {
      in.progress = [&, name = ModelName(model.path)](const std::string& pu, int done, int total) {
        DseProgress pp = prog;
        pp.message = fmt::format("profiling {} on {}: {}/{} operators", name, pu, done, total);
        pp.elapsed_s = Since(t0);
        progress(pp);
      };
    }
    for (const auto& [vk, platform] : sh.variants) {
      auto resolved = ResolveCosts(model, platform, in, &tables);
      if (!resolved.ok()) return Error(resolved.status().code(), "dse: {}", resolved.status().message());
      for (const ResolvedCosts::Profiled& pr : resolved->profiled) {
        summary.profile_notes.push_back(fmt::format("{}: {} profiled with {} thread{} (cache {}, {:.1f} s)",
                                                    ModelName(model.path), pr.pu, pr.threads,
                                                    pr.threads == 1 ? "" : "s", pr.cache, pr.seconds));
      }
      sh.costs.emplace(std::make_pair(static_cast<int>(m), vk), std::move(resolved).value());
    }
    sh.models.push_back(std::move(model));
  }
  summary.profile_s = Since(t0);

  // The results file.
  std::set<std::string> done_keys;
  std::error_code ec;
  if (!spec.resume && std::filesystem::exists(spec.out_path, ec) && std::filesystem::file_size(spec.out_path, ec) > 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "dse: {} exists; add --resume to continue that sweep, or remove it to start afresh", spec.out_path);
  }
  if (spec.resume) {
    int bad = 0;
    HETPLAN_ASSIGN_OR_RETURN(done_keys, ResumeKeys(spec.out_path, &bad));
  }
  if (const auto parent = std::filesystem::path(spec.out_path).parent_path(); !parent.empty()) {
    std::filesystem::create_directories(parent, ec);
  }
  if (!spec.schedules_dir.empty()) {
    std::filesystem::create_directories(spec.schedules_dir, ec);
    if (ec) return Error(ErrorCode::kIoError, "{}: cannot create the folder: {}", spec.schedules_dir, ec.message());
  }
  std::ofstream out(spec.out_path, std::ios::app | std::ios::binary);
  if (!out) return Error(ErrorCode::kIoError, "{}: cannot open the results file for appending", spec.out_path);

  // The work: CBC points in one lane, the rest on any worker.
  std::deque<int> exclusive, others;
  for (int i = 0; i < static_cast<int>(points.size()); ++i) {
    const DsePoint& pt = points[i];
    const std::string key =
        PointKey(sh.models[pt.model].sha256, spec.platforms[pt.platform], pt.overrides, pt.solver, pt.objective);
    if (done_keys.contains(key)) {
      ++summary.resumed;
      continue;
    }
    (InCbcLane(pt) ? exclusive : others).push_back(i);
  }
  const int to_run = static_cast<int>(exclusive.size() + others.size());
  int jobs = spec.jobs > 0 ? spec.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::max(1, std::min(jobs, to_run));
  summary.jobs = jobs;

  std::mutex mu;
  std::condition_variable cv;
  bool lane_busy = false;
  Status io_error;
  const auto ts = Clock::now();
  // Mean seconds per (model, exclusive) group, for the ETA.
  std::map<std::pair<int, bool>, std::pair<double, int>> timing;
  prog = DseProgress{};
  prog.phase = DseProgress::Phase::kSolving;
  prog.total = to_run;
  prog.resumed = summary.resumed;
  auto eta = [&]() -> double {
    double excl = 0;
    double other = 0;
    double all_sum = 0;
    int all_n = 0;
    for (const auto& [k, v] : timing) {
      all_sum += v.first;
      all_n += v.second;
    }
    if (all_n == 0) return -1;
    auto estimate = [&](int i) {
      const auto it = timing.find({points[i].model, InCbcLane(points[i])});
      return it != timing.end() ? it->second.first / it->second.second : all_sum / all_n;
    };
    for (int i : exclusive) excl += estimate(i);
    for (int i : others) other += estimate(i);
    return std::max(excl, other / std::max(1, jobs - (exclusive.empty() ? 0 : 1)));
  };
  if (progress) {
    prog.elapsed_s = Since(t0);
    progress(prog);
  }

  auto worker = [&]() {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      cv.wait(lock, [&] {
        return !io_error.ok() || (!lane_busy && !exclusive.empty()) || !others.empty() ||
               (exclusive.empty() && others.empty());
      });
      if (!io_error.ok()) return;
      // Stopped on request: no new point starts (the rest stay for --resume).
      if (spec.solve.interrupt != nullptr && spec.solve.interrupt->load()) {
        summary.interrupted = true;
        return;
      }
      int i = -1;
      bool excl = false;
      if (!lane_busy && !exclusive.empty()) {
        i = exclusive.front();
        exclusive.pop_front();
        lane_busy = excl = true;
      } else if (!others.empty()) {
        i = others.front();
        others.pop_front();
      } else {
        return;  // nothing left that this worker may take
      }
      lock.unlock();
      const auto tp = Clock::now();
      nlohmann::json line = RunPoint(sh, points[i]);
      const double seconds = Since(tp);
      std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      lock.lock();
      if (excl) lane_busy = false;
      if (line.value("termination", "") == "interrupted") {
        // Cut short on request: not written, so that --resume runs it again.
        summary.interrupted = true;
        cv.notify_all();
        continue;
      }
      out << text << '\n';
      out.flush();
      if (!out) io_error = Error(ErrorCode::kIoError, "{}: write failed (disk full?)", spec.out_path);
      auto& t = timing[{points[i].model, excl}];
      t.first += seconds;
      ++t.second;
      ++summary.ran;
      const std::string status = line.value("status", "");
      if (status == "error" || status == "invalid") ++summary.failed;
      if (status == "not_applicable") ++summary.not_applicable;
      if (line.value("time_limited", false)) {
        ++summary.time_limited;
        summary.time_limited_points.push_back(Describe(sh, points[i]));
      }
      if (progress) {
        prog.done = summary.ran;
        prog.elapsed_s = Since(t0);
        prog.eta_s = eta();
        prog.message = fmt::format("{}: {}", Describe(sh, points[i]), status);
        progress(prog);
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs && to_run > 0; ++j) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (!io_error.ok()) return io_error;
  summary.solve_s = Since(ts);
  summary.wall_s = Since(t0);
  if (progress) {
    prog.phase = DseProgress::Phase::kDone;
    prog.done = summary.ran;
    prog.elapsed_s = summary.wall_s;
    prog.eta_s = 0;
    prog.message = "done";
    progress(prog);
  }
  return summary;
}

}  // namespace hetplan
