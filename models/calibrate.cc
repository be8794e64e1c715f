// hetplan_calibrate: the calibration step of models/int8.py, which quantizes
// zoo models over their ONNX graph (there is no ONNX Runtime for Python on
// this machine). Runs an ONNX model with ONNX Runtime on seeded random inputs
// (floats uniform in [-1, 1], the inputs hetplan profiles and runs with) and
// writes, for every float output, the smallest and largest value seen over
// all runs. The caller lists the tensors it wants ranges for as graph outputs.
//
//   hetplan_calibrate MODEL.onnx OUT.json [--runs N] [--seed S]
//
// OUT.json: {"runs": N, "seed": S, "ranges": {"tensor": [min, max], ...}}.
// Also the exporter's check that ONNX Runtime loads and runs the quantized
// model it wrote (--runs 1). Build tooling, not part of the hetplan command.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/util/io.h"
#include "ort/session.h"

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "hetplan_calibrate: error: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    return Fail("usage: hetplan_calibrate MODEL.onnx OUT.json [--runs N] [--seed S]");
  }
  const std::string model_path = argv[1], out_path = argv[2];
  int runs = 8;
  uint64_t seed = 1;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--runs") runs = std::atoi(argv[i + 1]);
    else if (key == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else return Fail("unknown option " + key);
  }
  if (runs < 1) return Fail("--runs must be at least 1");
  auto bytes = hetplan::ReadFile(model_path);
  if (!bytes.ok()) return Fail(bytes.status().message());
  auto env = hetplan::ort::SharedEnv();
  if (!env.ok()) return Fail(env.status().message());
  try {
    Ort::SessionOptions so = hetplan::ort::MakeSessionOptions(1, "basic");
    Ort::Session session(**env, bytes->data(), bytes->size(), so);
    Ort::AllocatorWithDefaultOptions alloc;
    std::vector<std::string> in_names, out_names;
    std::vector<ONNXTensorElementDataType> in_types;
    std::vector<std::vector<int64_t>> in_shapes;
    for (size_t i = 0; i < session.GetInputCount(); ++i) {
      in_names.emplace_back(session.GetInputNameAllocated(i, alloc).get());
      Ort::TypeInfo type_info = session.GetInputTypeInfo(i);  // owns what info refers to
      auto info = type_info.GetTensorTypeAndShapeInfo();
      in_types.push_back(info.GetElementType());
      in_shapes.push_back(info.GetShape());
      for (int64_t d : in_shapes.back()) {
        if (d < 0) return Fail(model_path + ": input '" + in_names.back() + "' has a dynamic dimension");
      }
    }
    for (size_t i = 0; i < session.GetOutputCount(); ++i) {
      out_names.emplace_back(session.GetOutputNameAllocated(i, alloc).get());
    }
    std::vector<const char*> in_c, out_c;
    for (const auto& s : in_names) in_c.push_back(s.c_str());
    for (const auto& s : out_names) out_c.push_back(s.c_str());
    std::map<std::string, std::pair<double, double>> ranges;
    std::mt19937_64 rng(seed);
    for (int r = 0; r < runs; ++r) {
      std::vector<Ort::Value> inputs;
      for (size_t i = 0; i < in_names.size(); ++i) {
        inputs.push_back(hetplan::ort::RandomTensor(in_types[i], in_shapes[i], rng));
      }
      auto outputs = session.Run(Ort::RunOptions{nullptr}, in_c.data(), inputs.data(), inputs.size(),
                                 out_c.data(), out_c.size());
      for (size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].IsTensor()) continue;
        auto info = outputs[k].GetTensorTypeAndShapeInfo();
        if (info.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) continue;
        const float* p = outputs[k].GetTensorData<float>();
        const size_t n = info.GetElementCount();
        auto [it, fresh] = ranges.emplace(out_names[k], std::make_pair(std::numeric_limits<double>::infinity(),
                                                                       -std::numeric_limits<double>::infinity()));
        for (size_t j = 0; j < n; ++j) {
          if (!std::isfinite(p[j])) {
            return Fail(model_path + ": output '" + out_names[k] + "' holds a value that is not finite");
          }
          it->second.first = std::min(it->second.first, static_cast<double>(p[j]));
          it->second.second = std::max(it->second.second, static_cast<double>(p[j]));
        }
      }
    }
    nlohmann::json j = {{"runs", runs}, {"seed", seed}, {"ranges", nlohmann::json::object()}};
    for (const auto& [name, mm] : ranges) j["ranges"][name] = {mm.first, mm.second};
    auto st = hetplan::WriteFileAtomic(out_path, j.dump(1) + "\n");
    if (!st.ok()) return Fail(st.message());
  } catch (const std::exception& e) {
    return Fail(model_path + ": " + hetplan::OneLine(e.what()));
  }
  return 0;
}
