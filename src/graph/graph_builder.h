// The stages that turn an imported model's nodes into an OpGraph, after
// onnx_import.cc has checked, sorted, shape-inferred and folded the model:
//
//   ClassifyNodes   which nodes are operators, which tensors are constants
//                   or aliases, who reads each tensor      (graph_builder.cc)
//   UnfusedGroups   one group of nodes per operator node   (graph_builder.cc)
//   FuseActivations --fusion activation                     (fusion.cc)
//   BuildOperators  operators, tensors and edges            (graph_builder.cc)
//
// Internal to the library.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hetplan/graph/op_graph.h"
#include "hetplan/util/status.h"

namespace hetplan::internal {

// "node 'name' (Type)", or "node #index (Type)" for an unnamed node.
std::string NodeLabel(const onnx::NodeProto& n, int index);

// The roles of the nodes of a topologically sorted graph.
struct NodeRoles {
  const onnx::GraphProto* graph = nullptr;
  // Initializers, Constant outputs, and outputs of nodes that read constants
  // only (a weight transpose left by the exporter is part of the constant).
  std::unordered_set<std::string> constant_tensors;
  // Identity/Dropout output → the tensor it stands for.
  std::unordered_map<std::string, std::string> alias;
  // Nodes that become (part of) an operator: neither Constant, nor an
  // alias, nor a computation on constants only.
  std::vector<bool> is_op;
  // Operator nodes reading each resolved tensor, each node once, in node order.
  std::unordered_map<std::string, std::vector<int>> consumers;
  // The graph outputs, resolved.
  std::unordered_set<std::string> graph_outputs;

  // The tensor `name` stands for, through any chain of aliases.
  std::string Resolve(std::string name) const;
};

// Classifies the nodes of `g` (topologically sorted); `initializers` are the
// names of its initializers. Nodes marked in `aliases` are treated as
// Identity is (their output stands for their first input): the float view of
// a quantized model, in which QuantizeLinear/DequantizeLinear disappear
// (graph/qdq.h).
NodeRoles ClassifyNodes(const onnx::GraphProto& g, const std::unordered_set<std::string>& initializers,
                        const std::vector<bool>* aliases = nullptr);

// Node indices that become one operator; the first is its main node, which
// gives the operator its type and name (the others may come before it in
// execution order: the DequantizeLinear of a quantized operator's input).
using NodeGroup = std::vector<int>;

// One group per operator node, in node order: no fusion.
std::vector<NodeGroup> UnfusedGroups(const NodeRoles& roles);

// The `--fusion activation` pass. Takes the unfused groups (one operator
// node each, in node order, as UnfusedGroups returns them) and lets every
// Conv/Gemm/MatMul absorb the chain that follows it when each link has it as
// its only reader: a bias Add (after a MatMul), a BatchNormalization, then
// one activation (Relu, Clip, HardSwish, ..., or the SiLU and Erf-GELU
// patterns). Returns the groups in order of their main node; an absorbed
// node's own group is gone.
std::vector<NodeGroup> FuseActivations(const NodeRoles& roles, const std::vector<NodeGroup>& groups);

// What BuildOperators reads besides the nodes.
struct TensorFacts {
  std::string label;  // the model's file or label: prefixes every error and names the graph
  const std::unordered_set<std::string>* initializer_names = nullptr;
  // name → static shape and dtype of every tensor with a fully known shape
  const std::unordered_map<std::string, std::vector<int64_t>>* shapes = nullptr;
  const std::unordered_map<std::string, int32_t>* dtypes = nullptr;
  int64_t max_tensor_elements = 0;
};

// One operator per group (a group that reads and writes nothing is
// dropped), the edges between them (one per tensor an operator reads from
// another), the graph's inputs and outputs. Errors: a tensor without a
// static shape, zero-sized or beyond max_tensor_elements, a Conv or Gemm
// whose shapes disagree, no operator left.
Result<OpGraph> BuildOperators(const NodeRoles& roles, const std::vector<NodeGroup>& groups,
                               const TensorFacts& facts);

// Whether input `index` of `node` is an argument (axes, pads, a shape, sizes,
// bounds) rather than data: read by shape inference and folding, never counted
// as parameter bytes, and read from external data at import.
bool IsArgumentInput(const onnx::NodeProto& node, int index);

}  // namespace hetplan::internal
