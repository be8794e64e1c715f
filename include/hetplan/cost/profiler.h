// The host profiler: measures what each operator costs on this machine's CPU
// with ONNX Runtime (the CIM paper's §IV-A1; BIDENT's per-operator profiler
// for its CPU). Every operator is cut out of the model with its real shapes
// and constants, run alone, and timed (median of `runs` after `warmup`); the
// whole model is timed too, and (optionally) ORT's own profiler attributes
// kernel time to the operators inside the whole model. The result is a
// CostTable whose meta records how and where it was measured.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct ProfileOptions {
  int threads = 1;      // ORT intra-op threads (the CIM paper's host is single-core)
  // The rest of the PU's ONNX Runtime configuration (docs/platform-format.md):
  // the execution provider by hetplan's name and its options, and the cores
  // the measuring thread and ORT's intra-op threads are pinned to (empty: not
  // pinned), so that a PU is profiled as it will run.
  std::string provider = "cpu";
  std::map<std::string, std::string> provider_options;
  std::vector<int> cores;
  // The runtime that measures: "onnxruntime" (the above) or "openvino"
  // (ProfileOpenVino: `device`, with `provider_options` as its properties).
  std::string runtime = "onnxruntime";
  std::string device;
  int warmup = 20;      // untimed runs before timing (BIDENT: 20)
  int runs = 200;       // timed runs per operator (BIDENT: 200)
  // Timed runs of the whole model (with and without ORT's profiler); unset:
  // DefaultModelRuns(runs).
  std::optional<int> model_runs;
  bool in_context = true;  // also attribute kernel time inside the whole model
  // Timed passes of each split execution that the boundary cost is fitted
  // from (the model cut at random places into 1, 2, 4, … 64 segments); 0
  // skips them (no boundary row).
  std::optional<int> boundary_runs;  // unset: DefaultBoundaryRuns(runs)
  // The resident memory the profile stays under (bytes; 0: what hetplan
  // holds when it starts plus 60 % of the memory available then). Before
  // each stage the profiler estimates what its sessions will hold from the
  // model's tensors; over the budget, it leaves out the boundary fit's
  // largest cuts (or the fit), then the in-context run, and refuses a model
  // whose one whole-model session would not fit. The table's meta records
  // the budget, the estimate and the measured peak (memory_*).
  int64_t max_memory_bytes = 0;
  std::string cache_dir;   // empty = no cache
  // Called after each operator with (operators done, operators in all); from
  // the calling thread. Not called on a cache hit.
  std::function<void(int done, int total)> progress;
  // Called as each stage starts (the whole model, the operators, the end
  // check, the boundary fit) with what it measures and how many runs, and
  // the seconds the rest of the profile will take by the whole model's
  // median (negative before it is timed). Not called on a cache hit.
  std::function<void(const std::string& stage, double seconds_left)> stage;
};

// The whole-model and boundary repetitions that follow the per-operator
// budget `runs` when the user does not give them (runs 200: 50 and 10, the
// published defaults; runs 10: 5 and 1): a profile of a slow model costs
// about (warmup + runs) model inferences of operator runs, plus
// ProfileWholeModelRuns of the whole model.
int DefaultModelRuns(int runs);
int DefaultBoundaryRuns(int runs);
// `o`'s, or the default that follows its runs.
inline int ModelRuns(const ProfileOptions& o) { return o.model_runs.value_or(DefaultModelRuns(o.runs)); }
inline int BoundaryRuns(const ProfileOptions& o) { return o.boundary_runs.value_or(DefaultBoundaryRuns(o.runs)); }
// Whole-model inferences a profile of a model of `operators` operators makes
// besides the operators' runs: warm-up and timed runs plain and profiled,
// the end check, and each boundary cut's passes.
int ProfileWholeModelRuns(const ProfileOptions& o, int operators);

