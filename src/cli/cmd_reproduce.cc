// `hetplan reproduce [--out reproduce/] [--quick]`: both papers' evaluations
// for the zoo models on this machine, profiling included (docs/dse.md).
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "hetplan/dse/reproduce.h"

namespace hetplan::cli {

// The progress bar of `hetplan dse` (cmd_dse.cc).
DseProgressFn TerminalProgress();

void RegisterReproduce(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "reproduce", "Regenerate the papers' grids, baselines, figures and report for the zoo models on this machine");
  auto o = std::make_shared<ReproduceOptions>();
  sub->add_option("--out", o->out_dir, "Output folder")->default_val("reproduce");
  sub->add_flag("--quick", o->quick, "A 2 x 2 grid on fewer models, 5 s ILP limit, 20 profiling runs: a smoke run");
  sub->add_flag("--resume", o->resume, "Keep the points already in the output folder's results files");
  sub->add_option("--models-dir", o->models_dir,
                  "Zoo folder (default: the build's zoo, " HETPLAN_DEFAULT_ZOO_DIR "); missing models are exported");
  sub->add_option("--python", o->python, "Python with torch/torchvision/onnx for exporting the zoo")
      ->default_val("/usr/bin/python3");
  sub->add_option("--time-limit", o->time_limit_s, "ILP time limit per point, seconds (default 10, quick 5)");
  sub->add_option("--solver", o->solver, MethodChoicesHelp("The grid's partitioning method", {"exact", "mip"}))
      ->default_val("exact");
  auto formulation = std::make_shared<std::string>();
  sub->add_option("--formulation", *formulation, "Old spelling: strong = --solver exact, paper = --solver mip");
  sub->add_option("--jobs", o->jobs, "Worker threads (0 = all cores)")->default_val(0);
  sub->add_option("--cache-dir", o->cache_dir, "Profile cache folder")->default_val(kDefaultProfileCacheDir);
  sub->add_option("--precision", o->precision,
                  "int8: the INT8 zoo (*_int8), as the CIM paper ran its models; fp32: the float zoo")
      ->default_val("int8")
      ->check(CLI::IsMember({"int8", "fp32"}));
  auto fusion = std::make_shared<std::string>("activation");
  sub->add_option("--fusion", *fusion,
                  "Operator granularity: activation (one ONNX Runtime kernel per operator, the paper's view) or "
                  "none (one operator per ONNX node)")
      ->default_val("activation")
      ->check(CLI::IsMember({"none", "activation"}));
  Register(sub, [o, formulation, fusion]() -> int {
    ReproduceOptions opts = *o;
    auto level = ParseFusionLevel(*fusion);
    if (!level.ok()) return ReportError(level.status());
    opts.fusion = *level;
    auto solver = ResolveSolverFlag(opts.solver, *formulation);
    if (!solver.ok()) return ReportError(solver.status());
    opts.solver = *solver;
    opts.progress = TerminalProgress();
    opts.stage = [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    };
    auto r = Reproduce(opts);
    if (!r.ok()) {
      if (isatty(fileno(stderr))) std::fprintf(stderr, "\n");
      return ReportError(r.status());
    }
    std::printf("report    %s\n          %s\n", r->report_html.c_str(), r->report_md.c_str());
    std::printf("wall      %.1f s (%.1f min) on %s, all stages included\n", r->wall_s, r->wall_s / 60,
                r->klein.host_cpu.c_str());
    return r->klein.failed + r->bident.failed + r->pairs.failed > 0 ? 1 : 0;
  });
}

}  // namespace hetplan::cli
