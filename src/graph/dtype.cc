#include "hetplan/graph/dtype.h"

#include <onnx/onnx_pb.h>

namespace hetplan {
namespace {

struct DtypeRow {
  std::string_view name;
  int32_t type;
  int64_t bytes;
};

constexpr DtypeRow kDtypes[] = {
    {"float32", onnx::TensorProto::FLOAT, 4},   {"float64", onnx::TensorProto::DOUBLE, 8},
    {"float16", onnx::TensorProto::FLOAT16, 2}, {"bfloat16", onnx::TensorProto::BFLOAT16, 2},
    {"int64", onnx::TensorProto::INT64, 8},     {"int32", onnx::TensorProto::INT32, 4},
    {"int16", onnx::TensorProto::INT16, 2},     {"int8", onnx::TensorProto::INT8, 1},
    {"uint64", onnx::TensorProto::UINT64, 8},   {"uint32", onnx::TensorProto::UINT32, 4},
    {"uint16", onnx::TensorProto::UINT16, 2},   {"uint8", onnx::TensorProto::UINT8, 1},
    {"bool", onnx::TensorProto::BOOL, 1}};

const DtypeRow* Find(int32_t type) {
  for (const DtypeRow& d : kDtypes) {
    if (d.type == type) return &d;
  }
  return nullptr;
}

}  // namespace

std::string_view DtypeName(int32_t elem_type) {
  const DtypeRow* d = Find(elem_type);
  return d == nullptr ? std::string_view() : d->name;
}

int32_t DtypeFromName(std::string_view name) {
  for (const DtypeRow& d : kDtypes) {
    if (d.name == name) return d.type;
  }
  return onnx::TensorProto::UNDEFINED;
}

int64_t DtypeBytes(int32_t elem_type) {
  const DtypeRow* d = Find(elem_type);
  return d == nullptr ? 0 : d->bytes;
}

bool IsFloatingDtype(int32_t elem_type) {
  return elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::DOUBLE ||
         elem_type == onnx::TensorProto::FLOAT16 || elem_type == onnx::TensorProto::BFLOAT16;
}

}  // namespace hetplan
