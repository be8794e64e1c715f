// ONNX Runtime plumbing shared by the host profiler (src/cost/ort_profiler.cc)
// and the deployment runner (src/deploy/run.cc): the process's one Env, the
// session settings hetplan measures with, and seeded random inputs. Internal
// to the library (src/ is not installed); only .cc files include it, so ONNX
// Runtime's headers stay out of the public API.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/status.h"

namespace hetplan::ort {

// The process's one Ort::Env (FATAL-only logging keeps the library quiet;
// ORT's errors come back as exceptions). Created on first use.
Result<Ort::Env*> SharedEnv();

// ONNX Runtime's graph optimisation level for a model planned at `fusion`,
// by the name cost tables and manifests record: "basic" for fusion=none (one
// kernel per ONNX node; see ort_profiler.cc for why), "all" for
// fusion=activation, and "extended" for a quantized model at fusion=none:
// the lowest level with ONNX Runtime's QDQ fusion, without which every
// DQ → Conv → Q runs as a float Conv between a dequantize and a quantize
// rather than as the integer kernel the model is meant to run.
std::string GraphOptimizationFor(FusionLevel fusion, bool quantized);

// The session settings every hetplan measurement shares: `threads` intra-op
// threads, one inter-op thread, sequential execution, and the graph
// optimisation level named by `graph_optimization` ("basic", "extended",
// "all"; GraphOptimizationFor). `model_folder`, when given, is where
// external initializers are looked up (sessions are created from bytes).
Ort::SessionOptions MakeSessionOptions(int threads, const std::string& graph_optimization,
                                       const std::string& model_folder = "");

// A zeroed tensor of `type` and `shape` from the default allocator.
// Throws Ort::Exception.
Ort::Value ZeroTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape);

// A tensor as hetplan feeds models: floats uniform in [−1, 1] drawn from
// `rng`, integers zero (always a valid Gather index), bool false.
// Throws Ort::Exception.
Ort::Value RandomTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, std::mt19937_64& rng);

// A tensor holding `values` (numbers as text, or true/false: a --value)
// converted to `type`, which must be a float or integer type. Throws
// Ort::Exception; std::invalid_argument for another type or count.
Ort::Value ValueTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape,
                       const std::vector<std::string>& values);

// Linear interpolation between order statistics (numpy's default), so that
// p10 ≤ median ≤ p90 always holds; 0 for no samples.
double Quantile(std::vector<double> samples, double q);

}  // namespace hetplan::ort
