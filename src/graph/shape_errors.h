// Errors about shapes that say what would fix them: every graph input that
// still needs a shape in one message, each with a --shape of its own rank;
// for a tensor whose shape stays unknown once the inputs are static, the
// graph input whose value (--value) or the node whose run-time values fix it.
//
// Internal to the library.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

namespace hetplan::internal {

// The dim_param the importer gives an input dim declared as a negative
// dim_value (-1: "unknown", as Paddle2ONNX writes it).
inline constexpr const char* kDeclaredUnknownDim = "-1";

// "--shape NAME=D0xD1x...": the known sizes of `shape` kept, 1 for each
// unknown (symbolic, declared -1 or 0) one.
std::string ShapeSuggestion(const std::string& input, const onnx::TensorShapeProto& shape);

// One graph input whose shape is not static.
struct MissingShape {
  std::string input;
  std::string why;         // "dim 0 ('batch') is symbolic", "has no shape"
  std::string suggestion;  // "--shape x=1x3x8x8", its own rank, known dims kept
};
// The graph inputs of `g` (not initializers, not in `skip`) without a
// static shape.
std::vector<MissingShape> MissingInputShapes(const onnx::GraphProto& g,
                                             const std::unordered_set<std::string>& skip);
// The one line that lists them all.
std::string MissingShapesMessage(const std::vector<MissingShape>& missing);

// Whether `input` is a tensor whose every dim is known and one is 0: it
// has one value, the empty tensor.
bool IsEmptyStaticTensor(const onnx::ValueInfoProto& input);

// The graph inputs (sorted) whose values tensor `name` is computed from,
// through any path that avoids `constants`.
std::vector<std::string> InputsFeeding(const onnx::GraphProto& g, const std::string& name,
                                       const std::unordered_set<std::string>& constants);

// Why tensor `name` (read or written by node `node_label`) has no static
// shape and what fixes it: the graph inputs whose values it depends on
// (--value NAME=..., with their element count), or the node whose
// run-time values decide it. `shapes` are the static shapes known,
// `constants` the tensors known to be constant.
std::string UnknownShapeMessage(const onnx::GraphProto& g, const std::string& node_label, const std::string& name,
                                const std::unordered_map<std::string, std::vector<int64_t>>& shapes,
                                const std::unordered_set<std::string>& constants);

}  // namespace hetplan::internal
