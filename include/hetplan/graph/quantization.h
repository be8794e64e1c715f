// Quantized models (QDQ and QOperator forms) as the rest of hetplan sees
// them; the grouping itself is internal (src/graph/qdq.h).
#pragma once

#include <string_view>

#include "hetplan/graph/op_graph.h"

namespace hetplan {

// The float operator a quantized ONNX operator computes: QLinearConv and
// ConvInteger → Conv, QLinearMatMul and MatMulInteger → MatMul, QGemm → Gemm.
// Every other type is returned as it is. The CIM's supported_ops name the
// float types; a quantized one is supported when its float type is.
std::string_view FloatOpType(std::string_view type);

// True when an operator of `g` covers a QuantizeLinear or DequantizeLinear
// node or is a quantized operator (QLinear*, *Integer, QGemm): ONNX Runtime
// must then run its QDQ fusion to run the model's integer kernels.
bool IsQuantized(const OpGraph& g);

}  // namespace hetplan
