// Model-local functions (ModelProto.functions, IR 8 and newer), as torch's
// torch.export-based exporter and onnxscript write them: inlined at import,
// before anything else reads the nodes. Each call becomes the function's
// nodes, named "<call node's name>/<inner node's name>" (nested calls nest
// the prefix), so that the operators of a plan say which call they came
// from; ONNX's inliner (onnx/inliner) substitutes inputs, outputs and
// attribute references and keeps every name unique.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "hetplan/util/status.h"

namespace hetplan::internal {

// Inlines every call of a model-local function in `model`'s graph (and in
// its subgraphs) and removes the functions. Nothing changes when the model
// has none. An error (one line, prefixed by `label`) for a model whose
// functions ONNX cannot inline, or that nest deeper than 64 calls.
Status InlineModelFunctions(onnx::ModelProto* model, const std::string& label);

}  // namespace hetplan::internal
