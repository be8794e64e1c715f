// Quantized models (graph/qdq.h, hetplan/graph/quantization.h).
#include "graph/qdq.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "graph/attributes.h"
#include "hetplan/graph/dtype.h"
#include "hetplan/graph/quantization.h"

namespace hetplan {

std::string_view FloatOpType(std::string_view type) {
  if (type == "QLinearConv" || type == "ConvInteger") return "Conv";
  if (type == "QLinearMatMul" || type == "MatMulInteger") return "MatMul";
  if (type == "QGemm") return "Gemm";
  return type;
}

namespace {

bool IsQuantizedOpType(std::string_view t) {
  return t == "QuantizeLinear" || t == "DequantizeLinear" || t.substr(0, 7) == "QLinear" || t == "QGemm" ||
         t == "ConvInteger" || t == "MatMulInteger" || t == "DynamicQuantizeLinear";
}

}  // namespace

bool IsQuantized(const OpGraph& g) {
  for (const Operator& op : g.operators()) {
    for (const std::string& t : op.node_types) {
      if (IsQuantizedOpType(t)) return true;
    }
  }
  return false;
}

namespace internal {
namespace {

using onnx::TensorProto;

std::string TypeName(int32_t t) {
  std::string_view name = DtypeName(t);
  return name.empty() ? fmt::format("element type {}", t) : std::string(name);
}

// Range of the integer types a zero point may have.
bool IntegerRange(int32_t t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case TensorProto::UINT8: *lo = 0, *hi = 255; return true;
    case TensorProto::INT8: *lo = -128, *hi = 127; return true;
    case TensorProto::UINT16: *lo = 0, *hi = 65535; return true;
    case TensorProto::INT16: *lo = -32768, *hi = 32767; return true;
    case TensorProto::INT32: *lo = std::numeric_limits<int32_t>::min(), *hi = std::numeric_limits<int32_t>::max(); return true;
    case TensorProto::UINT4: *lo = 0, *hi = 15; return true;
    case TensorProto::INT4: *lo = -8, *hi = 7; return true;
    default: return false;
  }
}

// The values of a stored tensor as doubles; nullopt when it is not stored
// in the file (computed at run time), external, or of a type not read here.
// Integer values stored in int32_data are returned as written, so that a
// uint8 tensor holding 300 shows as 300.
std::optional<std::vector<double>> Values(const TensorProto& t) {
  if (t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 24) / d)) return std::nullopt;
    n *= d;
  }
  std::vector<double> out;
  const std::string& raw = t.raw_data();
  auto from_raw = [&](auto sample) -> bool {
    using T = decltype(sample);
    if (raw.size() != static_cast<size_t>(n) * sizeof(T)) return false;
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
      out.push_back(static_cast<double>(v));
    }
    return true;
  };
  const bool has_raw = t.has_raw_data();
  bool ok = true;
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      if (has_raw) ok = from_raw(float{});
      else out.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TensorProto::DOUBLE:
      if (has_raw) ok = from_raw(double{});
      else out.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TensorProto::UINT8: ok = has_raw ? from_raw(uint8_t{}) : (out.assign(t.int32_data().begin(), t.int32_data().end()), true); break;
    case TensorProto::INT8: ok = has_raw ? from_raw(int8_t{}) : (out.assign(t.int32_data().begin(), t.int32_data().end()), true); break;
    case TensorProto::UINT16: ok = has_raw ? from_raw(uint16_t{}) : (out.assign(t.int32_data().begin(), t.int32_data().end()), true); break;
    case TensorProto::INT16: ok = has_raw ? from_raw(int16_t{}) : (out.assign(t.int32_data().begin(), t.int32_data().end()), true); break;
    case TensorProto::INT32: ok = has_raw ? from_raw(int32_t{}) : (out.assign(t.int32_data().begin(), t.int32_data().end()), true); break;
    default: return std::nullopt;
  }
  if (!ok || static_cast<int64_t>(out.size()) != n) return std::nullopt;
  return out;
}

