// Options shared by the commands: the model, the profiler and the solver
// flags, each defined once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
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
  std::vector<std::string> samples;   // --sample-input NAME=FILE.npy
  int max_operators = 100000;
  double max_model_mib = 4096;  // larger files are refused before they are read
};

void AddModelOptions(CLI::App* sub, ModelOptions* o);
Result<ImportOptions> MakeImportOptions(const ModelOptions& o);
Result<LoadedModel> LoadModel(const ModelOptions& o);

// --warmup, --runs, --model-runs, --boundary-runs, --no-in-context,
// --cache-dir, --no-cache, --no-corun and the co-run profiler's: every
// command that profiles (profile, partition, map, frontier, dse) takes them.
struct ProfilingFlags {
  int warmup = 20;
  int runs = 200;
  std::optional<int> model_runs;     // unset: DefaultModelRuns(runs)
  std::optional<int> boundary_runs;  // unset: DefaultBoundaryRuns(runs)
  bool no_in_context = false;
  std::string cache_dir = kDefaultProfileCacheDir;
  bool no_cache = false;
  bool no_corun = false;
  // The co-run profiler's timed runs per block and rounds (CoRunOptions).
  int corun_runs = CoRunOptions{}.runs;
  int corun_rounds = CoRunOptions{}.rounds;
  std::string boundary_cost = "none";  // --boundary-cost none | fitted (planning commands only)
  std::string max_memory;  // --max-memory, e.g. 8G or 512M; empty: the profiler's default
};
// "8G", "1.5G", "512M", "64K" or a byte count; nullopt when not a size.
std::optional<int64_t> ParseByteSize(const std::string& text);
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
// Profiling progress on stderr. Each stage as a line, with the time the
// rest's runs will take ("profiling cpu: 49 operators, 2 warm-up and 10
// timed runs each (about 40 s of runs left)": the model's runs, not the
// sessions created, which count on small models); the operators done redrawn in place on a
// terminal, or every tenth of them as a line off one (a log, a pipe). Off a
// terminal only a profile that will take kQuietProfileS or more reports.
class ProfileProgress {
 public:
  static constexpr double kQuietProfileS = 2.0;
  explicit ProfileProgress(bool terminal);
  ~ProfileProgress() { Clear(); }
  void Stage(const std::string& pu, const std::string& what, double seconds_left);
  void Operators(const std::string& pu, int done, int total);
  void Clear();  // the redrawn line, before other output

 private:
  using Clock = std::chrono::steady_clock;
  void Draw(const std::string& text);
  bool terminal_, drawn_ = false, quiet_ = true;
  int last_tenth_ = -1;
  Clock::time_point ops_start_, last_;
};
// A ProfileProgress on stderr wired into `in` (progress and stage).
void ReportProfileProgress(CostInputs* in);

// --time-limit, --gap, --threads, --search-nodes, --no-warm-start,
// --solver-log, --mip-backend, --write-lp, --write-mps and the old --formulation.
struct SolveFlags {
  double time_limit = 600, gap = 1e-4;
  int threads = 0;
  int64_t search_nodes = ExactOptions{}.node_limit;
  bool no_warm_start = false, log = false;
  std::string write_lp, write_mps;
  std::string mip_backend = ToString(MipOptions{}.backend);
  std::string formulation;  // deprecated: strong | paper
  // Each flag by its SolveOptionTable() name, to tell a flag given from its default.
  std::vector<std::pair<std::string, const CLI::Option*>> options;
};
// `lp_export`: whether the command offers --write-lp/--write-mps.
void AddSolveFlags(CLI::App* sub, SolveFlags* f, bool lp_export);
// The options the flags give; with `record_given`, SolveOptions::given lists
// the flags the user typed, so that a method that ignores one refuses it
// (dse, which shares one SolveOptions among its methods, leaves it empty).
SolveOptions MakeSolveOptions(const SolveFlags& f, bool record_given = true);
// The method a --solver value names, with the old spellings (ilp, and
// --formulation strong|paper) mapped to today's; each old spelling prints a
// one-line notice on stderr. Unknown names are errors listing the methods.
Result<std::string> ResolveSolverFlag(const std::string& solver, const std::string& formulation);
// The help of a flag that chooses among `methods`, from the registry's own
// summaries ("exact: <summary> | mip: <summary>"), so that it says what each
// method does today.
std::string MethodChoicesHelp(const std::string& lead, const std::vector<std::string>& methods);

}  // namespace hetplan::cli
