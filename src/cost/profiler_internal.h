// What the co-run profiler (corun_profiler.cc) takes from the host profiler
// (ort_profiler.cc): operators cut out of the model exactly as they are
// profiled alone. Internal to the cost module.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/status.h"

namespace hetplan::cost_internal {

// The one-operator model of each of `op_ids` (serialised ModelProto), as
// ProfileOnnxRuntime times it.
Result<std::vector<std::string>> OperatorModels(const LoadedModel& m, const std::vector<int>& op_ids);

// The lines of a cache key (ProfileCacheKey, CoRunCacheKey) that name the
// model as measured (its hash, input shapes, fusion) and the machine (ORT
// version, CPU model, host name), each "key=value\n".
std::string ModelKeyText(const LoadedModel& m);
std::string MachineKeyText();

// <dir>/<key><ext>: where a profile's cache keeps a table (ext ".csv" or ".json").
inline std::filesystem::path CacheFile(const std::string& dir, const std::string& key, const char* ext) {
  return std::filesystem::path(dir) / (key + ext);
}

// The table cached at CacheFile(dir, key, ".json") when it reads back, was
// measured, and names this key and m's SHA-256; nullopt otherwise (missing,
// corrupt, foreign: measure again). Each profiler adds its own completeness check.
std::optional<CostTable> LoadCachedTable(const LoadedModel& m, const std::string& dir, const std::string& key);
// LoadCachedTable, used only when it is whole: it checks against m's graph,
// has the whole model's time and a row for every operator on `pu_name` (the
// host profilers' caches, ONNX Runtime's and OpenVINO's).
std::optional<CostTable> LoadWholeCachedTable(const LoadedModel& m, const std::string& pu_name, const std::string& dir,
                                              const std::string& key);

// Writes a freshly measured `t` to <dir>/<key>.csv and .json (a write error
// goes to meta cache_error, not to the caller) and sets meta cache_key,
// cache_file and cache ("miss"; "off" when `key` is empty: no caching).
void StoreInCache(const std::string& dir, const std::string& key, CostTable* t);

// "2026-12-01T19:56:10Z": when a table was measured (meta `created`).
std::string UtcNow();

// An empty opset-13 model (IR 8) with a named graph, for the profilers' own
// probes; and a float tensor of `n` elements as a graph input or output.
onnx::ModelProto SmallModel(const std::string& producer, const std::string& graph);
void AddFloatVector(onnx::ValueInfoProto* vi, const std::string& name, int64_t n);

// How the in-context shares were corrected for ORT's profiler: the µs taken
// off each kernel, then the factor applied to everything left.
struct InContextCorrection {
  double per_kernel_us = 0;
  double scale = 1;
};

// Corrects the profiled shares (per operator: kernel time `in_context`, the
// executor's share `framework`, its kernels `op_kernels`; operators without
// `in_context` are left alone) so that they add up to `plain_run_us`, the
// model_run of a Run without the profiler, where they add up to more with
// it. First the profiler's cost per event, min(`per_kernel_us`, excess /
// kernels), off every kernel, which falls on tiny kernels as on large ones:
// from the executor's share, then from the kernel's, never below 0. Then
// one factor ≤ 1 for what is left of the excess.
InContextCorrection CorrectInContext(double plain_run_us, double per_kernel_us, const std::vector<int>& op_kernels,
                                     std::vector<std::optional<double>>* in_context,
                                     std::vector<std::optional<double>>* framework);

}  // namespace hetplan::cost_internal