// One (data, scale, zero point) triple of a node: the tensor quantized or
// dequantized, and its parameters.
struct ParamSet {
  std::string what;        // "" for Q/DQ, else "x", "w", "y", "a", "b" (names the triple in errors)
  int data = -1;           // input index of the quantized tensor; -1 for the node's output 0
  int scale = -1;          // input index; -1: none (ConvInteger, MatMulInteger)
  int zero_point = -1;     // input index
  int axis = 1;            // per-channel axis when the parameters are 1-D with more than one value
  bool from_attr = false;  // axis from the node's `axis` attribute (Q/DQ)
  bool last_axis = false;  // per-column: the data's last axis (QLinearMatMul's b)
};

std::vector<ParamSet> ParamSetsOf(const std::string& type) {
  if (type == "QuantizeLinear") return {{"", 0, 1, 2, 1, true, false}};
  if (type == "DequantizeLinear") return {{"", 0, 1, 2, 1, true, false}};
  if (type == "QLinearConv") return {{"x", 0, 1, 2, 1, false, false}, {"w", 3, 4, 5, 0, false, false},
                                     {"y", -1, 6, 7, 1, false, false}};
  if (type == "QLinearMatMul") return {{"a", 0, 1, 2, 1, false, false}, {"b", 3, 4, 5, 0, false, true},
                                       {"y", -1, 6, 7, 1, false, false}};
  if (type == "ConvInteger") return {{"x", 0, -1, 2, 1, false, false}, {"w", 1, -1, 3, 0, false, false}};
  if (type == "MatMulInteger") return {{"a", 0, -1, 2, 1, false, false}, {"b", 1, -1, 3, 0, false, true}};
  return {};
}

