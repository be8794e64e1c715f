// Design-space exploration (docs/dse.md): the cartesian product of models ×
// platforms × `--sweep` value lists × objectives × solvers, run in parallel,
// one JSON line per point appended to a results file as soon as the point
// finishes, resumable after a kill.
//
// Host costs are measured once per model (and per profiled-PU setting) before
// any point runs, sequentially, through the profile cache, so that no
// measurement shares the machine with a running point. Points then run on a
// pool of worker threads, each through the application layer (app/plan.h)
// with any registered method. Solves that go through CBC (Solver::UsesCbc:
// the paper's MIP, the exact search's energy objective) take turns in one
// "exclusive lane": the CBC driver serialises its calls process-wide anyway
// (CbcMain1 keeps global state), so a second CBC point could only wait inside
// the solver, where its wait would count as solve time. One CBC solve runs at
// a time with SolveOptions::threads CBC threads (0 = all cores) while the
// other workers run the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hetplan/cost/profiler.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/plan/options.h"
#include "hetplan/plan/problem.h"
#include "hetplan/util/status.h"

namespace hetplan {

// One `--sweep KEY=V1,V2,...` axis; KEY is a platform override key
// ("cim.crossbars", "link.cpu-cim.bandwidth_gbps", ...).
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};
// Parses "cim.crossbars=25,50,100"; errors name the text and the fix.
Result<SweepAxis> ParseSweep(std::string_view text);

struct DseSpec {
  std::vector<std::string> models;     // ONNX files
  std::vector<std::string> platforms;  // preset names or YAML paths, as given (they key the results)
  std::vector<std::string> overrides;  // `--set`, applied to every point before the sweep's
  std::vector<SweepAxis> sweeps;
  std::vector<std::string> solvers = {"exact"};  // any registered method (hetplan solvers); old names are mapped
  std::vector<Objective> objectives = {Objective::kLatency};
  std::optional<double> latency_cap_us;  // energy objective only
  ImportOptions import;
  ProfileOptions profile;     // warmup/runs/cache_dir; threads come from each PU; progress is ignored
  SolveOptions solve;         // time limit, gap, CBC threads of the exclusive lane, per-method options
  int jobs = 0;               // worker threads; 0 = std::thread::hardware_concurrency()
  std::string out_path;       // the results file (JSON lines)
  bool resume = false;        // keep the points already in out_path and run only the others
  std::string schedules_dir;  // when set, each point's schedule file is written there
  // Two-request methods (MethodInfo::requests == 2): false plans each model
  // with itself; true plans every unordered pair, a model with itself
  // included (BIDENT's pair study: its 19 configurations give 190 pairs).
  bool all_pairs = false;
  // --boundary-cost fitted: every point charges each measured PU's fitted
  // segment boundary on every edge into it from another PU (CostInputs::
  // charge_boundary). Part of each point's key, so a resumed sweep never mixes
  // the two settings. Two-request methods do not model it: refused.
  bool charge_boundary = false;
};

// A point of the product. `overrides` = the spec's, then one value per axis.
struct DsePoint {
  int model = 0;     // index into DseSpec::models
  int platform = 0;  // index into DseSpec::platforms
  std::vector<std::string> overrides;
  std::map<std::string, std::string> params;  // sweep key → value
  Objective objective = Objective::kLatency;
  std::string solver;
  int second = -1;  // two requests under all_pairs: the second model (> model); -1 = `model` again
};

// In a fixed order: model, platform, sweep axes (the first varies slowest),
// objective, solver.
std::vector<DsePoint> ExpandPoints(const DseSpec& spec);

// The resume key: model hash ("<first>+<second>" for a pair of two models),
// platform as given, overrides, solver, objective, then "|boundary=fitted"
// when the point charges the fitted segment boundary.
std::string PointKey(const std::string& model_sha256, const std::string& platform,
                     const std::vector<std::string>& overrides, const std::string& solver, Objective objective,
                     bool charge_boundary = false);

struct DseProgress {
  enum class Phase { kProfiling, kSolving, kDone };
  Phase phase = Phase::kProfiling;
  int done = 0;     // points finished in this run (profiling: models done)
  int total = 0;    // points to run in this run (profiling: models)
  int resumed = 0;  // points found in the results file and skipped
  double elapsed_s = 0;
  double eta_s = -1;    // < 0 when unknown
  std::string message;  // the point or model just finished
};
// Called from worker threads, one call at a time.
using DseProgressFn = std::function<void(const DseProgress&)>;

struct DseSummary {
  int points = 0;          // in the product
  int ran = 0;             // run now
  int resumed = 0;         // already in the file
  int failed = 0;          // status "error" or "invalid"
  int not_applicable = 0;  // the solver does not apply (e.g. single:cim, axonn without power)
  int time_limited = 0;    // a time limit ended the solve (status feasible / no_solution)
  double profile_s = 0;    // model loading and host profiling
  double solve_s = 0;      // the parallel phase
  double wall_s = 0;
  int jobs = 0;
  std::string host_cpu;
  std::vector<std::string> time_limited_points;  // "model platform overrides solver"
  std::vector<std::string> profile_notes;        // per model: cache hit/miss
  std::vector<std::string> notes;                // about this run (e.g. a results file that cannot be locked)
  // The sweep was stopped before every point ran: DseSpec::solve.interrupt
  // (the points not run, and any it cut short, which are not written, are
  // left for `resume`), or under MPI a signal (SIGTERM/SIGINT: the launcher
  // ending the job after a rank died, or the user; `unfinished` lists the
  // points in flight then).
  bool interrupted = false;

  // Under MPI (dse/mpi.h); one rank: the defaults.
  int ranks = 1;
  std::vector<std::string> rank_hosts;  // per rank: "host (N threads)"
  // Points not written because the rank holding them was lost (died, or
  // stopped answering) or the point overran its time limit; one line per
  // event, naming the rank and the points. `--resume` reruns them.
  std::vector<std::string> unfinished;
  int unfinished_points = 0;
  // Rank 0's traffic: messages received and sent (heartbeats included),
  // result messages from other ranks and their bytes, seconds its main
  // thread spent handling results and dealing points.
  int64_t messages_in = 0, messages_out = 0, results_in = 0, result_bytes = 0;
  double coordinator_busy_s = 0;
};

// Runs the sweep. With DseSpec::solve.interrupt set to true while it runs, the
// points running stop early and no new point starts (summary.interrupted).
// Errors (before any point runs): a missing model or
// platform, an override or sweep value the platform rejects (named), an
// unknown solver, an existing results file without `resume`, a results file
// locked by another running sweep, a profiling failure. A point that fails is
// an outcome, written as a line with status "error" (rerun on resume) — never
// an error of RunDse.
Result<DseSummary> RunDse(const DseSpec& spec, const DseProgressFn& progress = {});

// The results file: one JSON object per line. A line that does not parse (a
// sweep killed mid-write) is counted in bad_lines and skipped.
struct DseResults {
  std::vector<nlohmann::json> rows;
  int bad_lines = 0;
};
Result<DseResults> ReadDseResults(const std::string& path);

}  // namespace hetplan
