// `hetplan frontier`: the optimal makespan over every crossbar budget
// (docs/frontier.md). Parses flags; the work is PlanFrontier (app/frontier.h).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "hetplan/app/frontier.h"
#include "hetplan/util/io.h"

namespace hetplan::cli {
namespace {

// One integer of --crossbars; the whole token must be one.
Result<int64_t> ParseBudget(const std::string& text, const std::string& range) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0) {
    return Error(ErrorCode::kInvalidArgument, "--crossbars {}: '{}' is not an integer; write LO:HI, e.g. 0:400",
                 range, text);
  }
  if (v < 0) {
    return Error(ErrorCode::kInvalidArgument, "--crossbars {}: {} is negative; budgets are ≥ 0", range, v);
  }
  return static_cast<int64_t>(v);
}

// LO:HI, LO: (up to saturation) or HI alone (0:HI).
Status ParseRange(const std::string& range, FrontierSpec* spec) {
  if (range.empty()) return Status::Ok();
  const auto colon = range.find(':');
  if (colon == std::string::npos) {
    HETPLAN_ASSIGN_OR_RETURN(int64_t hi, ParseBudget(range, range));
    spec->max_crossbars = hi;
    return Status::Ok();
  }
  HETPLAN_ASSIGN_OR_RETURN(spec->min_crossbars, ParseBudget(range.substr(0, colon), range));
  if (colon + 1 < range.size()) {
    HETPLAN_ASSIGN_OR_RETURN(int64_t hi, ParseBudget(range.substr(colon + 1), range));
    spec->max_crossbars = hi;
  }
  return Status::Ok();
}

// --sweep PU.KEY=V1,V2,…
Result<FrontierAxis> ParseAxis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || text.find('.') > eq) {
    return Error(ErrorCode::kInvalidArgument,
                 "--sweep {}: write PU.KEY=V1,V2,…, e.g. cim.mvm_latency_ns=50,100,500,1000", text);
  }
  FrontierAxis axis;
  axis.key = text.substr(0, eq);
  const std::string list = text.substr(eq + 1);
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    std::string v = list.substr(pos, comma - pos);
    if (v.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--sweep {}: an empty value; write PU.KEY=V1,V2,…", text);
    }
    if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end()) {
      return Error(ErrorCode::kInvalidArgument, "--sweep {}: {} is given twice", text, v);
    }
    axis.values.push_back(std::move(v));
    pos = comma + 1;
  }
  return axis;
}

// The lines a curve prints (one curve of a file, or the file itself).
void PrintCurve(const nlohmann::json& j, const std::string& prefix) {
  std::printf("%sswept       %s, crossbars %lld..%lld (every operator at once: %lld)\n", prefix.c_str(),
              j.value("pu", std::string()).c_str(), static_cast<long long>(j["crossbars_range"][0].get<int64_t>()),
              static_cast<long long>(j["crossbars_range"][1].get<int64_t>()),
              static_cast<long long>(j["crossbars_for_all"].get<int64_t>()));
  std::printf("%scpu-only    %.1f µs\n", prefix.c_str(), j["cpu_only_us"].get<double>());
  const bool stream = j.value("objective", std::string()) == "throughput";
  const std::string key = stream ? "initiation_interval_us" : "makespan_us";
  for (const auto& bp : j["breakpoints"]) {
    std::printf("%sbreakpoint  %6lld crossbars  %12.1f µs%s  %6.2fx  %s", prefix.c_str(),
                static_cast<long long>(bp["crossbars"].get<int64_t>()), bp[key].get<double>(), stream ? " II" : "",
                bp["speedup"].is_null() ? 0.0 : bp["speedup"].get<double>(), bp["status"].get<std::string>().c_str());
    if (stream) std::printf("  (%.1f inputs/s, one input %.1f µs)", 1e6 / bp[key].get<double>(), bp["latency_us"].get<double>());
    std::printf("\n");
  }
  for (const char* question : {"min_crossbars_for_speedup", "min_crossbars_for_makespan"}) {
    if (!j.contains(question)) continue;
    const auto& a = j[question];
    const std::string what = fmt::format("{:.2f}x ({:.1f} µs{})", a["speedup"].get<double>(),
                                         a["target_" + key].get<double>(), stream ? " II" : "");
    if (a["crossbars"].is_null()) {
      std::printf("%sfewest      %s: %s\n", prefix.c_str(), what.c_str(), a["status"].get<std::string>().c_str());
    } else {
      std::printf("%sfewest      %s first at %lld crossbars (%s)\n", prefix.c_str(), what.c_str(),
                  static_cast<long long>(a["crossbars"].get<int64_t>()), a["status"].get<std::string>().c_str());
    }
  }
  if (j.contains("saturation") && !j["saturation"].is_null()) {
    std::printf("%ssaturation  %lld crossbars (%s)\n", prefix.c_str(),
                static_cast<long long>(j["saturation"]["crossbars"].get<int64_t>()),
                j["saturation"]["status"].get<std::string>().c_str());
  }
  if (j.contains("max_mvm_latency_for_speedup")) {
    const auto& a = j["max_mvm_latency_for_speedup"];
    if (a["mvm_latency_ns"].is_null()) {
      std::printf("%smvm        %.2fx at %lld crossbars: %s\n", prefix.c_str(), a["speedup"].get<double>(),
                  static_cast<long long>(a["crossbars"].get<int64_t>()), a["status"].get<std::string>().c_str());
    } else {
      std::printf("%smvm        %.2fx at %lld crossbars up to %.4g ns MVM latency (%s)\n", prefix.c_str(),
                  a["speedup"].get<double>(), static_cast<long long>(a["crossbars"].get<int64_t>()),
                  a["mvm_latency_ns"].get<double>(), a["status"].get<std::string>().c_str());
    }
  }
  if (j.contains("pareto")) {
    const auto& pf = j["pareto"];
    for (const auto& pt : pf["points"]) {
      if (stream) {
        std::printf("%spareto      %12.1f µs II  %12.1f µs one input  %s\n", prefix.c_str(),
                    pt["initiation_interval_us"].get<double>(), pt["latency_us"].get<double>(),
                    pt["status"].get<std::string>().c_str());
        continue;
      }
      std::printf("%spareto      %12.1f µs  %14.1f µJ  %s\n", prefix.c_str(), pt["makespan_us"].get<double>(),
                  pt["energy_uj"].get<double>(), pt["status"].get<std::string>().c_str());
    }
    std::printf("%spareto      %zu points at %lld crossbars, %s (%d solves, %.2f s)\n", prefix.c_str(),
                pf["points"].size(), static_cast<long long>(pf["crossbars"].get<int64_t>()),
                pf["complete"].get<bool>() ? "complete" : "not complete", pf["solves"].get<int>(),
                pf["seconds"].get<double>());
  }
  std::printf("%ssolver      exact search: %s, %.2f s, %lld nodes\n", prefix.c_str(),
              j["solver"]["termination"].get<std::string>().c_str(), j["solver"]["seconds"].get<double>(),
              static_cast<long long>(j["solver"]["nodes"].get<int64_t>()));
}