class QuantizationChecker {
 public:
  QuantizationChecker(const onnx::GraphProto& g, const std::unordered_map<std::string, std::vector<int64_t>>& shapes,
                      const std::unordered_map<std::string, int32_t>& dtypes, const std::string& label)
      : g_(g), shapes_(shapes), dtypes_(dtypes), label_(label) {
    for (const auto& t : g.initializer()) stored_.emplace(t.name(), &t);
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      for (const auto& o : n.output()) producer_.emplace(o, i);
      if (n.op_type() != "Constant" || n.output_size() != 1) continue;
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) stored_.emplace(n.output(0), &a.t());
      }
    }
  }

  Status Run() {
    for (int i = 0; i < g_.node_size(); ++i) {
      const auto& n = g_.node(i);
      if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
      for (const ParamSet& p : ParamSetsOf(n.op_type())) HETPLAN_RETURN_IF_ERROR(Check(n, i, p));
    }
    return Status::Ok();
  }

 private:
  Status Fail(const onnx::NodeProto& n, int i, const std::string& what, const std::string& fix) const {
    return Status(ErrorCode::kParseError,
                  fmt::format("{}: {}: {}; {}", label_, NodeLabel(n, i), what, fix));
  }
  const std::vector<int64_t>* Shape(const std::string& t) const {
    auto it = shapes_.find(t);
    return it == shapes_.end() ? nullptr : &it->second;
  }
  int32_t Type(const std::string& t) const {
    auto it = dtypes_.find(t);
    return it == dtypes_.end() ? TensorProto::UNDEFINED : it->second;
  }
  std::string Input(const onnx::NodeProto& n, int k) const {
    return k >= 0 && k < n.input_size() ? n.input(k) : std::string();
  }
  std::string Writer(const std::string& t) const {
    auto it = producer_.find(t);
    return it == producer_.end() ? std::string() : fmt::format(", written by {}", NodeLabel(g_.node(it->second), it->second));
  }

  Status Check(const onnx::NodeProto& n, int i, const ParamSet& p) {
    const std::string prefix = p.what.empty() ? std::string() : p.what + "_";
    const std::string data = p.data >= 0 ? Input(n, p.data) : (n.output_size() > 0 ? n.output(0) : std::string());
    const std::string scale = Input(n, p.scale), zp = Input(n, p.zero_point);
    const auto* scale_shape = scale.empty() ? nullptr : Shape(scale);
    const auto* zp_shape = zp.empty() ? nullptr : Shape(zp);
    const std::string fix_params = "re-quantize the model or re-export it";
    // Shapes: one value per tensor, or one per channel along an axis.
    auto one_value = [](const std::vector<int64_t>* v) {
      return v && std::all_of(v->begin(), v->end(), [](int64_t d) { return d == 1; });
    };
    // A scalar and a one-element tensor both hold one value (ONNX's own tests write [] and [1]).
    if (scale_shape && zp_shape && *scale_shape != *zp_shape && !(one_value(scale_shape) && one_value(zp_shape))) {
      return Fail(n, i, fmt::format("its {}scale '{}' has shape [{}] but its {}zero point '{}' has shape [{}]", prefix,
                                    scale, fmt::join(*scale_shape, ","), prefix, zp, fmt::join(*zp_shape, ",")),
                  "a scale and its zero point must have the same shape (a scalar per tensor, or a 1-D tensor with "
                  "one value per channel): " + fix_params);
    }
    const std::vector<int64_t>* params_shape = scale_shape ? scale_shape : zp_shape;
    const std::string params_name = scale_shape ? scale : zp;
    const auto* data_shape = data.empty() ? nullptr : Shape(data);
    // Block-wise (opset 21: ONNX Runtime's 4-bit weight quantizer): one
    // value per block of block_size along the axis, the other dims as the data's.
    if (const int64_t block = p.from_attr ? AttrInt(n, "block_size", 0) : 0; block > 0) {
      return CheckBlocks(n, i, block, data, data_shape, params_name, params_shape, scale, zp, fix_params);
    }
    if (params_shape && params_shape->size() > 1) {
      return Fail(n, i, fmt::format("its {}{} '{}' has rank {} (shape [{}])", prefix, scale_shape ? "scale" : "zero point",
                                    params_name, params_shape->size(), fmt::join(*params_shape, ",")),
                  "quantization parameters are a scalar (per tensor), 1-D (per channel), or of the input's rank with "
                  "block_size set (block-wise, opset 21): " + fix_params);
    }
    const int64_t count = params_shape && params_shape->size() == 1 ? (*params_shape)[0] : 1;
    if (p.from_attr && data_shape) {
      const int64_t rank = static_cast<int64_t>(data_shape->size());
      const int64_t axis = AttrInt(n, "axis", 1);
      // One value (a scalar or a 1-element vector) is per tensor, whatever the
      // axis says: ONNX ignores the axis then, as ONNX Runtime does (its static
      // QDQ quantizer has written axis=1 on a rank-1 bias's per-tensor DQ).
      const bool per_channel = params_shape && params_shape->size() == 1 && count != 1;
      if (per_channel && (axis < -rank || axis >= rank)) {
        return Fail(n, i, fmt::format("its axis {} is outside the rank-{} input '{}' (valid: {} to {})", axis, rank, data,
                                      -rank, rank - 1),
                    "set axis to the channel dimension of the input (0 for a Conv weight) or re-export the model");
      }
      if (per_channel) {
        const int64_t channels = (*data_shape)[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
        if (channels != count) {
          return Fail(n, i, fmt::format("its scale '{}' has {} values but the input '{}' (shape [{}]) has {} along axis {}",
                                        params_name, count, data, fmt::join(*data_shape, ","), channels, axis),
                      "per-channel parameters need one value per channel along the axis: " + fix_params);
        }
      }
    } else if (!p.from_attr && data_shape && count > 1) {
      const int64_t rank = static_cast<int64_t>(data_shape->size());
      const int64_t axis = p.last_axis ? rank - 1 : p.axis;
      if (axis >= rank || (*data_shape)[static_cast<size_t>(axis)] != count) {
        return Fail(n, i, fmt::format("its {}scale '{}' has {} values but '{}' (shape [{}]) has {} channels", prefix,
                                      params_name, count, data, fmt::join(*data_shape, ","),
                                      axis < rank ? (*data_shape)[static_cast<size_t>(axis)] : 0),
                    "per-channel parameters need one value per channel: " + fix_params);
      }
    }
    return CheckValues(n, i, prefix, data, scale, zp, fix_params);
  }

  // Block-wise parameters: the data's rank, and its dims but along the axis,
  // where there is one value per block (the last one may be shorter).
  Status CheckBlocks(const onnx::NodeProto& n, int i, int64_t block, const std::string& data,
                     const std::vector<int64_t>* data_shape, const std::string& params_name,
                     const std::vector<int64_t>* params_shape, const std::string& scale, const std::string& zp,
                     const std::string& fix_params) {
    if (data_shape && params_shape) {
      const int64_t rank = static_cast<int64_t>(data_shape->size());
      const int64_t axis = AttrInt(n, "axis", 1);
      if (axis < -rank || axis >= rank) {
        return Fail(n, i, fmt::format("its axis {} is outside the rank-{} input '{}' (valid: {} to {})", axis, rank,
                                      data, -rank, rank - 1),
                    "set axis to the blocked dimension of the input or re-export the model");
      }
      std::vector<int64_t> want = *data_shape;
      auto& d = want[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
      d = (d + block - 1) / block;
      if (*params_shape != want) {
        return Fail(n, i, fmt::format("its block-wise parameters '{}' have shape [{}], but input '{}' [{}] in blocks "
                                      "of {} along axis {} needs [{}]", params_name, fmt::join(*params_shape, ","),
                                      data, fmt::join(*data_shape, ","), block, axis, fmt::join(want, ",")),
                    "block-wise parameters hold one value per block along the axis: " + fix_params);
      }
    }
    return CheckValues(n, i, "", data, scale, zp, fix_params);
  }

  // Scales: float, positive, finite. Zero points: an integer type, the
  // tensor's own, within its range.
  Status CheckValues(const onnx::NodeProto& n, int i, const std::string& prefix, const std::string& data,
                     const std::string& scale, const std::string& zp, const std::string& fix_params) {
    if (!scale.empty()) {
      const int32_t st = Type(scale);
      if (st != TensorProto::UNDEFINED && !IsFloatingDtype(st)) {
        return Fail(n, i, fmt::format("its {}scale '{}' is {}", prefix, scale, TypeName(st)),
                    "a scale must be a float tensor: " + fix_params);
      }
      if (auto it = stored_.find(scale); it != stored_.end()) {
        if (auto v = Values(*it->second)) {
          for (size_t k = 0; k < v->size(); ++k) {
            const double s = (*v)[k];
            if (!(s > 0) || !std::isfinite(s)) {
              return Fail(n, i, fmt::format("its {}scale '{}' holds {} (element {})", prefix, scale,
                                            static_cast<float>(s), k),
                          "every scale must be positive and finite (quantizing divides by it): " + fix_params);
            }
          }
        }
      }
    }
    if (!zp.empty()) {
      const int32_t zt = Type(zp);
      int64_t lo = 0, hi = 0;
      if (zt != TensorProto::UNDEFINED && !IntegerRange(zt, &lo, &hi)) {
        return Fail(n, i, fmt::format("its {}zero point '{}' is {}", prefix, zp, TypeName(zt)),
                    "a zero point must be int8/uint8, int4/uint4 or int16/uint16 (int32 for a dequantized bias), the "
                    "type of the quantized tensor: " + fix_params);
      }
      const int32_t dt = data.empty() ? TensorProto::UNDEFINED : Type(data);
      const bool quantized_data = n.op_type() != "QuantizeLinear";  // a Q's input is the float tensor
      if (quantized_data && zt != TensorProto::UNDEFINED && dt != TensorProto::UNDEFINED && dt != zt) {
        return Fail(n, i, fmt::format("it reads '{}' as {}{} but its {}zero point '{}' is {}", data, TypeName(dt),
                                      Writer(data), prefix, zp, TypeName(zt)),
                    "a quantized tensor and its zero point must have the same type: make the QuantizeLinear that "
                    "writes it and this node agree (both uint8 or both int8), or re-export the model");
      }
      if (auto it = stored_.find(zp); it != stored_.end() && zt != TensorProto::UNDEFINED) {
        if (auto v = Values(*it->second)) {
          for (size_t k = 0; k < v->size(); ++k) {
            const double z = (*v)[k];
            if (z < static_cast<double>(lo) || z > static_cast<double>(hi) || z != std::floor(z)) {
              return Fail(n, i, fmt::format("its {}zero point '{}' holds {} (element {}), outside {}'s range {} to {}",
                                            prefix, zp, z, k, TypeName(zt), lo, hi),
                          "the file is corrupt or its quantizer is broken: re-quantize the model or re-export it");
            }
          }
        }
      }
    }
    return Status::Ok();
  }

  const onnx::GraphProto& g_;
  const std::unordered_map<std::string, std::vector<int64_t>>& shapes_;
  const std::unordered_map<std::string, int32_t>& dtypes_;
  const std::string& label_;
  std::unordered_map<std::string, const TensorProto*> stored_;
  std::unordered_map<std::string, int> producer_;
};

}  // namespace

