// Cost-source selection, shared by every command and by dse: which table or
// model prices each PU of a platform for a model. `profile` PUs are measured
// with ONNX Runtime (through the on-disk profile cache) unless a user table
// covers them; `table` PUs read the user's table or the PU's own `table:`;
// analytical PUs need nothing. Each choice is noted the same way everywhere.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hetplan/cost/build.h"
#include "hetplan/cost/corun_profiler.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"

namespace hetplan {

// Where profiles are cached on disk unless --cache-dir says otherwise.
inline constexpr const char* kDefaultProfileCacheDir = ".cache/hetplan";

struct CostInputs {
  std::string costs_path;  // --costs TABLE: for `table` PUs, and instead of profiling where it covers a PU
  // The same as costs_path for a table already in memory (the Python
  // bindings' costs=); takes precedence over costs_path. Not owned.
  const CostTable* table = nullptr;
  std::string table_label = "cost table";  // names `table` in errors
  ProfileOptions profile;  // for `profile` PUs; threads, provider and cores come from each PU, progress is ignored
  // With two or more `profile` PUs: measure what they cost each other by
  // co-running them (cost/corun_profiler.h; cached next to the profiles),
  // and add its slowdown, coexec and transfer rows to each one's table.
  bool corun = true;
  // Charge each measured PU's fitted boundary cost on every edge into it from
  // another PU (--boundary-cost fitted; CostSources::charge_boundary).
  bool charge_boundary = false;
  CoRunOptions corun_options;  // cache_dir and progress are taken from `profile` and `progress`
  // Called while a PU is profiled, with its name (from the calling thread).
  std::function<void(const std::string& pu, int done, int total)> progress;
  // Called as each stage of a PU's profile starts (ProfileOptions::stage).
  std::function<void(const std::string& pu, const std::string& stage, double seconds_left)> stage;
};

// Tables already measured or read, by key, so that a sweep measures each
// (model, PU setting) once and reads each user table once. Not thread-safe:
// fill it before the points run, then only read it.
class TableCache {
 public:
  const CostTable* Find(const std::string& key) const;
  const CostTable& Put(const std::string& key, CostTable table);

 private:
  std::map<std::string, CostTable> tables_;
};

struct ResolvedCosts {
  CostSources sources;                 // per PU name
  std::vector<std::string> notes;      // deterministic: they go into the schedule file
  std::vector<std::string> run_notes;  // about this run only (profile cache hit/miss): printed, not stored
  // PUs measured by this call (not found in `cache`): for progress reports.
  struct Profiled {
    std::string pu;
    int threads = 1;
    std::string cache;  // "hit", "miss" or "off"
    double seconds = 0;
  };
  std::vector<Profiled> profiled;
};

// The PU `hetplan profile --platform` measures: the one called `pu_name`
// when it is not empty, else the first PU with `cost: profile`. Error when
// that PU does not take its costs from `cost: profile` (or is absent).
Result<const ProcessingUnit*> ProfiledPu(const Platform& platform, const std::string& pu_name);

// The cost sources of `platform`'s PUs for `model`. Errors: a table that does
// not match the model (named), a profiling failure. With `cache`, tables are
// looked up there first and stored there.
Result<ResolvedCosts> ResolveCosts(const LoadedModel& model, const Platform& platform, const CostInputs& in,
                                   TableCache* cache = nullptr);

}  // namespace hetplan