// The flags of `hetplan frontier`.
struct Opts {
  ModelOptions model;
  ProfilingFlags profiling;
  std::string platform = "klein-arm";
  std::vector<std::string> sets;
  std::string costs, pu, range, out, csv, schedules, sweep, objective = "latency";
  double time_limit = 600, gap = 1e-4;
  int threads = 0;
  int64_t search_nodes = ExactOptions{}.node_limit;
  std::optional<double> speedup, makespan, mvm_speedup;
  bool saturation = false, pareto = false;
  int pareto_points = 64;
};

// The FrontierSpec the flags give; errors name the flag.
Result<FrontierSpec> MakeSpec(const Opts& o) {
  FrontierSpec spec;
  spec.pu = o.pu;
  auto objective = ParseObjective(o.objective);
  if (!objective.ok()) return objective.status();
  spec.objective = *objective;
  if (Status st = ParseRange(o.range, &spec); !st.ok()) return st;
  if (!o.sweep.empty()) {
    auto axis = ParseAxis(o.sweep);
    if (!axis.ok()) return axis.status();
    spec.axis = *axis;
  }
  spec.options.time_limit_s = o.time_limit;
  spec.options.relative_gap = o.gap;
  spec.options.threads = o.threads;
  spec.options.exact.node_limit = o.search_nodes;
  spec.min_crossbars_for_speedup = o.speedup;
  spec.min_crossbars_for_makespan_us = o.makespan;
  spec.saturation = o.saturation;
  spec.pareto = o.pareto;
  spec.pareto_points = o.pareto_points;
  spec.max_mvm_latency_for_speedup = o.mvm_speedup;
  if (o.search_nodes < 0) {
    return Error(ErrorCode::kInvalidArgument, "--search-nodes {}: a node count is ≥ 0", o.search_nodes);
  }
  return spec;
}

}  // namespace

