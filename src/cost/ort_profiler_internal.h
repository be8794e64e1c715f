// What the host profiler's sources share: ort_profiler.cc (the entry point,
// the whole model and each operator timed alone, the cache),
// ort_in_context.cc (the whole model under ONNX Runtime's profiler) and
// ort_model_parts.cc (operators and segments cut out of the model, and the
// boundary fit that runs the segments). Internal to the cost module; what the
// co-run profiler takes from them is in profiler_internal.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include "ort/session.h"
#include "hetplan/cost/cost_table.h"
#include "hetplan/cost/profiler.h"
#include "hetplan/graph/graph_index.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/status.h"

namespace hetplan::ort_profiler_internal {

inline constexpr uint64_t kSeed = 0x6865747061;  // "hetpa": inputs are the same every time

// --- statistics and sessions (ort_profiler.cc) --------------------------------

struct Stats {
  double median_us = 0, p10_us = 0, p90_us = 0;
};

Stats Summarise(const std::vector<double>& us);

// The session settings every measurement shares (the graph optimisation
// level: GraphOptimization in ort_profiler.cc says why).
Result<Ort::SessionOptions> MakeSessionOptions(const LoadedModel& m, const ProfileOptions& o);

// `warmup` untimed runs, then `runs` timed ones (µs each).
std::vector<double> TimeRuns(ort::Runner& r, int warmup, int runs);

// A meta value: the shortest text that reads back to the same double.
std::string DoubleText(double v);

// --- memory (profile_memory.cc) ---------------------------------------------------

// The default budget: what hetplan holds when profiling starts plus this
// share of the memory the kernel reports available (MemAvailable).
inline constexpr double kDefaultMemoryShare = 0.6;
// What ONNX Runtime's arena holds, as a multiple of the most activations
// alive at once: the first Run allocates them one by one (chunks rounded up
// as the arena grows), the second adds the memory pattern's one block and
// keeps both. Measured on a 512×512 dynamic-uint8 segmentation model: one
// whole-model session held 392 MiB after its second Run (259 after its
// first) for 97 MiB alive at once. Each session adds its kernels and graph.
inline constexpr double kArenaFactor = 4.0;
inline constexpr int64_t kSessionOverheadBytes = int64_t{2} << 20;
// How meta in_context_error begins when the budget, not ONNX Runtime, left
// the in-context run out (such a table is not cached).
inline constexpr std::string_view kLeftOutForMemory = "left out to stay under the memory budget";

std::optional<int64_t> AvailableMemoryBytes();  // /proc/meminfo MemAvailable
std::optional<int64_t> ResidentBytes();         // /proc/self/status VmRSS
std::optional<int64_t> PeakResidentBytes();     // /proc/self/status VmHWM
// o.max_memory_bytes, or the default above (the maximum when unknown).
int64_t MemoryBudgetBytes(const ProfileOptions& o);
// What one session running a part of `m` holds, estimated from the imported
// model's tensors, node by node (an operator's fused or quantization nodes
// hold tensors of their own): the weights it copies, its inputs and outputs
// (bound for its whole life), kArenaFactor × the most internal tensors alive
// at once, and kSessionOverheadBytes. Initializers read are the weights
// (param_bytes), not inputs. The model's tensor sizes and readers are
// indexed once; each part costs its own nodes and their readers.
class FootprintEstimator {
 public:
  explicit FootprintEstimator(const LoadedModel& m);  // `m` must outlive it
  // Operators `ops` (ids in topological order) as one session.
  int64_t Bytes(const std::vector<int>& ops) const;

 private:
  int64_t Size(const std::string& tensor) const;

  const LoadedModel& m_;
  std::unordered_map<std::string, int64_t> bytes_;          // static tensors' sizes
  std::unordered_map<std::string, std::vector<int>> readers_;  // tensor → nodes reading it
  std::unordered_set<std::string> graph_outputs_, initializers_;
};
std::string BytesText(int64_t bytes);  // "1.25 GiB", "310.0 MiB"

// --- cutting parts out of the model (ort_model_parts.cc) ----------------------

class OperatorExtractor {
 public:
  explicit OperatorExtractor(const LoadedModel& m);

  // The operator as a model of its own: its nodes in order, the constants
  // they read (initializers, and the Constant/Identity/constant-only nodes
  // that compute them: ORT folds those at session creation, so they cost
  // nothing at run time), its activation inputs as graph inputs with their
  // static shapes, its outputs as graph outputs.
  Result<std::string> Build(const Operator& op) const;

  // Operators `ops` (ids, in topological order) as one model, as Build does
  // for one: its outputs are what operators outside it or the graph read.
  // The profiler's split executions (MeasureBoundaries) run these.
  Result<std::string> BuildSegment(const OpGraph& g, const std::vector<int>& ops) const;

 private:
  // `op` names the part in errors; `known` has the static shapes of its
  // tensors; `outputs` become its graph outputs.
  Result<std::string> BuildPart(const Operator& op, const std::vector<int>& node_indices,
                                const std::vector<TensorInfo>& known, const std::vector<TensorInfo>& outputs,
                                const std::string& graph_name) const;

  // Element type from the model's value_info (shape inference ran on it);
  // static shape from the operator's TensorInfo, else from value_info.
  Status AddValueInfo(const Operator& op, const std::string& name, const std::vector<TensorInfo>& known,
                      onnx::ValueInfoProto* out) const;

  const onnx::ModelProto& model_;
  GraphProtoIndex index_;
  std::vector<bool> is_op_node_;
};

// --- the boundary fit (ort_model_parts.cc) ------------------------------------

// The cuts the boundary fit times: 1, 2, 4, … segments, at most 64 and at
// most one per operator.
int BoundaryCuts(int operators);
// Untimed passes of each split execution.
int BoundaryWarmup(const ProfileOptions& o);
// Passes of the split executions the boundary fit times, warm-up included.
int BoundaryPasses(const ProfileOptions& o, int operators);

// The boundary cost fitted from split executions, into `t`. The cuts are
// alive together; those with the most segments are left out while their
// estimated footprint exceeds `room_bytes` (meta boundary_memory says which
// and why), and the fit is skipped, with meta boundary_skipped, when fewer
// than two cuts fit.
// `samples`: the --sample-input arrays the model's inputs are fed (ReadSamples).
Status RecordBoundaryFit(Ort::Env& env, const LoadedModel& m, const std::string& pu_name, const ProfileOptions& o,
                         const OperatorExtractor& extractor, int64_t room_bytes,
                         const std::map<std::string, TensorData>& samples, CostTable* t);

// --- in context (ort_in_context.cc) -------------------------------------------

// What the whole model's profiled runs give each operator: its kernel time
// inside the model and its share of the executor's time between kernels.
struct InContextShares {
  std::vector<std::optional<double>> op_us, framework_us;
};

// The whole model with ORT's profiler on, in blocks alternating with the
// plain session `plain` (whose timed runs go to `plain_us`), corrected for
// the profiler's own cost. A failure is recorded in the meta, not returned:
// the per-operator times do not depend on it.
Status MeasureInContext(Ort::Env& env, const LoadedModel& m, const ProfileOptions& o, const std::string& whole,
                        const std::map<std::string, TensorData>& samples, ort::Runner& plain,
                        std::vector<double>* plain_us, InContextShares* in_context,
                        std::map<std::string, std::string>* meta);

}  // namespace hetplan::ort_profiler_internal