Status CheckQuantization(const onnx::GraphProto& g,
                         const std::unordered_map<std::string, std::vector<int64_t>>& shapes,
                         const std::unordered_map<std::string, int32_t>& dtypes, const std::string& label) {
  return QuantizationChecker(g, shapes, dtypes, label).Run();
}

bool SplitSharedDequantize(onnx::GraphProto* g, const std::unordered_set<std::string>& initializers) {
  const NodeRoles roles = ClassifyNodes(*g, initializers);
  // (node index, reader node indices beyond the first) for every shared activation DQ.
  std::map<int, std::vector<int>> copies;
  for (int i = 0; i < g->node_size(); ++i) {
    const auto& n = g->node(i);
    if (n.op_type() != "DequantizeLinear" || !roles.is_op[static_cast<size_t>(i)] || n.output_size() != 1) continue;
    auto c = roles.consumers.find(n.output(0));
    if (c == roles.consumers.end()) continue;
    int direct = 0;
    std::vector<int> extra;
    for (int r : c->second) {
      bool reads = false;
      for (const auto& in : g->node(r).input()) reads = reads || in == n.output(0);
      if (!reads) continue;  // through an Identity: left with the original
      if (direct++ > 0) extra.push_back(r);
    }
    if (!extra.empty()) copies.emplace(i, std::move(extra));
  }
  if (copies.empty()) return false;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<std::pair<int, std::string>> rewires;  // (reader, new input name) after the copy
  for (int i = 0; i < g->node_size(); ++i) {
    *nodes.Add() = g->node(i);
    auto it = copies.find(i);
    if (it == copies.end()) continue;
    const std::string& out = g->node(i).output(0);
    int k = 1;
    for (int reader : it->second) {
      onnx::NodeProto copy = g->node(i);
      const std::string name = fmt::format("{}_hetplan_{}", out, k);
      copy.set_output(0, name);
      if (!copy.name().empty()) copy.set_name(fmt::format("{}_hetplan_{}", copy.name(), k));
      *nodes.Add() = std::move(copy);
      rewires.emplace_back(reader, name);
      ++k;
    }
  }
  // Readers come after their DQ, so their position moves by the copies before them.
  std::vector<int> shift(static_cast<size_t>(g->node_size()), 0);
  int added = 0;
  for (int i = 0; i < g->node_size(); ++i) {
    shift[static_cast<size_t>(i)] = added;
    if (auto it = copies.find(i); it != copies.end()) added += static_cast<int>(it->second.size());
  }
  for (const auto& [reader, name] : rewires) {
    onnx::NodeProto* r = nodes.Mutable(reader + shift[static_cast<size_t>(reader)]);
    const std::string original = name.substr(0, name.rfind("_hetplan_"));
    for (int k = 0; k < r->input_size(); ++k) {
      if (r->input(k) == original) r->set_input(k, name);
    }
  }
  g->mutable_node()->Swap(&nodes);
  return true;
}

