// Walking an ONNX graph with the graphs nested in it (If branches, Loop and
// Scan bodies): one walker for the importer, split and the float32 copy.
#pragma once

#include <functional>
#include <string>

#include "hetplan/util/status.h"

namespace ONNX_NAMESPACE {  // onnx:: (hetplan/util/onnx_namespace.h)
class GraphProto;
class TensorProto;
}

namespace hetplan {

// Calls `f` on every graph nested in `g`'s nodes' attributes, innermost
// first, then on `g`; stops at the first error.
Status ForEachGraph(onnx::GraphProto* g, const std::function<Status(onnx::GraphProto*)>& f);

// Calls `f` on every tensor stored in `g` and its nested graphs: the
// initializers ("initializer 'w'"), the values and indices of sparse ones,
// and the tensors of node attributes (Constant's `value`: "attribute 'value'
// of node 'c'", sparse ones too); stops at the first error.
Status ForEachStoredTensor(onnx::GraphProto* g,
                           const std::function<Status(onnx::TensorProto*, const std::string& what)>& f);

// For each node of `g` (its nodes in topological order) that has no value
// yet (`has(i)` false): the value of its nearest reader that has one (a pass
// from the last node back), else of its nearest writer (a pass forward);
// `take(i, j)` gives node i node j's value. What the exports and the
// OpenVINO profiler give the nodes no planned or executed operation names
// (folded shape arithmetic, a QDQ graph's DequantizeLinear).
void FillFromNeighbours(const onnx::GraphProto& g, const std::function<bool(int)>& has,
                        const std::function<void(int to, int from)>& take);

}  // namespace hetplan
