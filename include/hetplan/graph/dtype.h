// ONNX element types by the lower-case names hetplan's files use
// ("float32", "int64"). One table serves the importer, the profiler, split
// and run; ONNX Runtime's ONNXTensorElementDataType has the same numeric
// values as onnx::TensorProto::DataType, so ORT code casts and uses it too.
#pragma once

#include <cstdint>
#include <string_view>

namespace hetplan {

// The name of an ONNX element type; "" for a type hetplan does not handle
// (string, complex, 8-bit floats).
std::string_view DtypeName(int32_t elem_type);

// The inverse of DtypeName; 0 (UNDEFINED) for an unknown name.
int32_t DtypeFromName(std::string_view name);

// Bytes per element; 0 for a type DtypeName does not name.
int64_t DtypeBytes(int32_t elem_type);

// float32, float64, float16, bfloat16.
bool IsFloatingDtype(int32_t elem_type);

}  // namespace hetplan