std::vector<bool> FindQuantizationNodes(const NodeRoles& roles) {
  const onnx::GraphProto& g = *roles.graph;
  const int n = g.node_size();
  std::vector<bool> quant(static_cast<size_t>(n), false);
  bool any = false;
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : g.node(i).output()) producer.emplace(o, i);
  }
  for (int i = 0; i < n; ++i) {
    if (!roles.is_op[static_cast<size_t>(i)]) continue;
    const std::string& t = g.node(i).op_type();
    if (t == "QuantizeLinear" || t == "DequantizeLinear") quant[static_cast<size_t>(i)] = any = true;
  }
  if (!any) return {};
  // A Cast between quantization nodes: its input written by one, or every
  // reader of its output a DequantizeLinear.
  for (int i = 0; i < n; ++i) {
    const auto& node = g.node(i);
    if (!roles.is_op[static_cast<size_t>(i)] || node.op_type() != "Cast" || node.input_size() < 1) continue;
    auto p = producer.find(roles.Resolve(node.input(0)));
    bool after_q = p != producer.end() && quant[static_cast<size_t>(p->second)];
    bool before_dq = false;
    if (auto c = roles.consumers.find(node.output(0)); c != roles.consumers.end() && !c->second.empty()) {
      before_dq = std::all_of(c->second.begin(), c->second.end(),
                              [&](int r) { return g.node(r).op_type() == "DequantizeLinear"; });
    }
    if (after_q || before_dq) quant[static_cast<size_t>(i)] = true;
  }
  return quant;
}

