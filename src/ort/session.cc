#include "ort/session.h"

#include <cstdlib>
#include <stdexcept>
#include <type_traits>

#include <onnxruntime_session_options_config_keys.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <functional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "hetplan/platform/platform.h"

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

namespace {

// hetplan's provider names, ORT's, and how each is appended.
enum class Append { kNone, kCuda, kTensorRt, kRocm, kDnnl, kOpenVino, kVitisAi, kGeneric };
struct ProviderInfo {
  std::string_view name, ort_name;
  Append append;
  std::string_view generic_name;  // for SessionOptionsAppendExecutionProvider
};
constexpr std::array<ProviderInfo, 13> kProviders = {{
    {"cpu", "CPUExecutionProvider", Append::kNone, ""},
    {"cuda", "CUDAExecutionProvider", Append::kCuda, ""},
    {"tensorrt", "TensorrtExecutionProvider", Append::kTensorRt, ""},
    {"rocm", "ROCMExecutionProvider", Append::kRocm, ""},
    {"openvino", "OpenVINOExecutionProvider", Append::kOpenVino, ""},
    {"dnnl", "DnnlExecutionProvider", Append::kDnnl, ""},
    {"qnn", "QNNExecutionProvider", Append::kGeneric, "QNN"},
    {"snpe", "SNPEExecutionProvider", Append::kGeneric, "SNPE"},
    {"xnnpack", "XnnpackExecutionProvider", Append::kGeneric, "XNNPACK"},
    {"coreml", "CoreMLExecutionProvider", Append::kGeneric, "CoreML"},
    {"vitisai", "VitisAIExecutionProvider", Append::kVitisAi, ""},
    {"webgpu", "WebGpuExecutionProvider", Append::kGeneric, "WebGPU"},
    {"azure", "AzureExecutionProvider", Append::kGeneric, "AZURE"},
}};

const ProviderInfo* FindProvider(const std::string& provider) {
  const std::string canonical = CanonicalProvider(provider);
  for (const ProviderInfo& p : kProviders) {
    if (p.name == canonical) return &p;
  }
  return nullptr;
}

void ThrowOnError(OrtStatus* status) {
  if (status == nullptr) return;
  Ort::Status owned(status);  // releases it
  throw Ort::Exception(owned.GetErrorMessage(), owned.GetErrorCode());
}

// The providers whose options ORT takes through Create/Update/Append/Release
// calls on an options struct of their own.
template <typename Options>
void AppendWithStruct(Ort::SessionOptions& so, const std::map<std::string, std::string>& options,
                      OrtStatus* (*create)(Options**),
                      OrtStatus* (*update)(Options*, const char* const*, const char* const*, size_t),
                      void (*release)(Options*), const std::function<void(const Options&)>& append) {
  Options* o = nullptr;
  ThrowOnError(create(&o));
  std::unique_ptr<Options, void (*)(Options*)> owned(o, release);
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  ThrowOnError(update(o, keys.data(), values.data(), keys.size()));
  append(*o);
}

}  // namespace

std::vector<std::string> AvailableProviders() {
  try {
    return Ort::GetAvailableProviders();
  } catch (const std::exception&) {
    return {};
  }
}

std::string OrtProviderName(const std::string& provider) {
  const ProviderInfo* p = FindProvider(provider);
  return p == nullptr ? provider : std::string(p->ort_name);
}

Status CheckProvider(const std::string& provider, const std::string& where) {
  const ProviderInfo* p = FindProvider(provider);
  const std::vector<std::string> available = AvailableProviders();
  if (p != nullptr && std::find(available.begin(), available.end(), p->ort_name) != available.end()) {
    return Status::Ok();
  }
  return Error(ErrorCode::kUnsupported,
               "{}: execution provider '{}' ({}) is not in this ONNX Runtime {}, which has: {}; use one of those, "
               "or an ONNX Runtime built with it",
               where, provider, p == nullptr ? "unknown to hetplan" : std::string(p->ort_name),
               Ort::GetVersionString(), fmt::join(available, ", "));
}

