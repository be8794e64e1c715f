// Options shared by the commands: the model, the profiler and the solver
// flags, each defined once.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hetplan/app/costs.h"
#include "hetplan/app/plan.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/plan/options.h"

namespace hetplan::cli {

struct ModelOptions {
  std::string path;
  std::string fusion = "none";
  std::vector<std::string> shapes;
  std::vector<std::string> values;    // --value NAME=V[,V...]
  std::vector<std::string> branches;  // --branch NODE=then|else
  int max_operators = 100000;
  double max_model_mib = 4096;  // larger files are refused before they are read
};

void AddModelOptions(CLI::App* sub, ModelOptions* o);
Result<ImportOptions> MakeImportOptions(const ModelOptions& o);
Result<LoadedModel> LoadModel(const ModelOptions& o);

// --warmup, --runs, --cache-dir, --no-cache, --no-corun.
struct ProfilingFlags {
  int warmup = 20;
  int runs = 200;
  std::string cache_dir = kDefaultProfileCacheDir;
  bool no_cache = false;
  bool no_corun = false;
  // The co-run profiler's timed runs per block and rounds (CoRunOptions).
  int corun_runs = CoRunOptions{}.runs;
  int corun_rounds = CoRunOptions{}.rounds;
  std::string boundary_cost = "none";  // --boundary-cost none | fitted (planning commands only)
};
void AddProfilingFlags(CLI::App* sub, ProfilingFlags* f);
// --boundary-cost, for the planning commands (partition, map, frontier, dse).
void AddBoundaryCostFlag(CLI::App* sub, ProfilingFlags* f);
ProfileOptions MakeProfileOptions(const ProfilingFlags& f);

// --refine N and its --refine-* options (partition, map: docs/deployment.md#refine).
struct RefineFlags {
  std::optional<int> rounds;  // unset: plan once, no loop
  double tolerance = 0.05;
  int runs = 10, warmup = 2;
  std::string dir;
};
void AddRefineFlags(CLI::App* sub, RefineFlags* f);
// Plans through the loop, progress on stderr; `lines` gets one line per round
// and the verdict, for the command to print before its validation line.
Result<PlanOutput> PlanRefined(const PreparedProblem& pp, const PlanSpec& spec, const RefineFlags& f,
                               std::vector<std::string>* lines);
// The cost inputs the flags set: profile options and whether to co-run.
void ApplyProfilingFlags(const ProfilingFlags& f, CostInputs* in);
// The inputs every planning command (partition, map, frontier) builds from
// its flags, defined once so that no command drifts from the others'
// profiling flags: the model and its import options, the platform with its
// --set overrides, the --costs table, the profiler and co-run flags, and
// progress on a terminal.
PlanInputs MakePlanInputs(const std::string& model, const ImportOptions& io, const std::string& platform,
                          const std::vector<std::string>& sets, const std::string& costs, const ProfilingFlags& f);
// "profiling cpu 12/49 operators" redrawn on stderr; empty when stderr is not a terminal.
std::function<void(const std::string& pu, int done, int total)> TerminalProfileProgress();

// --time-limit, --gap, --threads, --search-nodes, --no-warm-start,
// --solver-log, --write-lp, --write-mps and the old --formulation.
struct SolveFlags {
  double time_limit = 600, gap = 1e-4;
  int threads = 0;
  int64_t search_nodes = ExactOptions{}.node_limit;
  bool no_warm_start = false, log = false;
  std::string write_lp, write_mps;
  std::string formulation;  // deprecated: strong | paper
};
// `lp_export`: whether the command offers --write-lp/--write-mps.
void AddSolveFlags(CLI::App* sub, SolveFlags* f, bool lp_export);
SolveOptions MakeSolveOptions(const SolveFlags& f);
// The method a --solver value names, with the old spellings (ilp, and
// --formulation strong|paper) mapped to today's; each old spelling prints a
// one-line notice on stderr. Unknown names are errors listing the methods.
Result<std::string> ResolveSolverFlag(const std::string& solver, const std::string& formulation);

}  // namespace hetplan::cli
