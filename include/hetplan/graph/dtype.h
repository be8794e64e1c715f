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

// Bytes per element, rounded up (1 for the 4-bit types); 0 for a type
// DtypeName does not name.
int64_t DtypeBytes(int32_t elem_type);

// Bits per element (4 for int4 and uint4); 0 for a type DtypeName does not name.
int64_t DtypeBits(int32_t elem_type);

// Bytes `elements` of the type take when stored packed, as ONNX stores them
// (two int4 in a byte); 0 for a type DtypeName does not name.
int64_t DtypeStorageBytes(int32_t elem_type, int64_t elements);

// float32, float64, float16, bfloat16.
bool IsFloatingDtype(int32_t elem_type);

}  // namespace hetplan