Result<Ort::SessionOptions> MakePuSessionOptions(const PuRuntime& pu, const std::string& graph_optimization,
                                                 const std::string& model_folder) {
  HETPLAN_RETURN_IF_ERROR(CheckProvider(pu.provider, "session"));
  Ort::SessionOptions so = MakeSessionOptions(pu.threads, graph_optimization, model_folder);
  try {
    if (pu.threads > 1 && pu.cores.size() > 1) {
      // One entry per pool thread (ORT's are 1-based logical processor ids).
      std::vector<std::string> per_thread;
      for (int t = 1; t < pu.threads; ++t) {
        per_thread.push_back(std::to_string(pu.cores[static_cast<size_t>(t) % pu.cores.size()] + 1));
      }
      const std::string affinities = fmt::format("{}", fmt::join(per_thread, ";"));
      so.AddConfigEntry(kOrtSessionOptionsConfigIntraOpThreadAffinities, affinities.c_str());
    }
    const ProviderInfo& p = *FindProvider(pu.provider);
    const OrtApi& api = Ort::GetApi();
    std::unordered_map<std::string, std::string> options(pu.provider_options.begin(), pu.provider_options.end());
    switch (p.append) {
      case Append::kNone:
        break;
      case Append::kCuda:
        AppendWithStruct<OrtCUDAProviderOptionsV2>(
            so, pu.provider_options, api.CreateCUDAProviderOptions, api.UpdateCUDAProviderOptions,
            api.ReleaseCUDAProviderOptions, [&](const OrtCUDAProviderOptionsV2& o) { so.AppendExecutionProvider_CUDA_V2(o); });
        break;
      case Append::kTensorRt:
        AppendWithStruct<OrtTensorRTProviderOptionsV2>(
            so, pu.provider_options, api.CreateTensorRTProviderOptions, api.UpdateTensorRTProviderOptions,
            api.ReleaseTensorRTProviderOptions,
            [&](const OrtTensorRTProviderOptionsV2& o) { so.AppendExecutionProvider_TensorRT_V2(o); });
        break;
      case Append::kRocm:
        AppendWithStruct<OrtROCMProviderOptions>(
            so, pu.provider_options, api.CreateROCMProviderOptions, api.UpdateROCMProviderOptions,
            api.ReleaseROCMProviderOptions, [&](const OrtROCMProviderOptions& o) { so.AppendExecutionProvider_ROCM(o); });
        break;
      case Append::kDnnl:
        AppendWithStruct<OrtDnnlProviderOptions>(
            so, pu.provider_options, api.CreateDnnlProviderOptions, api.UpdateDnnlProviderOptions,
            api.ReleaseDnnlProviderOptions, [&](const OrtDnnlProviderOptions& o) { so.AppendExecutionProvider_Dnnl(o); });
        break;
      case Append::kOpenVino:
        so.AppendExecutionProvider_OpenVINO_V2(options);
        break;
      case Append::kVitisAi:
        so.AppendExecutionProvider_VitisAI(options);
        break;
      case Append::kGeneric:
        so.AppendExecutionProvider(std::string(p.generic_name), options);
        break;
    }
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, "execution provider '{}' refuses its configuration: {}; check "
                 "provider_options against the provider's documentation", pu.provider, OneLine(e.what()));
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
  if (n == 0) return v;  // an empty tensor of any element type (a KV cache's past at prefill)
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

Ort::Value InputTensor(const std::string& name, ONNXTensorElementDataType type, const std::vector<int64_t>& shape,
                       std::mt19937_64& rng) {
  const std::string mask = "attention_mask";
  const bool is_mask = name.size() >= mask.size() && name.compare(name.size() - mask.size(), mask.size(), mask) == 0;
  if (!is_mask || (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 && type != ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32)) {
    return RandomTensor(type, shape, rng);
  }
  Ort::Value v = ZeroTensor(type, shape);
  const size_t n = v.GetTensorTypeAndShapeInfo().GetElementCount();
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64) {
    std::fill_n(v.GetTensorMutableData<int64_t>(), n, int64_t{1});
  } else {
    std::fill_n(v.GetTensorMutableData<int32_t>(), n, int32_t{1});
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

Ort::Value DataTensor(const TensorData& t) {
  Ort::AllocatorWithDefaultOptions alloc;
  Ort::Value v = Ort::Value::CreateTensor(alloc, t.shape.data(), t.shape.size(),
                                          static_cast<ONNXTensorElementDataType>(t.elem_type));
  if (!t.bytes.empty()) std::memcpy(v.GetTensorMutableRawData(), t.bytes.data(), t.bytes.size());
  return v;
}

Result<std::unique_ptr<Runner>> Runner::Create(Ort::Env& env, const std::string& bytes, const Ort::SessionOptions& so,
                                               uint64_t seed, const std::map<std::string, TensorData>* given) {
  auto r = std::unique_ptr<Runner>(new Runner());
  try {
    r->session_ = Ort::Session(env, bytes.data(), bytes.size(), so);
  } catch (const std::exception& e) {
    return Status(ErrorCode::kUnsupported, OneLine(e.what()));
  }
  try {
    HETPLAN_RETURN_IF_ERROR(r->MakeInputs(seed, given));
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal, OneLine(e.what()));
  }
  return r;
}

void Runner::Run() {
  auto outputs =
      session_.Run(run_options_, in_c_.data(), inputs_.data(), inputs_.size(), out_c_.data(), out_c_.size());
  (void)outputs;
}

Status Runner::MakeInputs(uint64_t seed, const std::map<std::string, TensorData>* given) {
  Ort::AllocatorWithDefaultOptions alloc;
  std::mt19937_64 rng(seed);
  const size_t n_in = session_.GetInputCount();
  for (size_t i = 0; i < n_in; ++i) {
    input_names_.emplace_back(session_.GetInputNameAllocated(i, alloc).get());
    const std::string& name = input_names_.back();
    Ort::TypeInfo type_info = session_.GetInputTypeInfo(i);
    if (type_info.GetONNXType() != ONNX_TYPE_TENSOR) {
      return Status(ErrorCode::kUnsupported, fmt::format("input '{}' is not a tensor", name));
    }
    auto info = type_info.GetTensorTypeAndShapeInfo();
    const ONNXTensorElementDataType type = info.GetElementType();
    std::vector<int64_t> shape = info.GetShape();
    for (int64_t d : shape) {
      if (d < 0) {
        return Status(ErrorCode::kUnsupported,
                      fmt::format("input '{}' has a dynamic dimension; give static shapes with --shape", name));
      }
    }
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING || type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
      return Status(ErrorCode::kUnsupported,
                    fmt::format("input '{}' has an element type the profiler cannot fill", name));
    }
    if (given != nullptr) {
      if (auto g = given->find(name); g != given->end() && g->second.shape == shape) {
        inputs_.push_back(DataTensor(g->second));
        continue;
      }
    }
    inputs_.push_back(InputTensor(name, type, shape, rng));
  }
  const size_t n_out = session_.GetOutputCount();
  for (size_t i = 0; i < n_out; ++i) output_names_.emplace_back(session_.GetOutputNameAllocated(i, alloc).get());
  for (const auto& s : input_names_) in_c_.push_back(s.c_str());
  for (const auto& s : output_names_) out_c_.push_back(s.c_str());
  return Status::Ok();
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
