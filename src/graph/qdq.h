// Quantized models: the importer's QDQ and QOperator handling.
//
// A QDQ model (what torch.onnx and ONNX Runtime's quantize_static write)
// computes in float between DequantizeLinear (int8 → float) and
// QuantizeLinear (float → int8) nodes; a runtime fuses each
// DQ → operator → Q into one integer kernel. hetplan plans that kernel as
// one operator: the operator nodes are grouped exactly as in the float model
// (the fusion passes see the graph with every quantization node an alias of
// its input, so a quantized model has the float model's operators), then
// each quantization node joins the operator it serves — a DequantizeLinear
// (and the Cast torch writes before it) the operator that reads it, a
// QuantizeLinear the operator whose output it quantizes. The tensors between
// operators are then the int8/uint8 ones, and every size is counted at its
// own element type. QOperator nodes (QLinearConv, QLinearMatMul,
// ConvInteger, MatMulInteger, QGemm, QLinear*) are operators themselves.
//
//   CheckQuantization        every scale and zero point, before planning
//   SplitSharedDequantize    one DequantizeLinear per reader, as ONNX Runtime
//                            does before its QDQ fusion
//   FindQuantizationNodes    which operator nodes are quantization nodes
//   AttachQuantizationNodes  those nodes into the float model's groups
//
// Internal to the library.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/graph_builder.h"
#include "hetplan/util/status.h"

namespace hetplan::internal {

// Checks the quantization parameters of every QuantizeLinear,
// DequantizeLinear, QLinearConv, QLinearMatMul, ConvInteger and
// MatMulInteger node: scale and zero point of one shape, scalar or 1-D with
// one value per channel along an axis inside the input's rank, scales
// positive and finite, zero points of an integer type equal to the tensor
// they describe and inside that type's range. `shapes` and `dtypes` are the
// importer's (after shape inference); parameters computed at run time are
// not checked. The error names the file (`label`), the node, the tensor and
// the fix.
Status CheckQuantization(const onnx::GraphProto& g,
                         const std::unordered_map<std::string, std::vector<int64_t>>& shapes,
                         const std::unordered_map<std::string, int32_t>& dtypes, const std::string& label);

// Gives every DequantizeLinear of an activation that several nodes read one
// copy per reader (inserted after it, output "<name>_hetplan_<k>"), so that
// each reader's operator owns its own. Returns whether the graph changed
// (shape inference must then run again).
bool SplitSharedDequantize(onnx::GraphProto* g, const std::unordered_set<std::string>& initializers);

// The operator nodes that are quantization nodes: QuantizeLinear,
// DequantizeLinear and a Cast next to them (torch writes Q → Cast → DQ).
// Empty when the model has none (a float model).
std::vector<bool> FindQuantizationNodes(const NodeRoles& roles);

// Adds each quantization node to a group of `groups` (computed with the
// quantization nodes as aliases: ClassifyNodes(g, initializers, &quant)):
// a DequantizeLinear or Cast to the group of the node(s) reading it, a
// QuantizeLinear to the group of the node writing its input; failing that
// the other way round; failing both, a group of its own. Each group keeps
// its main node first; the rest follow in node (execution) order.
std::vector<NodeGroup> AttachQuantizationNodes(const NodeRoles& roles, const std::vector<bool>& quant,
                                               const std::vector<NodeGroup>& groups);

// The activation and weight inputs of a matrix operator (Conv, Gemm,
// MatMul and their quantized forms); nullopt for any other type.
struct MatrixOperands {
  int activation = 0;
  int weight = 1;
};
std::optional<MatrixOperands> MatrixOperandsOf(std::string_view type);

// Constant tensors that are the DequantizeLinear of stored integer data
// (a quantized weight or bias) → that node's index: the operator's
// parameters are the stored int8/int32 tensors, not their float image.
std::unordered_map<std::string, int> DequantizedConstants(const NodeRoles& roles);

}  // namespace hetplan::internal