std::vector<NodeGroup> AttachQuantizationNodes(const NodeRoles& roles, const std::vector<bool>& quant,
                                               const std::vector<NodeGroup>& groups) {
  const onnx::GraphProto& g = *roles.graph;
  const int n = g.node_size();
  std::vector<int> group_of(static_cast<size_t>(n), -1);
  std::vector<NodeGroup> out = groups;
  for (int u = 0; u < static_cast<int>(out.size()); ++u) {
    for (int i : out[static_cast<size_t>(u)]) group_of[static_cast<size_t>(i)] = u;
  }
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : g.node(i).output()) producer.emplace(o, i);
  }
  auto is_q = [&](int i) { return g.node(i).op_type() == "QuantizeLinear"; };
  auto pending = [&](int i) { return quant[static_cast<size_t>(i)] && group_of[static_cast<size_t>(i)] < 0; };
  auto attach = [&](int i, int u) {
    group_of[static_cast<size_t>(i)] = u;
    out[static_cast<size_t>(u)].push_back(i);
  };
  // The one group that reads every output of node i, or -1.
  auto down = [&](int i) {
    int u = -1;
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      if (roles.graph_outputs.count(o)) return -1;
      auto c = roles.consumers.find(o);
      if (c == roles.consumers.end()) continue;
      for (int r : c->second) {
        const int ur = group_of[static_cast<size_t>(r)];
        if (ur < 0 || (u >= 0 && ur != u)) return -1;
        u = ur;
      }
    }
    return u;
  };
  // The group of the node writing input 0 of node i, or -1.
  auto up = [&](int i) {
    if (g.node(i).input_size() < 1) return -1;
    auto p = producer.find(roles.Resolve(g.node(i).input(0)));
    return p == producer.end() ? -1 : group_of[static_cast<size_t>(p->second)];
  };
  // DQ and Cast go down, Q up (reverse order lets a Cast see its DQ's group);
  // then whatever is left tries the other way.
  for (int i = n - 1; i >= 0; --i) {
    if (pending(i) && !is_q(i)) {
      if (int u = down(i); u >= 0) attach(i, u);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (pending(i)) {
      if (int u = up(i); u >= 0) attach(i, u);
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    if (pending(i)) {
      if (int u = down(i); u >= 0) attach(i, u);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (pending(i)) {
      group_of[static_cast<size_t>(i)] = static_cast<int>(out.size());
      out.push_back({i});
    }
  }
  for (NodeGroup& unit : out) std::sort(unit.begin() + 1, unit.end());
  // Groups in order of their main node, as the fusion passes return them.
  std::stable_sort(out.begin(), out.end(), [](const NodeGroup& a, const NodeGroup& b) { return a[0] < b[0]; });
  return out;
}

std::optional<MatrixOperands> MatrixOperandsOf(std::string_view type) {
  if (type == "Conv" || type == "Gemm" || type == "MatMul" || type == "ConvInteger" || type == "MatMulInteger") {
    return MatrixOperands{0, 1};
  }
  if (type == "QLinearConv" || type == "QLinearMatMul" || type == "QGemm") return MatrixOperands{0, 3};
  return std::nullopt;
}

std::unordered_map<std::string, int> DequantizedConstants(const NodeRoles& roles) {
  std::unordered_map<std::string, int> out;
  const onnx::GraphProto& g = *roles.graph;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type() == "DequantizeLinear" && !roles.is_op[static_cast<size_t>(i)] && n.output_size() == 1) {
      out.emplace(n.output(0), i);
    }
  }
  return out;
}

}  // namespace internal
}  // namespace hetplan
