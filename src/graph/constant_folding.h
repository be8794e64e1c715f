// Evaluation of the small integer/float shape-arithmetic nodes that exporters
// leave in graphs (Shape → Gather → Concat → Reshape …), so that the importer
// can fold them into constants and shape inference can resolve what follows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

namespace hetplan::internal {

// A small constant tensor. Integer types are held in `ints`, floating types
// in `floats`; exactly one is used, chosen by `is_float`.
struct ConstTensor {
  int32_t dtype = onnx::TensorProto::INT64;
  std::vector<int64_t> dims;
  bool is_float = false;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  int64_t size() const { return is_float ? static_cast<int64_t>(floats.size()) : static_cast<int64_t>(ints.size()); }
};

// Largest constant the folder materialises or reads (elements).
inline constexpr int64_t kMaxFoldElements = 1 << 16;

// Reads an initializer/Constant value if it is small and of a supported type.
std::optional<ConstTensor> FromTensorProto(const onnx::TensorProto& t);
onnx::TensorProto ToTensorProto(const ConstTensor& c, const std::string& name);

// Evaluates `node` if it is a foldable op whose inputs are all known.
// `constants` maps tensor name → value; `shapes` maps tensor name → static
// shape (for Shape nodes). Returns the outputs or nullopt if not foldable.
std::optional<std::vector<ConstTensor>> EvaluateNode(
    const onnx::NodeProto& node, const std::unordered_map<std::string, ConstTensor>& constants,
    const std::unordered_map<std::string, std::vector<int64_t>>& shapes);

}  // namespace hetplan::internal
