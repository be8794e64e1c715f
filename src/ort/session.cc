#include "ort/session.h"

#include <cstdlib>
#include <stdexcept>
#include <type_traits>

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

Ort::Value ValueTensor(ONNXTensorElementDataType type, const std::vector<int64_t>& shape,
                       const std::vector<std::string>& values) {
  Ort::Value v = ZeroTensor(type, shape);
  const size_t n = v.GetTensorTypeAndShapeInfo().GetElementCount();
  if (n != values.size()) throw std::invalid_argument("the number of values does not match the shape");
  void* data = v.GetTensorMutableRawData();
  auto put = [&](auto* p) {
    using V = std::remove_pointer_t<decltype(p)>;
    for (size_t k = 0; k < n; ++k) {
      const std::string& t = values[k];
      const double x = t == "true" ? 1.0 : (t == "false" ? 0.0 : std::strtod(t.c_str(), nullptr));
      if constexpr (std::is_integral_v<V>) {
        p[k] = t == "true" || t == "false" ? static_cast<V>(x) : static_cast<V>(std::strtoll(t.c_str(), nullptr, 10));
      } else {
        p[k] = static_cast<V>(x);
      }
    }
  };
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: put(static_cast<float*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: put(static_cast<double*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: put(static_cast<int64_t*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: put(static_cast<int32_t*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: put(static_cast<int16_t*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: put(static_cast<int8_t*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: put(static_cast<uint8_t*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: put(static_cast<uint16_t*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: put(static_cast<uint32_t*>(data)); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: {
      auto* p = static_cast<bool*>(data);
      for (size_t k = 0; k < n; ++k) {
        const std::string& t = values[k];
        p[k] = t == "true" || (t != "false" && std::strtod(t.c_str(), nullptr) != 0);
      }
      break;
    }
    default:
      throw std::invalid_argument("a value of this element type cannot be given");
  }
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
