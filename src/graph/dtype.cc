#include "hetplan/graph/dtype.h"

#include <onnx/onnx_pb.h>

namespace hetplan {
namespace {

struct DtypeRow {
  std::string_view name;
  int32_t type;
  int64_t bits;
};

constexpr DtypeRow kDtypes[] = {
    {"float32", onnx::TensorProto::FLOAT, 32},   {"float64", onnx::TensorProto::DOUBLE, 64},
    {"float16", onnx::TensorProto::FLOAT16, 16}, {"bfloat16", onnx::TensorProto::BFLOAT16, 16},
    {"int64", onnx::TensorProto::INT64, 64},     {"int32", onnx::TensorProto::INT32, 32},
    {"int16", onnx::TensorProto::INT16, 16},     {"int8", onnx::TensorProto::INT8, 8},
    {"uint64", onnx::TensorProto::UINT64, 64},   {"uint32", onnx::TensorProto::UINT32, 32},
    {"uint16", onnx::TensorProto::UINT16, 16},   {"uint8", onnx::TensorProto::UINT8, 8},
    {"bool", onnx::TensorProto::BOOL, 8},        {"int4", onnx::TensorProto::INT4, 4},
    {"uint4", onnx::TensorProto::UINT4, 4}};

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
  return d == nullptr ? 0 : (d->bits + 7) / 8;
}

int64_t DtypeBits(int32_t elem_type) {
  const DtypeRow* d = Find(elem_type);
  return d == nullptr ? 0 : d->bits;
}

int64_t DtypeStorageBytes(int32_t elem_type, int64_t elements) {
  const DtypeRow* d = Find(elem_type);
  return d == nullptr ? 0 : (elements / 8) * d->bits + ((elements % 8) * d->bits + 7) / 8;
}

bool IsFloatingDtype(int32_t elem_type) {
  return elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::DOUBLE ||
         elem_type == onnx::TensorProto::FLOAT16 || elem_type == onnx::TensorProto::BFLOAT16;
}

}  // namespace hetplan
