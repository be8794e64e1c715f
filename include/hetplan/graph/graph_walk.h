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

}  // namespace hetplan
