// `hetplan dse`: sweeps models × platforms × --sweep ranges × solvers in
// parallel, appending one JSON line per point (docs/dse.md).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "hetplan/app/plan.h"
#include "hetplan/dse/dse.h"
#include "hetplan/dse/mpi.h"
#include "hetplan/solve/solver.h"

namespace hetplan::cli {

std::string DseFormatDuration(double s) {
  if (!(s >= 0)) return "?";
  const long total = std::lround(s);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
}

// A one-line progress bar with ETA on stderr, redrawn in place; nothing when
// stderr is not a terminal.
DseProgressFn TerminalProgress() {
  if (!isatty(fileno(stderr))) return {};
  return [](const DseProgress& p) {
    constexpr int kWidth = 28;
    std::string line;
    if (p.phase == DseProgress::Phase::kProfiling) {
      line = fmt::format("[{}/{} models] {} — {}", p.done, p.total, DseFormatDuration(p.elapsed_s), p.message);
    } else {
      const double frac = p.total > 0 ? static_cast<double>(p.done) / p.total : 1.0;
      const int fill = static_cast<int>(frac * kWidth);
      std::string bar;
      for (int i = 0; i < kWidth; ++i) bar += i < fill ? "#" : ".";
      line = fmt::format("[{}] {}/{} {:3.0f}% {} elapsed, ETA {}{}", bar, p.done, p.total, 100 * frac,
                         DseFormatDuration(p.elapsed_s), p.eta_s < 0 ? std::string("?") : DseFormatDuration(p.eta_s),
                         p.resumed ? fmt::format(" ({} resumed)", p.resumed) : std::string());
      if (!p.message.empty()) line += " | " + p.message;
    }
    if (line.size() > 150) line = line.substr(0, 147) + "...";
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    if (p.phase == DseProgress::Phase::kDone) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

std::vector<std::string> DseSplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');) {
    if (!t.empty()) out.push_back(t);
  }
  return out;
}

// "baselines" expands to every one-request baseline; old spellings (ilp,
// pair:map, --formulation) are mapped with a notice.
Result<std::vector<std::string>> DseExpandSolvers(const std::vector<std::string>& names,
                                                  const std::string& formulation) {
  std::vector<std::string> out;
  for (const std::string& n : ExpandSolverNames(names)) {
    auto resolved = ResolveSolverName(n);
    if (!resolved.ok()) return Error(ErrorCode::kInvalidArgument, "dse: {}", resolved.status().message());
    const MethodFamily family = FindSolver(resolved->canonical)->info().family;
    const bool partitioner = family == MethodFamily::kExact || family == MethodFamily::kMip;
    HETPLAN_ASSIGN_OR_RETURN(std::string name, ResolveSolverFlag(n, partitioner ? formulation : ""));
    out.push_back(name);
  }
  return out;
}

void PrintDseSummary(const DseSummary& s, const std::string& out_path) {
  std::printf("points    %d (%d run now, %d already in %s)\n", s.points, s.ran, s.resumed, out_path.c_str());
  for (const std::string& n : s.profile_notes) std::printf("profile   %s\n", n.c_str());
  std::printf("outcomes  %d failed, %d not applicable, %d stopped by the time limit\n", s.failed, s.not_applicable,
              s.time_limited);
  for (const std::string& p : s.time_limited_points) std::printf("limit     %s\n", p.c_str());
  std::printf("host      %s, %d worker thread%s\n", s.host_cpu.c_str(), s.jobs, s.jobs == 1 ? "" : "s");
  if (s.ranks > 1) {
    std::printf("ranks     %d (MPI): rank 0 got %lld messages (%lld results, %.1f KiB), sent %lld, busy %.2f s\n",
                s.ranks, static_cast<long long>(s.messages_in), static_cast<long long>(s.results_in),
                s.result_bytes / 1024.0, static_cast<long long>(s.messages_out), s.coordinator_busy_s);
    for (const std::string& h : s.rank_hosts) std::printf("rank      %s\n", h.c_str());
  }
  for (const std::string& n : s.notes) std::printf("note      %s\n", n.c_str());
  std::printf("wall      %.1f s (loading + profiling %.1f s, points %.1f s)\n", s.wall_s, s.profile_s, s.solve_s);
}

// The points a run could not finish (a rank lost, a hung point, the job
// ended by a signal): each on stderr, then one error line. On stderr because
// a job being ended by its launcher has a second or so left, and stderr is
// not buffered.
int ReportUnfinished(const DseSummary& s) {
  for (const std::string& u : s.unfinished) std::fprintf(stderr, "hetplan: dse: %s\n", u.c_str());
  std::fprintf(stderr,
               "hetplan: error: dse: %d point%s not finished (%s); rerun the same command with --resume to run "
               "them\n",
               s.unfinished_points, s.unfinished_points == 1 ? " was" : "s were",
               s.interrupted ? "the job was ended by a signal" : "see the lines above");
  return 1;
}

// Under mpirun or srun: every rank runs this; rank 0 prints.
int RunDseUnderMpi(const MpiLaunch& launch, const DseSpec& spec, const std::string& arguments) {
  auto job = DseMpiJob::Init(launch);
  if (!job.ok()) return launch.rank == 0 ? ReportError(job.status()) : 2;
  DseMpiJob& j = **job;
  const bool coordinator = j.rank() == 0;
  auto summary = j.Run(spec, DseMpiOptionsFromEnvironment(arguments), coordinator ? TerminalProgress() : nullptr);
  if (!coordinator) return j.Finish(summary.ok() ? 0 : ReportError(summary.status()));
  if (!summary.ok()) {
    if (isatty(fileno(stderr))) std::fprintf(stderr, "\n");
    return j.Finish(ReportError(summary.status()));
  }
  if (summary->interrupted) {
    ReportUnfinished(*summary);
    return j.Finish(143);  // as a process ended by SIGTERM
  }
  PrintDseSummary(*summary, spec.out_path);
  std::printf("wrote     %s\n", spec.out_path.c_str());
  std::fflush(stdout);
  if (summary->unfinished_points > 0 || !summary->unfinished.empty()) return j.Finish(ReportUnfinished(*summary));
  return j.Finish(summary->failed > 0 ? 1 : 0);
}

void RegisterDse(CLI::App& app) {
  auto* sub = app.add_subcommand("dse", "Sweep models × platforms × parameter ranges × solvers into a results file");
  struct Opts {
    std::vector<std::string> models, platforms, sets, sweeps;
    std::string solvers = "exact", objectives = "latency", out, schedules, fusion = "none", pairs = "self";
    std::optional<double> latency_cap;
    ProfilingFlags profiling;
    SolveFlags solve;
    int jobs = 0;
    bool resume = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("models", o->models, "ONNX model files")->required();
  sub->add_option("--platform", o->platforms, "Platform preset or YAML (repeatable)")
      ->required()
      ->allow_extra_args(false);
  sub->add_option("--sweep", o->sweeps, "KEY=V1,V2,... swept over (repeatable), e.g. cim.crossbars=25,50,100,200")
      ->allow_extra_args(false);
  sub->add_option("--set", o->sets, "PU.KEY=VALUE applied to every point (repeatable)")->allow_extra_args(false);
  sub->add_option("--solvers", o->solvers,
                  "Comma list of methods (hetplan solvers lists them: exact, mip, map, map_parallel, "
                  "map_concurrent, greedy, ..., single:<pu>), or 'baselines' for every one-request baseline")
      ->default_val("exact");
  sub->add_option("--pairs", o->pairs,
                  "Two-request methods: 'self' plans each model with itself, 'all' every unordered pair of models, "
                  "each with itself included (BIDENT's pair study: n models, n(n+1)/2 pairs)")
      ->default_val("self")
      ->check(CLI::IsMember({"self", "all"}));
  sub->add_option("--objective", o->objectives, "latency, energy or latency,energy")->default_val("latency");
  sub->add_option("--latency-cap", o->latency_cap, "With the energy objective: makespan ≤ this (µs)");
  sub->add_option("--out", o->out, "Results file, one JSON line per point")->required();
  sub->add_flag("--resume", o->resume, "Keep the points already in --out and run the rest");
  sub->add_option("--jobs", o->jobs, "Worker threads (0 = all cores)")->default_val(0);
  AddSolveFlags(sub, &o->solve, /*lp_export=*/false);
  sub->add_option("--schedules", o->schedules, "Folder for each point's schedule file");
  sub->add_option("--fusion", o->fusion, "Operator fusion level: none | activation")->default_val("none");
  AddProfilingFlags(sub, &o->profiling);
  AddBoundaryCostFlag(sub, &o->profiling);
  Register(sub, [o, sub]() -> int {
    DseSpec spec;
    spec.models = o->models;
    spec.platforms = o->platforms;
    spec.overrides = o->sets;
    for (const std::string& s : o->sweeps) {
      auto axis = ParseSweep(s);
      if (!axis.ok()) return ReportError(axis.status());
      spec.sweeps.push_back(*axis);
    }
    auto solvers = DseExpandSolvers(DseSplitList(o->solvers), o->solve.formulation);
    if (!solvers.ok()) return ReportError(solvers.status());
    spec.solvers = *solvers;
    spec.objectives.clear();
    for (const std::string& name : DseSplitList(o->objectives)) {
      auto obj = ParseObjective(name);
      if (!obj.ok()) return ReportError(obj.status());
      spec.objectives.push_back(*obj);
    }
    spec.latency_cap_us = o->latency_cap;
    auto fusion = ParseFusionLevel(o->fusion);
    if (!fusion.ok()) return ReportError(fusion.status());
    spec.import.fusion = *fusion;
    spec.profile = MakeProfileOptions(o->profiling);
    spec.charge_boundary = o->profiling.boundary_cost == "fitted";
    spec.solve = MakeSolveOptions(o->solve, /*record_given=*/false);
    spec.jobs = o->jobs;
    spec.out_path = o->out;
    spec.resume = o->resume;
    spec.schedules_dir = o->schedules;
    spec.all_pairs = o->pairs == "all";
    if (const MpiLaunch launch = DetectMpiLaunch(); launch.launched) {
      return RunDseUnderMpi(launch, spec, sub->config_to_str(/*default_also=*/true, /*write_description=*/false));
    }
    auto summary = RunDse(spec, TerminalProgress());
    if (!summary.ok()) {
      if (isatty(fileno(stderr))) std::fprintf(stderr, "\n");
      return ReportError(summary.status());
    }
    PrintDseSummary(*summary, o->out);
    std::printf("wrote     %s\n", o->out.c_str());
    return summary->failed > 0 ? 1 : 0;
  });
}

}  // namespace hetplan::cli
