#include "graph/constant_folding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace hetplan::internal {
namespace {

bool IsFloatType(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::DOUBLE ||
         t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::BFLOAT16;
}
bool IsIntType(int32_t t) {
  return t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32 ||
         t == onnx::TensorProto::INT16 || t == onnx::TensorProto::INT8 ||
         t == onnx::TensorProto::UINT8 || t == onnx::TensorProto::BOOL;
}

std::optional<int64_t> Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && p > kMaxFoldElements / d)) return std::nullopt;
    p *= d;
  }
  return p;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
int64_t AttrInt(const onnx::NodeProto& n, const char* name, int64_t def) {
  const auto* a = Attr(n, name);
  return a ? a->i() : def;
}

ConstTensor Ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
  ConstTensor c;
  c.dims = std::move(dims);
  c.ints = std::move(values);
  return c;
}

// Normalises a possibly negative axis; nullopt when out of range.
std::optional<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<ConstTensor> Binary(const std::string& op, const ConstTensor& a, const ConstTensor& b) {
  // Elementwise with scalar/equal-size broadcasting (shape arithmetic only).
  int64_t na = a.size(), nb = b.size();
  if (!(na == nb || na == 1 || nb == 1)) return std::nullopt;
  ConstTensor out;
  out.dims = na >= nb ? a.dims : b.dims;
  out.is_float = a.is_float || b.is_float;
  out.dtype = a.dtype;
  int64_t n = std::max(na, nb);
  auto get = [](const ConstTensor& t, int64_t i) {
    int64_t k = t.size() == 1 ? 0 : i;
    return t.is_float ? t.floats[k] : static_cast<double>(t.ints[k]);
  };
  for (int64_t i = 0; i < n; ++i) {
    if (out.is_float) {
      double x = get(a, i), y = get(b, i), r = 0;
      if (op == "Add") r = x + y;
      else if (op == "Sub") r = x - y;
      else if (op == "Mul") r = x * y;
      else if (op == "Div") r = x / y;
      else return std::nullopt;
      out.floats.push_back(r);
    } else {
      // Integer arithmetic that overflows is not folded (found by
      // tests/fuzz/fuzz_onnx: shape values near 2^60 multiplied).
      int64_t x = a.ints[na == 1 ? 0 : i], y = b.ints[nb == 1 ? 0 : i], r = 0;
      bool overflow = false;
      if (op == "Add") overflow = __builtin_add_overflow(x, y, &r);
      else if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r);
      else if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r);
      else if (op == "Div") {
        if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
        r = x / y;
      } else if (op == "Equal") r = x == y;
      else return std::nullopt;
      if (overflow) return std::nullopt;
      out.ints.push_back(r);
    }
  }
  if (op == "Equal") out.dtype = onnx::TensorProto::BOOL;
  return out;
}

}  // namespace

std::optional<ConstTensor> FromTensorProto(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  ConstTensor c;
  c.dtype = t.data_type();
  c.dims.assign(t.dims().begin(), t.dims().end());
  auto n = Product(c.dims);
  if (!n) return std::nullopt;
  const std::string& raw = t.raw_data();
  auto read_raw = [&](auto sample, auto push) -> bool {
    using T = decltype(sample);
    if (raw.size() != static_cast<size_t>(*n) * sizeof(T)) return false;
    for (int64_t i = 0; i < *n; ++i) {
      T v;
      std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
      push(v);
    }
    return true;
  };
  auto push_int = [&](auto v) { c.ints.push_back(static_cast<int64_t>(v)); };
  auto push_float = [&](auto v) { c.floats.push_back(static_cast<double>(v)); };
  switch (c.dtype) {
    case onnx::TensorProto::INT64:
      if (t.has_raw_data()) { if (!read_raw(int64_t{}, push_int)) return std::nullopt; }
      else c.ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case onnx::TensorProto::INT32:
      if (t.has_raw_data()) { if (!read_raw(int32_t{}, push_int)) return std::nullopt; }
      else c.ints.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8:
      if (t.has_raw_data()) { if (!read_raw(uint8_t{}, push_int)) return std::nullopt; }
      else c.ints.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::FLOAT:
      c.is_float = true;
      if (t.has_raw_data()) { if (!read_raw(float{}, push_float)) return std::nullopt; }
      else c.floats.assign(t.float_data().begin(), t.float_data().end());
      break;
    case onnx::TensorProto::DOUBLE:
      c.is_float = true;
      if (t.has_raw_data()) { if (!read_raw(double{}, push_float)) return std::nullopt; }
      else c.floats.assign(t.double_data().begin(), t.double_data().end());
      break;
    default:
      return std::nullopt;
  }
  if (c.size() != *n) return std::nullopt;
  return c;
}