void RegisterFrontier(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "frontier", "The optimal makespan (or a stream's II) for every crossbar budget, with all breakpoints");
  auto o = std::make_shared<Opts>();
  AddModelOptions(sub, &o->model);
  sub->add_option("--platform", o->platform, "Preset name (klein-arm, klein-x86, soc-example) or a YAML path")
      ->default_val("klein-arm");
  sub->add_option("--set", o->sets, "Override a platform field, PU.KEY=VALUE (repeatable)");
  sub->add_option("--costs", o->costs, "Cost table (CSV/JSON) for PUs with cost: table (or instead of profiling)");
  sub->add_option("--pu", o->pu, "The spatial PU whose crossbars are swept (default: the only one)");
  sub->add_option("--objective", o->objective,
                  "latency (one inference's makespan) | throughput (a stream's II, copies of weights counted: "
                  "docs/throughput.md)")
      ->default_val(o->objective);
  sub->add_option("--crossbars", o->range, "Budgets reported, LO:HI (default 0: to saturation)");
  sub->add_option("--sweep", o->sweep,
                  "A second axis: one curve per value of a platform field, PU.KEY=V1,V2,… "
                  "(e.g. cim.mvm_latency_ns=50,100,500,1000)");
  sub->add_option("--time-limit", o->time_limit,
                  "Time limit in seconds per curve (and again for --pareto and for the MVM question)")
      ->default_val(o->time_limit);
  sub->add_option("--gap", o->gap, "Relative gap each breakpoint is proven within")->default_val(o->gap);
  sub->add_option("--threads", o->threads, "Search threads (0 = all cores)")->default_val(0);
  sub->add_option("--search-nodes", o->search_nodes, "Nodes before the search resumes without a limit")
      ->default_val(o->search_nodes);
  sub->add_option("--min-crossbars-for-speedup", o->speedup,
                  "Also answer: the fewest crossbars whose plan is this many times faster than CPU-only");
  sub->add_option("--min-crossbars-for-makespan", o->makespan,
                  "Also answer: the fewest crossbars whose plan takes at most this many µs");
  sub->add_flag("--saturation", o->saturation, "Also answer: the budget beyond which nothing improves");
  sub->add_option("--max-mvm-latency-for-speedup", o->mvm_speedup,
                  "Also answer: the largest MVM latency (ns) at which the plan at the platform's crossbars is still "
                  "this many times faster than CPU-only");
  sub->add_flag("--pareto", o->pareto,
                "Also compute the latency–energy Pareto front at the platform's crossbars (every PU needs power_w); "
                "with --objective throughput the (II, latency) front");
  sub->add_option("--pareto-points", o->pareto_points, "At most this many Pareto points")
      ->default_val(o->pareto_points);
  sub->add_option("--out", o->out, "Frontier file (JSON, docs/frontier.md)")->required();
  sub->add_option("--csv", o->csv, "The breakpoints as CSV");
  sub->add_option("--schedules", o->schedules, "Directory for each breakpoint's schedule file (validated)");
  AddProfilingFlags(sub, &o->profiling);
  AddBoundaryCostFlag(sub, &o->profiling);
  Register(sub, [o]() -> int {
    auto spec = MakeSpec(*o);
    if (!spec.ok()) return ReportError(spec.status());
    auto io = MakeImportOptions(o->model);
    if (!io.ok()) return ReportError(io.status());
    const PlanInputs in = MakePlanInputs(o->model.path, *io, o->platform, o->sets, o->costs, o->profiling);
    const bool tty = isatty(fileno(stderr));
    auto f = PlanFrontiers(in, *spec, [tty](const std::string& line) {
      if (tty) std::fprintf(stderr, "%s\n", line.c_str());
    });
    if (!f.ok()) return ReportError(f.status());
    // Everything is computed and validated before anything is written.
    if (!o->schedules.empty()) {
      for (FrontierScheduleFile& file : f->files) {
        const std::filesystem::path path = std::filesystem::path(o->schedules) / file.name;
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec) {
          return ReportError(Status(ErrorCode::kIoError,
                                    fmt::format("--schedules {}: cannot create the directory {}: {}", o->schedules,
                                                path.parent_path().string(), ec.message())));
        }
        if (Status st = WriteFileAtomic(path.string(), file.file.dump(2) + "\n"); !st.ok()) return ReportError(st);
        f->json[nlohmann::json::json_pointer(file.pointer)]["schedule_file"] = path.string();
      }
    }
    if (Status st = WriteFileAtomic(o->out, f->json.dump(2) + "\n"); !st.ok()) return ReportError(st);
    if (!o->csv.empty()) {
      if (Status st = WriteFileAtomic(o->csv, f->csv); !st.ok()) return ReportError(st);
    }
    const nlohmann::json& j = f->json;
    std::printf("model       %s (%lld operators)\n", o->model.path.c_str(),
                static_cast<long long>(j["model"]["operators"].get<int64_t>()));
    if (j.contains("curves")) {
      for (const nlohmann::json& c : j["curves"]) {
        std::printf("curve       %s = %s\n", j["axis"]["key"].get<std::string>().c_str(), c["value"].dump().c_str());
        nlohmann::json shown = c;
        shown["pu"] = j["pu"];
        shown["objective"] = j["objective"];
        PrintCurve(shown, "  ");
      }
    } else {
      PrintCurve(j, "");
    }
    std::printf("wrote       %s\n", o->out.c_str());
    return 0;
  });
}

}  // namespace hetplan::cli
