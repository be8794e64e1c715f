#include "ort/session.h"

#include <onnxruntime_session_options_config_keys.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>

namespace hetplan::ort {

Result<Ort::Env*> SharedEnv() {
  static std::mutex mu;
  static std::unique_ptr<Ort::Env> env;
  std::lock_guard<std::mutex> lock(mu);
  if (!env) {
    try {
      env = std::make_unique<Ort::Env>(ORT_LOGGING_LEVEL_FATAL, "hetplan");
    } catch (const std::exception& e) {
      return Error(ErrorCode::kInternal,
                   "ONNX Runtime could not start ({}); check the library in "
                   "third_party/onnxruntime (scripts/setup_ort.sh)",
                   OneLine(e.what()));
    }
  }
  return env.get();
}

std::string GraphOptimizationFor(FusionLevel fusion, bool quantized) {
  if (fusion == FusionLevel::kActivation) return "all";
  return quantized ? "extended" : "basic";
}

Ort::SessionOptions MakeSessionOptions(int threads, const std::string& graph_optimization,
                                       const std::string& model_folder) {
  Ort::SessionOptions so;
  so.SetIntraOpNumThreads(threads);
  so.SetInterOpNumThreads(1);
  so.SetExecutionMode(ORT_SEQUENTIAL);
  so.SetGraphOptimizationLevel(graph_optimization == "all"        ? ORT_ENABLE_ALL
                               : graph_optimization == "extended" ? ORT_ENABLE_EXTENDED
                                                                  : ORT_ENABLE_BASIC);
  so.SetLogSeverityLevel(4);
  if (!model_folder.empty()) {
    so.AddConfigEntry(kOrtSessionOptionsModelExternalInitializersFileFolderPath, model_folder.c_str());
  }
  return so;
}

Ort::Value ZeroTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape) {
  Ort::AllocatorWithDefaultOptions alloc;
  Ort::Value v = Ort::Value::CreateTensor(alloc, shape.data(), shape.size(), type);
  std::memset(v.GetTensorMutableRawData(), 0, v.GetTensorSizeInBytes());
  return v;
}

Ort::Value RandomTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  Ort::Value v = ZeroTensor(type, shape);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const size_t n = v.GetTensorTypeAndShapeInfo().GetElementCount();
  void* data = v.GetTensorMutableRawData();
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: {
      auto* p = static_cast<float*>(data);
      for (size_t k = 0; k < n; ++k) p[k] = uniform(rng);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: {
      auto* p = static_cast<double*>(data);
      for (size_t k = 0; k < n; ++k) p[k] = uniform(rng);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: {
      auto* p = static_cast<Ort::Float16_t*>(data);
      for (size_t k = 0; k < n; ++k) p[k] = Ort::Float16_t(uniform(rng));
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: {
      auto* p = static_cast<Ort::BFloat16_t*>(data);
      for (size_t k = 0; k < n; ++k) p[k] = Ort::BFloat16_t(uniform(rng));
      break;
    }
    default:
      break;  // integers and bool stay zero / false
  }
  return v;
}

double Quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double pos = q * static_cast<double>(samples.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  return samples[lo] + (samples[hi] - samples[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace hetplan::ort
