// `hetplan profile`: measures every operator's host cost with ONNX Runtime
// and writes the cost table (docs/cost-table-format.md).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "hetplan/app/costs.h"
#include "hetplan/platform/platform.h"
#include "cli/model_options.h"
#include "hetplan/cost/profiler.h"

namespace hetplan::cli {

namespace {

std::string Ms(double us) { return fmt::format("{:.3f} ms", us / 1000.0); }

// The value of `key` in the table's metadata, empty when absent.
std::string Meta(const CostTable& table, const char* key) {
  auto it = table.meta.find(key);
  return it == table.meta.end() ? std::string() : it->second;
}

// What the profile measured: the whole model against the sum of its
// operators, the in-context breakdown, the boundary fit and the drift.
std::string Summary(const CostTable& table, const LoadedModel& model, const std::string& pu) {
  auto meta = [&](const char* key) { return Meta(table, key); };
  auto num = [&](const char* key) { return std::strtod(meta(key).c_str(), nullptr); };
  double sum_us = 0, planned_us = 0;
  for (const OpCost& c : table.ops) {
    sum_us += c.exec_us;
    planned_us += c.PlannedUs();
  }
  std::string out;
  out += fmt::format("model          {} ({} operators, fusion {})\n", model.path, model.graph.size(),
                     meta("fusion"));
  out += fmt::format("host           {} · {} · {} thread{} · {}\n", meta("host"), meta("cpu"),
                     meta("threads"), meta("threads") == "1" ? "" : "s", meta("runtime"));
  if (table.model_median_us) {
    out += fmt::format("whole model    {} median (p10 {}, p90 {}; {} runs)\n", Ms(*table.model_median_us),
                       Ms(table.model_p10_us.value_or(0)), Ms(table.model_p90_us.value_or(0)),
                       meta("model_runs"));
    if (meta("runtime").rfind("openvino", 0) == 0) {
      out += fmt::format("sum of ops     {} (OpenVINO's per-node means over the same {} runs, device {}{})\n",
                         Ms(sum_us), meta("runs"), meta("device"),
                         meta("precision").empty() ? std::string() : ", precision " + meta("precision"));
      out += fmt::format("nodes          {} executed; of {} ONNX nodes {} named by them, {} given to them through "
                         "the graph; {} executed nodes split across operators\n",
                         meta("executed_nodes"), meta("onnx_nodes"), meta("onnx_nodes_named"),
                         meta("onnx_nodes_attributed"), meta("executed_nodes_split"));
    } else {
      out += fmt::format("sum of ops     {} (medians of {} runs each)\n", Ms(sum_us), meta("runs"));
    }
    out += fmt::format("relative error {:+.1f} % (sum of operators vs whole model)\n",
                       (sum_us / *table.model_median_us - 1.0) * 100.0);
    if (!meta("in_context_run_us").empty()) {
      // The breakdown of one Run with ORT's profiler on (medians), and what
      // the planners charge: kernels in context plus the executor's share.
      out += fmt::format("in context     Run {} = kernels {} + executor {} ({:.2f} µs per kernel, {} kernels)"
                         " + outside model_run {}\n",
                         Ms(num("in_context_wall_us")), Ms(num("in_context_kernel_sum_us")),
                         Ms(num("in_context_run_us") - num("in_context_kernel_sum_us")),
                         num("framework_per_kernel_us"), meta("in_context_kernels"), Ms(num("run_overhead_us")));
      out += fmt::format("planned        {} ({:+.1f} % vs whole model): the time the planners charge\n",
                         Ms(planned_us), (planned_us / *table.model_median_us - 1.0) * 100.0);
    }
  }
  if (!meta("in_context_unmapped_share").empty()) {
    out += fmt::format("in context     {:.1f} % of kernel time not attributed to an operator\n",
                       num("in_context_unmapped_share") * 100.0);
  } else if (!meta("in_context_error").empty()) {
    out += fmt::format("in context     not measured: {}\n", meta("in_context_error"));
  }
  if (auto b = table.boundary_us.find(pu); b != table.boundary_us.end()) {
    const std::string points = meta("boundary_points");
    out += fmt::format("boundary       {:.1f} µs per segment (fit of {} split executions, R² {:.3f}; "
                       "segments:pass µs {})\n",
                       b->second, std::count(points.begin(), points.end(), ':'),
                       num("boundary_r2"), points);
  }
  if (std::string mem = ProfileMemoryText(table); !mem.empty()) out += fmt::format("memory         {}\n", mem);
  if (!meta("memory_warning").empty()) out += fmt::format("memory         warning: {}\n", meta("memory_warning"));
  if (!meta("boundary_memory").empty()) out += fmt::format("boundary       {}\n", meta("boundary_memory"));
  if (!meta("boundary_skipped").empty()) out += fmt::format("boundary       not fitted: {}\n", meta("boundary_skipped"));
  if (!meta("model_drift").empty()) {
    out += fmt::format("drift          {:+.1f} % (the whole model at the end of the profile, {}, against its start)"
                       "{}\n",
                       num("model_drift") * 100.0,
                       Ms(num("model_end_median_us")),
                       meta("cpu_steal_share").empty()
                           ? std::string()
                           : fmt::format("; CPU steal {:.1f} %",
                                         num("cpu_steal_share") * 100.0));
  }
  return out;
}

}  // namespace

void RegisterProfile(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "profile", "Measure each operator's cost on this host with ONNX Runtime (or OpenVINO: runtime: openvino); write a cost table");
  struct Opts {
    ModelOptions model;
    std::string pu = "cpu";
    std::string platform;
    std::vector<std::string> sets;
    int threads = 1;
    ProcessingUnit runtime;  // the chosen PU's ORT configuration (default: CPU, not pinned)
    ProfilingFlags profiling;
    std::string out, json;
  };
  auto opts = std::make_shared<Opts>();
  AddModelOptions(sub, &opts->model);
  auto* pu_opt = sub->add_option("--pu", opts->pu, "Name of the PU the table is for (as in the platform)")
                     ->default_val("cpu");
  sub->add_option("--platform", opts->platform,
                  "Platform (preset or YAML): profiles its first `cost: profile` PU with that PU's threads");
  sub->add_option("--set", opts->sets, "Override a platform field, PU.KEY=VALUE (repeatable)");
  auto* threads_opt = sub->add_option("--threads", opts->threads, "ONNX Runtime intra-op threads")
                          ->default_val(1)
                          ->check(CLI::Range(1, 1024));
  AddProfilingFlags(sub, &opts->profiling);
  sub->add_option("--out", opts->out, "Cost table to write (CSV)")->required();
  sub->add_option("--json", opts->json, "Also write the table as JSON");
  Register(sub, [opts, pu_opt, threads_opt]() -> int {
    const auto start = std::chrono::steady_clock::now();
    if (!opts->platform.empty()) {
      auto platform = LoadPlatform(opts->platform, opts->sets);
      if (!platform.ok()) return ReportError(platform.status());
      auto chosen = ProfiledPu(*platform, pu_opt->count() > 0 ? opts->pu : std::string());
      if (!chosen.ok()) return ReportError(chosen.status());
      opts->pu = (*chosen)->name;
      if (threads_opt->count() == 0) opts->threads = (*chosen)->threads;
      if (Status st = CheckPuRuntime(**chosen, fmt::format("{}: PU {}", platform->source, (*chosen)->name));
          !st.ok()) {
        return ReportError(st);
      }
      opts->runtime = **chosen;  // profiled as it will run: provider, options, cores
    }
    auto model = LoadModel(opts->model);
    if (!model.ok()) return ReportError(model.status());
    ProfileOptions po = ForPu(MakeProfileOptions(opts->profiling), opts->runtime);
    po.threads = opts->threads;
    auto progress = std::make_shared<ProfileProgress>(isatty(fileno(stderr)) != 0);
    po.progress = [progress, pu = opts->pu](int done, int total) { progress->Operators(pu, done, total); };
    po.stage = [progress, pu = opts->pu](const std::string& what, double left) { progress->Stage(pu, what, left); };
    auto table = ProfileOperators(*model, opts->pu, po);
    progress->Clear();
    if (!table.ok()) return ReportError(table.status());
    Status st = SaveCostTable(*table, opts->out, opts->json);
    if (!st.ok()) return ReportError(st);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::string out = Summary(*table, *model, opts->pu);
    if (std::string w = ProfileStabilityWarning(*table, opts->pu); !w.empty()) {
      std::fprintf(stderr, "warning: %s\n", w.c_str());
    }
    auto meta = [&](const char* key) { return Meta(*table, key); };
    std::string cache = meta("cache");
    if (cache == "hit" || cache == "miss") cache += " (" + meta("cache_file") + ")";
    if (!meta("cache_error").empty()) cache += "; not written: " + meta("cache_error");
    out += fmt::format("cache          {}\n", cache);
    out += fmt::format("wall time      {:.1f} s\n", wall_s);
    out += fmt::format("wrote          {}{}\n", opts->out, opts->json.empty() ? "" : ", " + opts->json);
    std::fputs(out.c_str(), stdout);
    return 0;
  });
}

}  // namespace hetplan::cli