// Profiles every operator of `m` on the host CPU, naming the PU `pu_name`.
// With a cache_dir, a table measured earlier under the same key (model hash,
// input shapes, fusion, PU name, threads, warmup, runs, model_runs,
// in_context, ORT version, CPU model, host) is returned without running
// anything (meta cache=hit); a missing or unreadable cache file means
// measuring again (cache=miss) and rewriting it. Errors: bad options, a model
// or an operator ONNX Runtime cannot load or run (the message names the
// operator and quotes ORT). ORT exceptions never escape.
Result<CostTable> ProfileOnnxRuntime(const LoadedModel& m, const std::string& pu_name,
                                     const ProfileOptions& o);

// BIDENT's measurement with OpenVINO (docs/openvino.md): the whole model
// compiled on `o.device` with per-node counters on, warm-up then `runs`
// inferences; each executed node's mean time goes to the operators whose
// ONNX nodes it covers (its originalLayersNames, and the nodes no executed
// node names, through the graph), split by their work where it covers
// several. Every operator gets a row (0 µs where OpenVINO folded it away);
// the meta says how many ONNX nodes were named and attributed, how many
// executed nodes were split and the sum of operators against the whole
// model's median. No boundary fit, no in-context run, no memory budget.
// Cached like ProfileOnnxRuntime (the key adds the runtime, device, OpenVINO
// version and properties). Errors: no OpenVINO in this build, a model with
// external data, anything OpenVINO refuses (quoted in one line).
Result<CostTable> ProfileOpenVino(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o);

// ProfileOnnxRuntime or ProfileOpenVino, by `o.runtime`.
Result<CostTable> ProfileOperators(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o);

// `o` with the PU's threads, provider, provider options and cores.
ProfileOptions ForPu(ProfileOptions o, const ProcessingUnit& pu);

// Whether this machine can run `pu` as configured: its provider is in the
// installed ONNX Runtime (else one line naming it and the available ones)
// and its cores are ones this process may use; for runtime: openvino, that
// this build has OpenVINO and its device is on this machine. `where` names the PU in the
// message, e.g. "platforms/host-2core.yaml: pus[1] (cpu1)".
Status CheckPuRuntime(const ProcessingUnit& pu, const std::string& where);
// CheckPuRuntime on the PUs of `platform` named in `pus`: every provider
// first, then every PU's cores, each named "<source>: pus[i] (<name>)".
Status CheckPuRuntimes(const Platform& platform, const std::vector<std::string>& pus);

// The cache key and the files it names: <cache_dir>/<key>.json and .csv.
std::string ProfileCacheKey(const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o);

// Whether the machine kept its speed while `t` was profiled: one line naming
// `pu`, how much the whole model's time changed between the start and the
// end of the profile (meta model_drift) and the share of CPU time the
// hypervisor gave to other guests meanwhile (meta cpu_steal_share), when the
// change is beyond kProfileDriftLimit (and the end's median outside the
// start's p10–p90, so that a noisy tiny model is not called drifted) or the
// steal beyond kProfileStealLimit;
// empty otherwise, and for tables without those fields (older caches, tables
// not measured here).
inline constexpr double kProfileDriftLimit = 0.05;
inline constexpr double kProfileStealLimit = 0.02;
std::string ProfileStabilityWarning(const CostTable& t, const std::string& pu);

// What the profile held in memory, from its meta: "profile memory: peak 1.20
// GiB resident, budget 13.9 GiB (estimated: one whole-model session 210.0
// MiB, the boundary fit's cuts 612.0 MiB)"; "" for a table without it.
std::string ProfileMemoryText(const CostTable& t);

// "1.29.0"
std::string OnnxRuntimeVersion();
// The CPU's model name from /proc/cpuinfo ("model name", or on ARM
// "Hardware"/"Processor"/"CPU part"), "unknown" when there is none.
std::string CpuModelName();
// gethostname(), "unknown" on failure.
std::string HostName();

}  // namespace hetplan
