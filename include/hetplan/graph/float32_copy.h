// bfloat16 models as float32 copies. ONNX Runtime 1.29's CPU provider has
// no bfloat16 kernel but data movement: the host profiler measures, and
// `run` runs, a float32 copy of such a model, and both say so
// (docs/graph-format.md, "Narrow types").
#pragma once

#include <string>
#include <string_view>

#include <optional>

#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/status.h"

namespace ONNX_NAMESPACE {  // onnx:: (hetplan/util/onnx_namespace.h)
class ModelProto;
}

namespace hetplan {

// Rewrites every bfloat16 of `model` and its subgraphs as float32: value
// types, stored tensors (values converted; external ones read from
// `external_data_dir` and stored inside), and the element types nodes name
// (Cast's `to`, `dtype`). Returns whether there was any. `label` names the
// model in errors.
Result<bool> Bfloat16ToFloat32(onnx::ModelProto* model, const std::string& external_data_dir,
                               const std::string& label);

// `m` with its model a float32 copy (Bfloat16ToFloat32, external tensors
// read from m.external_data_dir): what the profilers measure. nullopt when
// `m` has no bfloat16.
Result<std::optional<LoadedModel>> Float32Copy(const LoadedModel& m);

// Whether ONNX Runtime's error says it has no kernel for a node's types
// (NOT_IMPLEMENTED: "Could not find an implementation for ...").
bool IsMissingKernel(std::string_view ort_message);

}  // namespace hetplan
