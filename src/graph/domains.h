// Operator domains by use: which nodes hetplan can import, and what it knows
// about those outside the standard ONNX domain.
//
// The standard domains (ai.onnx, ai.onnx.ml) come with the ONNX library's
// schemas. ONNX Runtime's own domain, com.microsoft, is what its graph
// optimizer and its quantization tool write (FusedConv, Gelu,
// SkipLayerNormalization, Attention, QLinearAdd, MatMulNBits, ...): ONNX
// does not know those operators, so this file gives each one a schema whose
// shape inference follows ONNX Runtime's (onnxruntime/core/graph/contrib_ops),
// and says which are matrix products with a weight the CIM can hold. Any
// other domain — declared or not — is refused only when a node uses it.
//
// Internal to the library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "hetplan/graph/op_graph.h"

namespace hetplan::internal {

inline constexpr const char* kMicrosoftDomain = "com.microsoft";

// A Gemm's (or QGemm's) matrix product Y[m, cols] = A[m, k] · B[k, cols], with
// A and B 2-D and transposed as transA and transB say; `a_inner` is A's
// inner dimension, which equals k in a consistent model.
struct GemmDims {
  int64_t m = 0, k = 0, cols = 0, a_inner = 0;
};
inline GemmDims GemmDimsOf(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool trans_a,
                           bool trans_b) {
  return GemmDims{trans_a ? a[1] : a[0], trans_b ? b[1] : b[0], trans_b ? b[0] : b[1], trans_a ? a[0] : a[1]};
}

// A schema for an operator ONNX Runtime runs but the ONNX library does not
// know: com.microsoft operators, and the LayerNormalization /
// SimplifiedLayerNormalization ONNX Runtime registers in the default domain
// below opset 17. nullptr when there is none. `standard` looks up a
// standard schema (for operators whose shapes are a standard one's, such as
// FusedConv's).
const onnx::OpSchema* ExtraSchema(const std::string& type, const std::string& domain,
                                  const onnx::ISchemaRegistry& standard);

// Checks that a node's domain and type are something hetplan can import:
// "" when it can, else the reason, which names the node (`label`), its
// domain and its type and says what to do. `default_opset` is the model's
// default-domain version.
std::string CheckNodeDomain(const onnx::NodeProto& node, const std::string& label, int default_opset,
                            const onnx::ISchemaRegistry& registry);

// The com.microsoft operator types hetplan knows, sorted.
std::vector<std::string> KnownMicrosoftOperators(const onnx::ISchemaRegistry& registry);

// The standard matrix product a node computes with its second operand, for
// nodes whose inputs and attributes are laid out as that product's:
// "Conv" for Conv and FusedConv, "Gemm" for Gemm and FusedGemm, "MatMul" for
// MatMul, MatMulIntegerToFloat and DynamicQuantizeMatMul. "" otherwise.
std::string StandardMatrixKind(const onnx::NodeProto& node);

// The weight-matrix view of the matrix products that are laid out
// differently: FusedMatMul (transposes), MatMulNBits (4-bit blocks, K and N
// as attributes), QGemm (quantized Gemm), Attention (its QKV projection) and
// the recurrent operators LSTM, GRU and RNN (input and recurrent weights
// stacked: one MVM per time step and direction). `const_shape(k)` is the
// shape of input k when it is a constant, `shape(k)` its shape either way
// (nullptr when unknown). Sets op->has_weight, weight_rows/cols, n_mvm,
// directions, macs and matrix_op; false when the node is not one of them.
struct ShapeLookup {
  virtual ~ShapeLookup() = default;
  virtual const std::vector<int64_t>* const_shape(int k) const = 0;
  virtual const std::vector<int64_t>* shape(int k) const = 0;
  virtual const std::vector<int64_t>* output_shape() const = 0;
};
bool SetOtherMatrixView(const onnx::NodeProto& node, const ShapeLookup& shapes, Operator* op);

}  // namespace hetplan::internal