onnx::TensorProto ToTensorProto(const ConstTensor& c, const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  for (int64_t d : c.dims) t.add_dims(d);
  if (c.is_float) {
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (double v : c.floats) t.add_float_data(static_cast<float>(v));
  } else if (c.dtype == onnx::TensorProto::INT32 || c.dtype == onnx::TensorProto::UINT8 ||
             c.dtype == onnx::TensorProto::INT8 || c.dtype == onnx::TensorProto::UINT16 ||
             c.dtype == onnx::TensorProto::INT16) {
    // Keep the type: a folded uint8 zero point must stay uint8 (a quantized model).
    t.set_data_type(c.dtype);
    for (int64_t v : c.ints) t.add_int32_data(static_cast<int32_t>(v));
  } else if (c.dtype == onnx::TensorProto::BOOL) {
    t.set_data_type(onnx::TensorProto::BOOL);
    for (int64_t v : c.ints) t.add_int32_data(static_cast<int32_t>(v != 0));
  } else {
    t.set_data_type(onnx::TensorProto::INT64);
    for (int64_t v : c.ints) t.add_int64_data(v);
  }
  return t;
}

std::optional<std::vector<ConstTensor>> EvaluateNode(
    const onnx::NodeProto& node, const std::unordered_map<std::string, ConstTensor>& constants,
    const std::unordered_map<std::string, std::vector<int64_t>>& shapes) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (node.output_size() != 1) return std::nullopt;

  if (op == "Shape") {
    if (node.input_size() != 1) return std::nullopt;
    auto it = shapes.find(node.input(0));
    if (it == shapes.end()) return std::nullopt;
    const auto& s = it->second;
    int64_t rank = static_cast<int64_t>(s.size());
    int64_t start = AttrInt(node, "start", 0), end = AttrInt(node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> v(s.begin() + start, s.begin() + end);
    return std::vector<ConstTensor>{Ints({static_cast<int64_t>(v.size())}, v)};
  }
  if (op == "Constant") {
    const auto* a = Attr(node, "value");
    if (a && a->has_t()) {
      auto c = FromTensorProto(a->t());
      if (c) return std::vector<ConstTensor>{*c};
      return std::nullopt;
    }
    if ((a = Attr(node, "value_int"))) return std::vector<ConstTensor>{Ints({}, {a->i()})};
    if ((a = Attr(node, "value_ints"))) {
      std::vector<int64_t> v(a->ints().begin(), a->ints().end());
      return std::vector<ConstTensor>{Ints({static_cast<int64_t>(v.size())}, v)};
    }
    if ((a = Attr(node, "value_float"))) {
      ConstTensor c;
      c.is_float = true;
      c.dtype = onnx::TensorProto::FLOAT;
      c.floats = {a->f()};
      return std::vector<ConstTensor>{c};
    }
    return std::nullopt;
  }

  // Every other op needs all its (non-empty) inputs to be known constants.
  std::vector<const ConstTensor*> in;
  for (const auto& name : node.input()) {
    if (name.empty()) {
      in.push_back(nullptr);
      continue;
    }
    auto it = constants.find(name);
    if (it == constants.end()) return std::nullopt;
    in.push_back(&it->second);
  }
  if (in.empty() || in[0] == nullptr) return std::nullopt;
  const ConstTensor& x = *in[0];

  if (op == "Gather") {
    if (in.size() != 2 || in[1] == nullptr || x.dims.size() != 1 || x.is_float) return std::nullopt;
    const ConstTensor& idx = *in[1];
    if (idx.is_float || AttrInt(node, "axis", 0) != 0) return std::nullopt;
    ConstTensor out = Ints(idx.dims, {});
    out.dtype = x.dtype;
    for (int64_t i : idx.ints) {
      int64_t k = i < 0 ? i + x.size() : i;
      if (k < 0 || k >= x.size()) return std::nullopt;
      out.ints.push_back(x.ints[k]);
    }
    return std::vector<ConstTensor>{out};
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::vector<int64_t> axes;
    if (in.size() >= 2 && in[1]) axes = in[1]->ints;
    else if (const auto* a = Attr(node, "axes")) axes.assign(a->ints().begin(), a->ints().end());
    ConstTensor out = x;
    if (op == "Unsqueeze") {
      int64_t rank = static_cast<int64_t>(x.dims.size() + axes.size());
      std::vector<int64_t> norm;
      for (int64_t a : axes) {
        auto n = Axis(a, rank);
        if (!n) return std::nullopt;
        norm.push_back(*n);
      }
      std::sort(norm.begin(), norm.end());
      for (int64_t a : norm) out.dims.insert(out.dims.begin() + a, 1);
    } else {
      std::vector<int64_t> dims;
      int64_t rank = static_cast<int64_t>(x.dims.size());
      for (int64_t i = 0; i < rank; ++i) {
        bool drop = axes.empty() ? x.dims[i] == 1
                                 : std::any_of(axes.begin(), axes.end(), [&](int64_t a) {
                                     return Axis(a, rank) == std::optional<int64_t>(i);
                                   });
        if (!drop) dims.push_back(x.dims[i]);
      }
      out.dims = dims;
    }
    return std::vector<ConstTensor>{out};
  }
  if (op == "Concat") {
    ConstTensor out;
    out.dtype = x.dtype;
    out.is_float = x.is_float;
    for (const ConstTensor* t : in) {
      if (t == nullptr || t->dims.size() != 1 || t->is_float != x.is_float) return std::nullopt;
      out.ints.insert(out.ints.end(), t->ints.begin(), t->ints.end());
      out.floats.insert(out.floats.end(), t->floats.begin(), t->floats.end());
    }
    out.dims = {out.size()};
    return std::vector<ConstTensor>{out};
  }
  if (op == "Cast") {
    int64_t to = AttrInt(node, "to", 0);
    ConstTensor out = x;
    out.dtype = static_cast<int32_t>(to);
    if (IsFloatType(static_cast<int32_t>(to))) {
      if (!out.is_float) {
        out.floats.assign(x.ints.begin(), x.ints.end());
        out.ints.clear();
        out.is_float = true;
      }
    } else if (IsIntType(static_cast<int32_t>(to))) {
      if (out.is_float) {
        for (double v : x.floats) out.ints.push_back(static_cast<int64_t>(v));
        out.floats.clear();
        out.is_float = false;
      }
    } else {
      return std::nullopt;
    }
    return std::vector<ConstTensor>{out};
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Equal") {
    if (in.size() != 2 || in[1] == nullptr) return std::nullopt;
    auto r = Binary(op, x, *in[1]);
    if (!r) return std::nullopt;
    return std::vector<ConstTensor>{*r};
  }
  if (op == "Where") {
    if (in.size() != 3 || !in[1] || !in[2]) return std::nullopt;
    const ConstTensor& a = *in[1];
    const ConstTensor& b = *in[2];
    if (a.is_float != b.is_float || x.is_float) return std::nullopt;
    int64_t n = std::max({x.size(), a.size(), b.size()});
    for (const ConstTensor* t : {&x, &a, &b}) {
      if (t->size() != n && t->size() != 1) return std::nullopt;
    }
    ConstTensor out = x.size() == n ? a : (a.size() == n ? a : b);
    out.dims = x.size() == n ? x.dims : (a.size() == n ? a.dims : b.dims);
    out.dtype = a.dtype;
    out.is_float = a.is_float;
    out.ints.clear();
    out.floats.clear();
    auto at = [](const ConstTensor& t, int64_t i) { return t.size() == 1 ? 0 : i; };
    for (int64_t i = 0; i < n; ++i) {
      bool c = x.ints[at(x, i)] != 0;
      const ConstTensor& src = c ? a : b;
      if (src.is_float) out.floats.push_back(src.floats[at(src, i)]);
      else out.ints.push_back(src.ints[at(src, i)]);
    }
    return std::vector<ConstTensor>{out};
  }
  if (op == "Slice") {
    if (x.dims.size() != 1 || in.size() < 3 || !in[1] || !in[2]) return std::nullopt;
    if (in.size() >= 4 && in[3] && (in[3]->ints.size() != 1 || in[3]->ints[0] != 0)) return std::nullopt;
    int64_t n = x.size();
    int64_t start = in[1]->ints.at(0), end = in[2]->ints.at(0);
    int64_t step = in.size() >= 5 && in[4] ? in[4]->ints.at(0) : 1;
    if (step != 1) return std::nullopt;
    if (start < 0) start += n;
    if (end < 0) end += n;
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, start, n);
    ConstTensor out = x;
    if (x.is_float) out.floats.assign(x.floats.begin() + start, x.floats.begin() + end);
    else out.ints.assign(x.ints.begin() + start, x.ints.begin() + end);
    out.dims = {end - start};
    return std::vector<ConstTensor>{out};
  }
  if (op == "ConstantOfShape") {
    if (x.is_float) return std::nullopt;
    auto n = Product(x.ints);
    if (!n) return std::nullopt;
    ConstTensor out;
    out.dims = x.ints;
    const auto* a = Attr(node, "value");
    std::optional<ConstTensor> v = a ? FromTensorProto(a->t()) : std::nullopt;
    if (v && v->size() == 1) {
      out.dtype = v->dtype;
      out.is_float = v->is_float;
      if (v->is_float) out.floats.assign(*n, v->floats[0]);
      else out.ints.assign(*n, v->ints[0]);
    } else if (!a) {
      out.is_float = true;
      out.dtype = onnx::TensorProto::FLOAT;
      out.floats.assign(*n, 0.0);
    } else {
      return std::nullopt;
    }
    return std::vector<ConstTensor>{out};
  }
  if (op == "Reshape") {
    if (in.size() != 2 || !in[1]) return std::nullopt;
    std::vector<int64_t> dims = in[1]->ints;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 0 && i < x.dims.size()) dims[i] = x.dims[i];
      if (dims[i] == -1) infer = static_cast<int64_t>(i);
      else known *= dims[i];
    }
    if (infer >= 0) {
      if (known == 0) return std::nullopt;
      dims[infer] = x.size() / known;
    }
    if (Product(dims) != x.size()) return std::nullopt;
    ConstTensor out = x;
    out.dims = dims;
    return std::vector<ConstTensor>{out};
  }
  if (op == "Range") {
    if (in.size() != 3 || !in[1] || !in[2] || x.is_float) return std::nullopt;
    int64_t start = x.ints.at(0), limit = in[1]->ints.at(0), delta = in[2]->ints.at(0);
    if (delta == 0) return std::nullopt;
    ConstTensor out;
    for (int64_t v = start; (delta > 0 ? v < limit : v > limit); v += delta) {
      out.ints.push_back(v);
      if (static_cast<int64_t>(out.ints.size()) > kMaxFoldElements) return std::nullopt;
    }
    out.dims = {static_cast<int64_t>(out.ints.size())};
    return std::vector<ConstTensor>{out};
  }
  return std::nullopt;
}

}  // namespace hetplan::internal
