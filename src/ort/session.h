// ONNX Runtime plumbing shared by the host profiler (src/cost/ort_profiler.cc)
// and the deployment runner (src/deploy/run.cc): the process's one Env, the
// session settings hetplan measures with, and seeded random inputs. Internal
// to the library (src/ is not installed); only .cc files include it, so ONNX
// Runtime's headers stay out of the public API.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/npy.h"
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

// A PU's ONNX Runtime configuration (docs/platform-format.md: provider,
// provider_options, threads, cores): what MakePuSessionOptions applies.
struct PuRuntime {
  std::string provider = "cpu";  // hetplan's name (CanonicalProvider)
  std::map<std::string, std::string> provider_options;
  int threads = 1;
  std::vector<int> cores;  // empty: not pinned
};

// The execution providers this ONNX Runtime has, as it names them
// ("CPUExecutionProvider", ...).
std::vector<std::string> AvailableProviders();
// ORT's name of a provider hetplan knows ("cuda" → "CUDAExecutionProvider").
std::string OrtProviderName(const std::string& provider);
// Ok when this ONNX Runtime has `provider`; else one line naming `where`, the
// provider and the providers that are available.
Status CheckProvider(const std::string& provider, const std::string& where);

// MakeSessionOptions with the PU's threads, its execution provider and
// options appended (CPU needs nothing: it is always there, and takes what the
// provider before it leaves), and ORT's intra-op pool threads pinned to
// cores[1], cores[2], ... (session.intra_op_thread_affinities; ORT leaves the
// calling thread to its owner, who pins it with PinCurrentThread). Errors:
// a provider this ONNX Runtime lacks, options it refuses.
Result<Ort::SessionOptions> MakePuSessionOptions(const PuRuntime& pu, const std::string& graph_optimization,
                                                 const std::string& model_folder = "");

// A zeroed tensor of `type` and `shape` from the default allocator.
// Throws Ort::Exception.
Ort::Value ZeroTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape);

// A tensor as hetplan feeds models: floats uniform in [−1, 1] drawn from
// `rng`, integers zero (always a valid Gather index), bool false.
// Throws Ort::Exception.
Ort::Value RandomTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, std::mt19937_64& rng);

// The tensor hetplan feeds graph input `name`: RandomTensor, except that an
// integer attention mask (a name ending in "attention_mask", as exporters
// and ONNX Runtime GenAI's builder name it) is all ones, every position
// attended: a mask of zeros is no input a decoder runs on (the builder's
// attention computes its sequence lengths from it and refuses -1).
Ort::Value InputTensor(const std::string& name, ONNXTensorElementDataType type, const std::vector<int64_t>& shape,
                       std::mt19937_64& rng);

// A tensor holding `t`'s bytes (a --sample-input's array). Throws Ort::Exception.
Ort::Value DataTensor(const TensorData& t);

// A session with its inputs made once (RandomTensor from `seed`, or the
// array `given` holds for an input of that name), ready to run again and
// again; outputs are allocated by ORT on each run, as the profiler has
// always timed operators.
class Runner {
 public:
  // Creates the session; a failure is ORT's message, one line (kUnsupported:
  // ORT refuses the model; kInternal: its inputs cannot be made).
  static Result<std::unique_ptr<Runner>> Create(Ort::Env& env, const std::string& bytes, const Ort::SessionOptions& so,
                                                uint64_t seed, const std::map<std::string, TensorData>* given = nullptr);
  // Throws Ort::Exception (callers catch it).
  void Run();
  Ort::Session& session() { return session_; }

 private:
  Runner() = default;
  Status MakeInputs(uint64_t seed, const std::map<std::string, TensorData>* given);

  Ort::Session session_{nullptr};
  Ort::RunOptions run_options_;
  std::vector<std::string> input_names_, output_names_;
  std::vector<const char*> in_c_, out_c_;
  std::vector<Ort::Value> inputs_;
};

// A tensor holding `values` (numbers as text, or true/false: a --value)
// converted to `type`, which must be a float or integer type. Throws
// Ort::Exception; std::invalid_argument for another type or count.
Ort::Value ValueTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape,
                       const std::vector<std::string>& values);

// Linear interpolation between order statistics (numpy's default), so that
// p10 ≤ median ≤ p90 always holds; 0 for no samples.
double Quantile(std::vector<double> samples, double q);
inline double Median(const std::vector<double>& samples) { return Quantile(samples, 0.5); }

}  // namespace hetplan::ort
