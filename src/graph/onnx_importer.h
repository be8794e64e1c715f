// The importer of ONNX models (hetplan/graph/onnx_import.h): its state and
// its stages. onnx_import.cc has parsing, the input options, sorting, shape
// inference, folding, If resolution and the graph; onnx_import_checks.cc the
// checks of the model's structure, its stored data and its nodes.
//
// Internal to graph/.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "graph/constant_folding.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/util/status.h"

namespace hetplan::internal {

// The schemas shape inference and the node checks read: ONNX's, those of
// Conv and pooling guarded against what crashed ONNX 1.12's inference, those
// of operators defined by a type-dependent function body given an inference
// from that body, and ONNX Runtime's additions (graph/domains.h).
const onnx::ISchemaRegistry* SchemaRegistry();

// Everything the importer tracks while it works on one model.
class Importer {
 public:
  Importer(std::string label, const ImportOptions& options) : label_(std::move(label)), options_(options) {}

  Result<LoadedModel> Run(std::string_view bytes);

 private:
  Status Parse(std::string_view bytes);
  Status CheckStructure();
  Status ResolveExternalData();
  Status CheckTensorData();
  Status FixInputShapes();
  // The stages of FixInputShapes: a negative dim_value becomes unknown; --shape
  // and --value fix the inputs' dims, every input then needs a static shape;
  // each --value input becomes an initializer.
  void MarkNegativeDimsUnknown();
  Status ApplyInputOptions();
  Status ExpandShapePatterns();
  void AddRecordedShapes();
  Status InputValuesToInitializers();
  Status TopologicalSort();
  Status InferShapes();
  bool FoldConstants();
  // Replaces Ifs whose condition is constant (and, with `assumed`, those
  // --branch names) by their branch; returns whether any was.
  Result<bool> ResolveIfs(bool assumed);
  Status CheckInlinedNodes(int first, int count);
  // A node's domain and type, and that it is no Loop/Scan or other node with a subgraph but an If.
  Status CheckNode(const onnx::NodeProto& n, int index) const;
  Status CheckNoIfLeft();
  Status CollectShapes();
  Result<OpGraph> BuildGraph();

  Status Fail(ErrorCode code, const std::string& what) const {
    return Status(code, fmt::format("{}: {}", label_, what));
  }

  std::string label_;
  ImportOptions options_;
  std::vector<ShapePattern> shape_patterns_;  // --shape patterns and what they matched
  std::shared_ptr<onnx::ModelProto> model_ = std::make_shared<onnx::ModelProto>();
  int original_nodes_ = 0;
  int folded_nodes_ = 0;
  int external_tensors_ = 0;  // left in their data file
  int64_t external_bytes_ = 0;
  std::unordered_set<std::string> initializer_names_;
  // name → static shape and dtype of every tensor with a fully known shape
  std::unordered_map<std::string, std::vector<int64_t>> shapes_;
  std::unordered_map<std::string, int32_t> dtypes_;
  std::unordered_map<std::string, ConstTensor> constants_;
  std::vector<FixedInput> fixed_inputs_;
  std::vector<BranchChoice> branches_;
  std::set<std::string> unused_branches_;
  int default_opset_ = 0;
};

}  // namespace hetplan::internal
