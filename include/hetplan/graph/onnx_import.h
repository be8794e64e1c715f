// ONNX model → OpGraph. Reads the file, checks its structure, fixes symbolic
// input dims from --shape, runs ONNX shape inference, folds constant shape
// subgraphs (Shape → Gather → Concat → Reshape …) until every tensor an
// operator touches has a static shape, then groups nodes into operators at the
// requested fusion level.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hetplan/graph/op_graph.h"
#include "hetplan/util/status.h"

namespace onnx {
class ModelProto;
}

namespace hetplan {

enum class FusionLevel {
  kNone,        // one operator per remaining ONNX node
  kActivation,  // Conv/Gemm/MatMul absorb a following bias Add, BatchNormalization
                // and elementwise activation (Relu, Clip, SiLU, HardSwish, HardSigmoid, Gelu, ...)
};
Result<FusionLevel> ParseFusionLevel(std::string_view text);
std::string ToString(FusionLevel level);

struct ImportOptions {
  FusionLevel fusion = FusionLevel::kNone;
  // Static shapes for graph inputs with symbolic dims ("--shape input=1x3x224x224").
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Limits: a model beyond them is refused with a clear error.
  int64_t max_file_bytes = int64_t{4} << 30;
  int max_operators = 100000;
  int64_t max_tensor_elements = int64_t{1} << 34;
};

// Parses "input=1x3x224x224" into (name, dims).
Result<std::pair<std::string, std::vector<int64_t>>> ParseShapeOverride(std::string_view text);

struct LoadedModel {
  OpGraph graph;
  // The model after shape overrides, folding, topological sorting and shape
  // inference. Operator::node_indices index its graph().node().
  std::shared_ptr<const onnx::ModelProto> model;
  std::string path;
  std::string sha256;      // of the file as read
  int onnx_nodes = 0;      // nodes in the file's main graph
  int folded_nodes = 0;    // nodes removed by constant folding
  FusionLevel fusion = FusionLevel::kNone;
};

Result<LoadedModel> LoadOnnxModel(const std::string& path, const ImportOptions& options = {});
// Same, from bytes already in memory; `label` names the source in errors.
Result<LoadedModel> LoadOnnxModelFromBytes(std::string_view bytes, const std::string& label,
                                           const ImportOptions& options = {});

}  // namespace hetplan
