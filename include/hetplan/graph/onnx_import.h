// ONNX model → OpGraph. Reads the file, checks its structure (domains by
// use), fixes symbolic input dims from --shape and input values from
// --value, runs ONNX shape inference with data propagation, folds constant
// shape subgraphs (Shape → Gather → Concat → Reshape …) and replaces Ifs
// whose branch is known by that branch, until every tensor an operator
// touches has a static shape, then groups nodes into operators at the
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

namespace ONNX_NAMESPACE {  // onnx:: (hetplan/util/onnx_namespace.h)
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

// A representative input (--sample-input NAME=FILE.npy): the plan is made
// for the shapes this input produces where they depend on its values.
struct SampleInput {
  std::string name;             // the graph input
  std::string file;             // the .npy file, as an absolute path
  std::string sha256;           // of the file
  int32_t elem_type = 0;        // ONNX element type
  std::vector<int64_t> shape;
};

// A tensor's type and shape as ONNX Runtime computed it on the sample inputs.
struct RecordedTensor {
  int32_t elem_type = 0;
  std::vector<int64_t> dims;
};

struct ImportOptions {
  FusionLevel fusion = FusionLevel::kNone;
  // --sample-input: graph inputs given a representative value. The import
  // takes the shapes that running the model on them gave every tensor
  // (RecordSampleShapes, hetplan/cost/sample_shapes.h, fills the two fields
  // below); the inputs stay inputs, and the plan records which files.
  std::vector<SampleInput> samples;
  std::map<std::string, RecordedTensor> recorded_shapes;
  // Static shapes for graph inputs with symbolic dims ("--shape input=1x3x224x224").
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Graph inputs fixed to a constant ("--value sr=16000"): the values as
  // written, read at the input's element type. The input becomes an
  // initializer, so it folds like one.
  std::map<std::string, std::vector<std::string>> input_values;
  // Data-dependent Ifs planned as one branch ("--branch NODE=then|else"):
  // node name → true for then.
  std::map<std::string, bool> branches;
  // Limits: a model beyond them is refused with a clear error.
  int64_t max_file_bytes = int64_t{4} << 30;
  int max_operators = 100000;
  int64_t max_tensor_elements = int64_t{1} << 34;
  // The folder external data is read from (graph/external_data.h):
  // LoadOnnxModel's default is the model file's. From bytes there is none:
  // weights in external data still import (sized from their dims, enough
  // for analytical costs), a tensor import must read is refused in one line,
  // and ONNX Runtime cannot profile or run the model.
  std::string external_data_dir;
  // Keep the model as the file has it (LoadedModel::source): functions
  // inlined and nodes sorted, nothing shaped or folded.
  bool keep_source = false;
};

// Parses "input=1x3x224x224" into (name, dims).
Result<std::pair<std::string, std::vector<int64_t>>> ParseShapeOverride(std::string_view text);
// Parses "sr=16000" or "mask=1,0,1" into (name, values); values are numbers,
// true or false.
Result<std::pair<std::string, std::vector<std::string>>> ParseValueOverride(std::string_view text);
// Parses "NODE=then" or "NODE=else" into (node, then?).
Result<std::pair<std::string, bool>> ParseBranchOverride(std::string_view text);

// A graph input fixed by --value, as the plan used it.
struct FixedInput {
  std::string name;
  int32_t elem_type = 0;             // ONNX element type of the input
  std::vector<int64_t> shape;        // static
  std::vector<std::string> values;   // as given, one per element
};

// An If the importer replaced by one of its branches.
struct BranchChoice {
  std::string node;       // the If's name (unnamed Ifs get "If_<index>", control_flow.h)
  bool then = true;       // which branch
  bool assumed = false;   // true: chosen with --branch (data-dependent); false: the condition folded
  std::string condition;  // the condition tensor
};

// The inputs and branches a model was imported with: a schedule records
// them (docs/schedule-format.md), split re-imports with them and run feeds
// the values to the unsplit model.
// A --shape given as a glob pattern, and the graph inputs it gave the shape.
struct ShapePattern {
  std::string pattern;
  std::vector<int64_t> dims;
  std::vector<std::string> matched;  // in graph-input order
};

struct PlanAssumptions {
  std::map<std::string, std::vector<int64_t>> input_shapes;  // --shape, patterns expanded to the inputs' names
  std::vector<ShapePattern> shape_patterns;                  // the --shape patterns (reported, not re-applied)
  std::vector<FixedInput> fixed_inputs;                      // --value, in graph-input order
  std::vector<BranchChoice> branches;                        // every If resolved, in resolution order
  std::vector<SampleInput> sample_inputs;                    // --sample-input: the inputs the plan was made for
  bool empty() const {
    return input_shapes.empty() && fixed_inputs.empty() && branches.empty() && sample_inputs.empty();
  }
};
// Adds to `options` what re-imports the model as planned: the shapes and
// values, and the branches that were assumed (the others fold again by
// themselves). An option already in `options` wins.
void ApplyPlanAssumptions(const PlanAssumptions& a, ImportOptions* options);

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
  // Weights left in external data files (graph/external_data.h): their
  // folder, where ONNX Runtime reads them; empty when every tensor is in
  // the model.
  std::string external_data_dir;
  int external_tensors = 0;
  int64_t external_bytes = 0;
  // What the model was imported with, so that a plan can record it and
  // split/run need none of it repeated.
  PlanAssumptions assumptions;
  // With ImportOptions::keep_source: the model before shape inference and
  // folding (functions inlined, nodes in topological order; only the graph
  // inputs' types carry the fixed shapes): what a split that must run at
  // other shapes than the planned ones cuts (a decoder's past length).
  std::shared_ptr<const onnx::ModelProto> source;
};

Result<LoadedModel> LoadOnnxModel(const std::string& path, const ImportOptions& options = {});
// Same, from bytes already in memory; `label` names the source in errors.
Result<LoadedModel> LoadOnnxModelFromBytes(std::string_view bytes, const std::string& label,
                                           const ImportOptions& options = {});

// The newest opset of the default ONNX domain that imports: the newest that
// both the ONNX library (its schemas, for shape inference) and the bundled
// ONNX Runtime (which profiles and runs the model) support. ONNX 1.22 knows
// 27; ONNX Runtime 1.29 runs up to 26 (it calls 27 "under development" and
// refuses it). A newer model is refused at import, in one line.
int NewestSupportedOpset();

// `model` with the Ifs of `branches` (node name → true for then) replaced by
// their branch and nothing else changed: the unsplit model as a plan that
// assumed those branches runs it. Error: a name that is no If of the model.
Status PinIfBranches(onnx::ModelProto* model, const std::map<std::string, bool>& branches);

}  // namespace hetplan
