// `hetplan frontier`: the optimal makespan over every crossbar budget
// (docs/frontier.md). Parses flags; the work is PlanFrontier (app/frontier.h).
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

}  // namespace

void RegisterFrontier(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "frontier", "The optimal makespan for every crossbar budget, with all breakpoints, from one exact search");
  struct Opts {
    ModelOptions model;
    ProfilingFlags profiling;
    std::string platform = "klein-arm";
    std::vector<std::string> sets;
    std::string costs, pu, range, out, csv, schedules;
    double time_limit = 600, gap = 1e-4;
    int threads = 0;
    int64_t search_nodes = ExactOptions{}.node_limit;
    std::optional<double> speedup;
    bool saturation = false;
  };
  auto o = std::make_shared<Opts>();
  AddModelOptions(sub, &o->model);
  sub->add_option("--platform", o->platform, "Preset name (klein-arm, klein-x86, soc-example) or a YAML path")
      ->default_val("klein-arm");
  sub->add_option("--set", o->sets, "Override a platform field, PU.KEY=VALUE (repeatable)");
  sub->add_option("--costs", o->costs, "Cost table (CSV/JSON) for PUs with cost: table (or instead of profiling)");
  sub->add_option("--pu", o->pu, "The spatial PU whose crossbars are swept (default: the only one)");
  sub->add_option("--crossbars", o->range, "Budgets reported, LO:HI (default 0: to saturation)");
  sub->add_option("--time-limit", o->time_limit, "Time limit in seconds for the whole frontier")
      ->default_val(o->time_limit);
  sub->add_option("--gap", o->gap, "Relative gap each breakpoint is proven within")->default_val(o->gap);
  sub->add_option("--threads", o->threads, "Search threads (0 = all cores)")->default_val(0);
  sub->add_option("--search-nodes", o->search_nodes, "Nodes before the search resumes without a limit")
      ->default_val(o->search_nodes);
  sub->add_option("--min-crossbars-for-speedup", o->speedup,
                  "Also answer: the fewest crossbars whose plan is this many times faster than CPU-only");
  sub->add_flag("--saturation", o->saturation, "Also answer: the budget beyond which nothing improves");
  sub->add_option("--out", o->out, "Frontier file (JSON, docs/frontier.md)")->required();
  sub->add_option("--csv", o->csv, "The breakpoints as CSV");
  sub->add_option("--schedules", o->schedules, "Directory for each breakpoint's schedule file (validated)");
  AddProfilingFlags(sub, &o->profiling);
  Register(sub, [o]() -> int {
    FrontierSpec spec;
    spec.pu = o->pu;
    if (Status st = ParseRange(o->range, &spec); !st.ok()) return ReportError(st);
    spec.options.time_limit_s = o->time_limit;
    spec.options.relative_gap = o->gap;
    spec.options.threads = o->threads;
    spec.options.exact.node_limit = o->search_nodes;
    spec.min_crossbars_for_speedup = o->speedup;
    spec.saturation = o->saturation;
    if (o->search_nodes < 0) {
      return ReportError(Status(ErrorCode::kInvalidArgument,
                                fmt::format("--search-nodes {}: a node count is ≥ 0", o->search_nodes)));
    }
    PlanInputs in;
    in.model_path = o->model.path;
    auto io = MakeImportOptions(o->model);
    if (!io.ok()) return ReportError(io.status());
    in.import = *io;
    in.platform = o->platform;
    in.overrides = o->sets;
    in.costs.costs_path = o->costs;
    in.costs.profile = MakeProfileOptions(o->profiling);
    in.costs.progress = TerminalProfileProgress();
    auto pp = PrepareProblem(in);
    if (!pp.ok()) return ReportError(pp.status());
    auto f = PlanFrontier(pp->subject(), spec);
    if (!f.ok()) return ReportError(f.status());
    // Everything is computed and validated before anything is written.
    if (!o->schedules.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o->schedules, ec);
      if (ec) {
        return ReportError(Status(ErrorCode::kIoError, fmt::format("--schedules {}: cannot create the directory: {}",
                                                                   o->schedules, ec.message())));
      }
      for (size_t i = 0; i < f->schedules.size(); ++i) {
        const int64_t b = f->json["breakpoints"][i]["crossbars"].get<int64_t>();
        const std::string path = fmt::format("{}/crossbars_{}.json", o->schedules, b);
        if (Status st = WriteFileAtomic(path, f->schedules[i].dump(2) + "\n"); !st.ok()) return ReportError(st);
        f->json["breakpoints"][i]["schedule_file"] = path;
      }
    }
    if (Status st = WriteFileAtomic(o->out, f->json.dump(2) + "\n"); !st.ok()) return ReportError(st);
    if (!o->csv.empty()) {
      if (Status st = WriteFileAtomic(o->csv, f->csv); !st.ok()) return ReportError(st);
    }
    const nlohmann::json& j = f->json;
    std::printf("model       %s (%d operators)\n", pp->model.path.c_str(), pp->model.graph.size());
    std::printf("swept       %s, crossbars %lld..%lld (every operator at once: %lld)\n",
                j["pu"].get<std::string>().c_str(), static_cast<long long>(j["crossbars_range"][0].get<int64_t>()),
                static_cast<long long>(j["crossbars_range"][1].get<int64_t>()),
                static_cast<long long>(j["crossbars_for_all"].get<int64_t>()));
    std::printf("cpu-only    %.1f µs\n", f->cpu_only_us);
    for (const auto& bp : j["breakpoints"]) {
      std::printf("breakpoint  %6lld crossbars  %12.1f µs  %6.2fx  %s\n",
                  static_cast<long long>(bp["crossbars"].get<int64_t>()), bp["makespan_us"].get<double>(),
                  bp["speedup"].is_null() ? 0.0 : bp["speedup"].get<double>(),
                  bp["status"].get<std::string>().c_str());
    }
    if (j.contains("min_crossbars_for_speedup")) {
      const auto& a = j["min_crossbars_for_speedup"];
      if (a["crossbars"].is_null()) {
        std::printf("speedup     %.2fx: %s\n", a["speedup"].get<double>(), a["status"].get<std::string>().c_str());
      } else {
        std::printf("speedup     %.2fx first at %lld crossbars (%s)\n", a["speedup"].get<double>(),
                    static_cast<long long>(a["crossbars"].get<int64_t>()), a["status"].get<std::string>().c_str());
      }
    }
    if (j.contains("saturation") && !j["saturation"].is_null()) {
      std::printf("saturation  %lld crossbars (%s)\n", static_cast<long long>(j["saturation"]["crossbars"].get<int64_t>()),
                  j["saturation"]["status"].get<std::string>().c_str());
    }
    std::printf("solver      exact search: %s, %.2f s, %lld nodes\n", j["solver"]["termination"].get<std::string>().c_str(),
                j["solver"]["seconds"].get<double>(), static_cast<long long>(j["solver"]["nodes"].get<int64_t>()));
    std::printf("wrote       %s\n", o->out.c_str());
    return 0;
  });
}

}  // namespace hetplan::cli
