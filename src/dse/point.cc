// One point of a sweep: plan it through the application layer and turn the
// outcome into its results line (docs/dse.md lists the fields).
#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <exception>
#include <filesystem>

#include "dse/internal.h"
#include "hetplan/app/plan.h"
#include "hetplan/cost/build.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"

namespace hetplan::dse {
namespace {

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

const Solver& MethodOf(const DsePoint& pt) { return *FindSolver(pt.solver); }

}  // namespace

std::string ModelName(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string VariantKey(int platform, const std::vector<std::string>& overrides) {
  return fmt::format("{}|{}", platform, fmt::join(overrides, ";"));
}

bool InCbcLane(const DseSpec& spec, const DsePoint& pt) { return MethodOf(pt).UsesCbc(pt.objective, spec.solve); }

std::string SchedulePath(const DseSpec& spec, const std::string& key) {
  return (std::filesystem::path(spec.schedules_dir) / (Sha256Hex(key).substr(0, 16) + ".json")).string();
}

std::string KeyOf(const Shared& sh, const DsePoint& pt) {
  const std::string& first = sh.models[pt.model].sha256;
  return PointKey(pt.second < 0 ? first : first + "+" + sh.models[pt.second].sha256, sh.spec->platforms[pt.platform], pt.overrides, pt.solver,
                  pt.objective, sh.spec->charge_boundary);
}

std::string Describe(const Shared& sh, const DsePoint& pt) {
  const std::string model = ModelName(sh.models[pt.model].path) +
                            (pt.second < 0 ? "" : "+" + ModelName(sh.models[pt.second].path));
  return fmt::format("{} {} {} {}{}", model, sh.spec->platforms[pt.platform],
                     fmt::join(pt.overrides, " "), pt.solver,
                     pt.objective == Objective::kLatency ? "" : " (" + ToString(pt.objective) + ")");
}

void ReportDone(const DseProgressFn& progress, const DseSummary& summary, DseProgress* prog) {
  if (!progress) return;
  prog->phase = DseProgress::Phase::kDone;
  prog->done = summary.ran;
  prog->elapsed_s = summary.wall_s;
  prog->eta_s = 0;
  prog->message = "done";
  progress(*prog);
}

void CountOutcome(const nlohmann::json& line, const std::string& description, DseSummary* summary) {
  ++summary->ran;
  const std::string status = line.value("status", "");
  if (status == "error" || status == "invalid") ++summary->failed;
  if (status == "not_applicable") ++summary->not_applicable;
  if (line.value("time_limited", false)) {
    ++summary->time_limited;
    summary->time_limited_points.push_back(description);
  }
}

// What identifies a point: its key, model(s), platform, parameters,
// solver, host and profile settings.
nlohmann::json PointHeader(const Shared& sh, const DsePoint& pt, const Platform& platform, const MethodInfo& info) {
  const DseSpec& spec = *sh.spec;
  const LoadedModel& model = sh.models[pt.model];
  nlohmann::json line;
  line["key"] = KeyOf(sh, pt);
  line["model"] = ModelName(model.path);
  line["model_file"] = model.path;
  line["model_sha256"] = model.sha256;
  line["operators"] = model.graph.size();
  line["edges"] = model.graph.edges().size();
  const LoadedModel* second = pt.second < 0 ? nullptr : &sh.models[pt.second];
  if (second != nullptr) {  // the second request of a pair study's point
    line["second_model"] = ModelName(second->path);
    line["second_model_file"] = second->path;
    line["second_model_sha256"] = second->sha256;
    line["second_operators"] = second->graph.size();
  }
  line["platform"] = spec.platforms[pt.platform];
  line["platform_name"] = platform.name;
  line["overrides"] = pt.overrides;
  line["params"] = pt.params;
  line["solver"] = pt.solver;
  line["objective"] = ToString(pt.objective);
  line["host_cpu"] = sh.host_cpu;
  if (sh.run_rank >= 0) {
    line["host"] = sh.run_host;
    line["rank"] = sh.run_rank;
  }
  line["profile"] = {{"warmup", spec.profile.warmup}, {"runs", spec.profile.runs}};
  line["boundary_cost"] = spec.charge_boundary ? "fitted" : "none";
  if (info.time_limit) line["time_limit_s"] = Num(spec.solve.time_limit_s);
  return line;
}

// The solver's own report: status, termination, objective, bound, gap,
// model size and notes.
void AddSolveFields(const SolveResult& r, nlohmann::json& line) {
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
}

// Per device: operators, busy time, crossbars.
void AddDeviceUsage(const OpGraph& g, const CostModel& cm, const Schedule& s, nlohmann::json& line) {
  nlohmann::json devices = nlohmann::json::object();
  int64_t crossbars_used = 0, crossbar_capacity = 0;
  for (int p = 0; p < cm.num_pus(); ++p) {
    const PuInfo& pu = cm.pu(p);
    int ops = 0;
    double busy = 0;
    int64_t xb = 0;
    for (int v = 0; v < g.size(); ++v) {
      if (s.ops[v].device != p) continue;
      ++ops;
      busy += s.ops[v].finish_us - s.ops[v].start_us;
      if (pu.spatial) xb += cm.crossbars(v, p);
    }
    nlohmann::json d = {{"operators", ops}, {"busy_us", busy}, {"kind", ToString(pu.kind)}};
    if (pu.spatial) {
      // What holding every operator this PU supports would take (eq. 1 summed).
      int64_t all = 0;
      for (int v = 0; v < g.size(); ++v) all += cm.supported(v, p) ? cm.crossbars(v, p) : 0;
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
}

nlohmann::json RunPoint(const Shared& sh, const DsePoint& pt, std::string* schedule) {
  const DseSpec& spec = *sh.spec;
  const LoadedModel& model = sh.models[pt.model];
  const std::string vk = VariantKey(pt.platform, pt.overrides);
  const Platform& platform = sh.variants.at(vk);
  const MethodInfo& info = MethodOf(pt).info();
  const auto t0 = Clock::now();
  nlohmann::json line = PointHeader(sh, pt, platform, info);
  const LoadedModel* second = pt.second < 0 ? nullptr : &sh.models[pt.second];
  auto fail = [&](const std::string& status, const std::string& message) {
    line["status"] = status;
    line["message"] = message;
    line["wall_s"] = SecondsSince(t0);
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
    std::optional<CostModel> second_costs;
    std::optional<PlanSubject> second_subject;
    if (second != nullptr) {
      const ResolvedCosts& r2 = sh.costs.at({pt.second, vk});
      auto c2 = BuildCostModel(second->graph, platform, r2.sources);
      if (!c2.ok()) return fail("error", c2.status().message());
      second_costs.emplace(std::move(c2).value());
      second_subject.emplace(PlanSubject{second, &platform, &*second_costs, &r2.notes});
      for (const PuInfo& pu : second_costs->pus()) {
        if (basis.value(pu.name, "") != pu.cost_label) basis[pu.name] = basis.value(pu.name, "") + " + " + pu.cost_label;
      }
      line["cost_basis"] = basis;
    }
    auto plan = Plan(subject, ps, second_subject ? &*second_subject : nullptr);
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
    AddSolveFields(r, line);
    line["cpu_only_us"] = ref("cpu_only_us");
    line["best_single_us"] = ref("best_single_us");
    line["best_single_pu"] = pair || plan->references.best_pu.empty() ? nlohmann::json(nullptr)
                                                                      : nlohmann::json(plan->references.best_pu);
    line["best_single_uj"] = ref("best_single_uj");
    if (!r.schedule) {
      line["makespan_us"] = nullptr;
      line["energy_uj"] = nullptr;
      line["speedup"] = nullptr;
      line["wall_s"] = SecondsSince(t0);
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
    AddDeviceUsage(plan->combined ? plan->combined->graph : model.graph, plan->combined ? plan->combined->costs : *costs,
                   s, line);
    if (!spec.schedules_dir.empty()) {
      const std::string path = SchedulePath(spec, line["key"].get<std::string>());
      if (schedule != nullptr) {
        *schedule = ScheduleFileText(file);
      } else if (Status st = WriteFileAtomic(path, ScheduleFileText(file)); !st.ok()) {
        return fail("error", st.message());
      }
      line["schedule_file"] = path;
    }
    line["wall_s"] = SecondsSince(t0);
    line["finished_at"] = UtcNow();
    return line;
  } catch (const std::exception& e) {
    return fail("error", fmt::format("internal error: {}", e.what()));
  }
}

}  // namespace hetplan::dse
