// What the co-run profiler (corun_profiler.cc) takes from the host profiler
// (ort_profiler.cc): operators cut out of the model exactly as they are
// profiled alone. Internal to the cost module.
#pragma once

#include <string>
#include <vector>

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

// Writes a freshly measured `t` to <dir>/<key>.csv and .json (a write error
// goes to meta cache_error, not to the caller) and sets meta cache_key,
// cache_file and cache ("miss"; "off" when `key` is empty: no caching).
void StoreInCache(const std::string& dir, const std::string& key, CostTable* t);

// "2026-12-01T19:56:10Z": when a table was measured (meta `created`).
std::string UtcNow();

}  // namespace hetplan::cost_internal
