// bfloat16 models as float32 copies (hetplan/graph/float32_copy.h).
#include "hetplan/graph/float32_copy.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "hetplan/graph/external_data.h"
#include "hetplan/graph/graph_walk.h"

namespace hetplan {
namespace {

using onnx::TensorProto;

float FromBfloat16Bits(uint32_t bits) {
  const uint32_t f = bits << 16;
  float v;
  std::memcpy(&v, &f, sizeof v);
  return v;
}

// A bfloat16 tensor's values as float32 raw data (external data read from
// `dir`).
Status ConvertTensor(TensorProto* t, const std::string& dir, const std::string& label) {
  if (t->data_type() != TensorProto::BFLOAT16) return Status::Ok();
  std::string raw;
  if (t->data_location() == TensorProto::EXTERNAL) {
    HETPLAN_ASSIGN_OR_RETURN(raw, ReadExternalTensor(*t, dir, label, fmt::format("tensor '{}'", t->name())));
  } else {
    raw = t->raw_data();
  }
  std::string out;
  if (!raw.empty() || t->int32_data_size() == 0) {
    out.resize(raw.size() / 2 * 4);
    for (size_t k = 0; k + 1 < raw.size(); k += 2) {
      const uint32_t bits = static_cast<uint8_t>(raw[k]) | static_cast<uint32_t>(static_cast<uint8_t>(raw[k + 1])) << 8;
      const float v = FromBfloat16Bits(bits);
      std::memcpy(out.data() + k * 2, &v, sizeof v);
    }
  } else {  // int32_data: one bfloat16's bits in each
    out.resize(static_cast<size_t>(t->int32_data_size()) * 4);
    for (int k = 0; k < t->int32_data_size(); ++k) {
      const float v = FromBfloat16Bits(static_cast<uint32_t>(t->int32_data(k)) & 0xffffu);
      std::memcpy(out.data() + static_cast<size_t>(k) * 4, &v, sizeof v);
    }
  }
  t->clear_int32_data();
  t->clear_external_data();
  t->set_data_location(TensorProto::DEFAULT);
  t->set_data_type(TensorProto::FLOAT);
  t->set_raw_data(std::move(out));
  return Status::Ok();
}

void ConvertType(onnx::TypeProto* type) {
  if (type->has_tensor_type() && type->tensor_type().elem_type() == TensorProto::BFLOAT16) {
    type->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  }
}

// Every bfloat16 of `g` and its subgraphs as float32: value types, stored
// tensors, and the element types nodes name (Cast's `to`, EyeLike's and the
// random generators' `dtype`, DequantizeLinear's `output_dtype`); `*found`
// says whether there was any.
Status ConvertGraph(onnx::GraphProto* g, const std::string& dir, const std::string& label, bool* found) {
  HETPLAN_RETURN_IF_ERROR(ForEachGraph(g, [&](onnx::GraphProto* graph) {
    for (auto* list : {graph->mutable_input(), graph->mutable_output(), graph->mutable_value_info()}) {
      for (auto& vi : *list) {
        *found = *found || vi.type().tensor_type().elem_type() == TensorProto::BFLOAT16;
        ConvertType(vi.mutable_type());
      }
    }
    for (auto& n : *graph->mutable_node()) {
      for (auto& a : *n.mutable_attribute()) {
        const bool names_type =
            (a.name() == "to" && n.op_type() == "Cast") || a.name() == "dtype" || a.name() == "output_dtype";
        if (names_type && a.i() == TensorProto::BFLOAT16) {
          a.set_i(TensorProto::FLOAT);
          *found = true;
        }
      }
    }
    return Status::Ok();
  }));
  return ForEachStoredTensor(g, [&](TensorProto* t, const std::string&) {
    *found = *found || t->data_type() == TensorProto::BFLOAT16;
    return ConvertTensor(t, dir, label);
  });
}

}  // namespace

Result<bool> Bfloat16ToFloat32(onnx::ModelProto* model, const std::string& external_data_dir,
                               const std::string& label) {
  bool found = false;
  HETPLAN_RETURN_IF_ERROR(ConvertGraph(model->mutable_graph(), external_data_dir, label, &found));
  return found;
}

Result<std::optional<LoadedModel>> Float32Copy(const LoadedModel& m) {
  auto proto = std::make_shared<onnx::ModelProto>(*m.model);
  HETPLAN_ASSIGN_OR_RETURN(bool converted, Bfloat16ToFloat32(proto.get(), m.external_data_dir, m.path));
  if (!converted) return std::optional<LoadedModel>();
  LoadedModel copy = m;
  copy.model = std::move(proto);
  return std::optional<LoadedModel>(std::move(copy));
}

bool IsMissingKernel(std::string_view ort_message) {
  return ort_message.find("Could not find an implementation") != std::string_view::npos;
}

}  // namespace hetplan
