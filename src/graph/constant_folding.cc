// Evaluation of the shape-computing nodes exporters leave in graphs, in the
// forms opsets 7–18 give them: attributes before opset 10/13/18 (Slice's
// starts/ends/axes, Squeeze/Unsqueeze's and the reductions' axes), inputs
// after. Values follow ONNX Runtime's CPU kernels: integer division
// truncates, Cast from float to integer truncates toward zero, float32
// results are rounded to float32. This file reads and writes constants and
// picks the kernel for a node; the kernels are in constant_folding_ops.cc.
#include "graph/constant_folding.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include "graph/constant_folding_internal.h"

namespace hetplan::internal {
namespace {

using T = onnx::TensorProto;

}  // namespace

std::optional<ConstTensor> FromTensorProto(const onnx::TensorProto& t) {
  if (t.data_location() == T::EXTERNAL) return std::nullopt;
  ConstTensor c;
  c.dtype = t.data_type();
  c.dims.assign(t.dims().begin(), t.dims().end());
  auto n = folding::Product(c.dims);
  if (!n) return std::nullopt;
  const std::string& raw = t.raw_data();
  auto read_raw = [&](auto sample, auto push) -> bool {
    using V = decltype(sample);
    if (raw.size() != static_cast<size_t>(*n) * sizeof(V)) return false;
    for (int64_t i = 0; i < *n; ++i) {
      V v;
      std::memcpy(&v, raw.data() + i * sizeof(V), sizeof(V));
      push(v);
    }
    return true;
  };
  auto push_int = [&](auto v) { c.ints.push_back(static_cast<int64_t>(v)); };
  auto push_float = [&](auto v) { c.floats.push_back(static_cast<double>(v)); };
  auto ints32 = [&](auto sample) {
    if (t.has_raw_data()) return read_raw(sample, push_int);
    c.ints.assign(t.int32_data().begin(), t.int32_data().end());
    return true;
  };
  bool ok = true;
  switch (c.dtype) {
    case T::INT64:
      if (t.has_raw_data()) ok = read_raw(int64_t{}, push_int);
      else c.ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case T::UINT32:
      if (t.has_raw_data()) ok = read_raw(uint32_t{}, push_int);
      else c.ints.assign(t.uint64_data().begin(), t.uint64_data().end());
      break;
    case T::INT32: ok = ints32(int32_t{}); break;
    case T::INT16: ok = ints32(int16_t{}); break;
    case T::UINT16: ok = ints32(uint16_t{}); break;
    case T::INT8: ok = ints32(int8_t{}); break;
    case T::BOOL:
    case T::UINT8: ok = ints32(uint8_t{}); break;
    case T::FLOAT:
      c.is_float = true;
      if (t.has_raw_data()) ok = read_raw(float{}, push_float);
      else c.floats.assign(t.float_data().begin(), t.float_data().end());
      break;
    case T::DOUBLE:
      c.is_float = true;
      if (t.has_raw_data()) ok = read_raw(double{}, push_float);
      else c.floats.assign(t.double_data().begin(), t.double_data().end());
      break;
    default:
      return std::nullopt;
  }
  if (!ok || c.size() != *n) return std::nullopt;
  return c;
}

namespace folding {
namespace {

// Split in its three forms: sizes as the attribute `split` (opsets 2–12),
// as input 1 (13+), or none: equal parts, one per output, the last smaller
// where `num_outputs` (18+) allows it. tf2onnx computes Pad's pads as
// Concat(Split(initializer)).
std::optional<std::vector<ConstTensor>> Split(const onnx::NodeProto& node, const ConstTensor& x,
                                              const std::optional<std::vector<int64_t>>& split_input) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  auto axis = Axis(AttrInt(node, "axis", 0), rank);
  const int64_t parts = node.output_size();
  if (!axis || parts <= 0) return std::nullopt;
  const int64_t n = x.dims[static_cast<size_t>(*axis)];
  std::vector<int64_t> sizes;
  if (auto attr = AttrInts(node, "split")) {
    sizes = *attr;
  } else if (node.input_size() > 1 && !node.input(1).empty()) {
    if (!split_input) return std::nullopt;
    sizes = *split_input;
  } else {
    if (n % parts != 0 && Attr(node, "num_outputs") == nullptr) return std::nullopt;
    const int64_t chunk = (n + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::clamp<int64_t>(n - k * chunk, 0, chunk));
  }
  if (static_cast<int64_t>(sizes.size()) != parts) return std::nullopt;
  if (std::any_of(sizes.begin(), sizes.end(), [](int64_t v) { return v < 0; })) return std::nullopt;
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != n) return std::nullopt;
  std::vector<ConstTensor> out;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    auto part = Slice(x, {begin}, {begin + size}, {*axis}, {});
    if (!part) return std::nullopt;
    out.push_back(std::move(*part));
    begin += size;
  }
  return out;
}

// The single output of a folded node: nullopt when it was not folded or is too large.
std::optional<std::vector<ConstTensor>> One(std::optional<ConstTensor> t) {
  if (!t || t->size() > kMaxFoldElements) return std::nullopt;
  return std::vector<ConstTensor>{std::move(*t)};
}

// Shape and Size, which need the input's shape only.
std::optional<std::vector<ConstTensor>> EvaluateShapeOrSize(
    const onnx::NodeProto& node, const std::unordered_map<std::string, std::vector<int64_t>>& shapes) {
  const std::string& op = node.op_type();
  if (node.input_size() != 1) return std::nullopt;
  auto it = shapes.find(node.input(0));
  if (it == shapes.end()) return std::nullopt;
  const auto& s = it->second;
  if (op == "Size") {
    int64_t p = 1;
    for (int64_t d : s) {
      if (d < 0 || __builtin_mul_overflow(p, d, &p)) return std::nullopt;
    }
    return One(Ints({}, {p}));
  }
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = AttrInt(node, "start", 0), end = AttrInt(node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> v(s.begin() + start, s.begin() + end);
  return One(Ints({static_cast<int64_t>(v.size())}, v));
}

// A Constant node's value, from whichever of its value attributes it has.
std::optional<std::vector<ConstTensor>> EvaluateConstant(const onnx::NodeProto& node) {
  const auto* a = Attr(node, "value");
  if (a && a->has_t()) return One(FromTensorProto(a->t()));
  if ((a = Attr(node, "value_int"))) return One(Ints({}, {a->i()}));
  if ((a = Attr(node, "value_ints"))) {
    std::vector<int64_t> v(a->ints().begin(), a->ints().end());
    return One(Ints({static_cast<int64_t>(v.size())}, v));
  }
  if ((a = Attr(node, "value_float"))) {
    ConstTensor c = Empty(T::FLOAT, {});
    c.floats = {a->f()};
    return One(c);
  }
  if ((a = Attr(node, "value_floats"))) {
    ConstTensor c = Empty(T::FLOAT, {a->floats_size()});
    for (float f : a->floats()) c.floats.push_back(f);
    return One(c);
  }
  return std::nullopt;
}

// The node's inputs, each a known constant (nullptr for an omitted one); nullopt when one is not known.
std::optional<std::vector<const ConstTensor*>> KnownInputs(
    const onnx::NodeProto& node, const std::unordered_map<std::string, ConstTensor>& constants) {
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
  return in;
}

// Input k, nullptr when the node has fewer inputs or omits it.
const ConstTensor* InputAt(const std::vector<const ConstTensor*>& in, size_t k) {
  return in.size() > k ? in[k] : nullptr;
}

// Input k's integer values; nullopt when it is absent or floating.
std::optional<std::vector<int64_t>> IntList(const std::vector<const ConstTensor*>& in, size_t k) {
  const ConstTensor* t = InputAt(in, k);
  if (t == nullptr || t->is_float) return std::nullopt;
  return t->ints;
}

// Unsqueeze and Squeeze of input 0, their axes an attribute or input 1.
std::optional<std::vector<ConstTensor>> EvaluateSqueeze(const onnx::NodeProto& node,
                                                        const std::vector<const ConstTensor*>& in) {
  const std::string& op = node.op_type();
  const ConstTensor& x = *in[0];
  auto axes = AxesOf(node, in, 1);
  if (!axes) return std::nullopt;
  ConstTensor out = x;
  if (op == "Unsqueeze") {
    const int64_t rank = static_cast<int64_t>(x.dims.size() + axes->size());
    std::vector<int64_t> norm;
    for (int64_t a : *axes) {
      auto n = Axis(a, rank);
      if (!n) return std::nullopt;
      norm.push_back(*n);
    }
    std::sort(norm.begin(), norm.end());
    if (std::adjacent_find(norm.begin(), norm.end()) != norm.end()) return std::nullopt;
    for (int64_t a : norm) out.dims.insert(out.dims.begin() + a, 1);
  } else {
    std::vector<int64_t> dims;
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    for (int64_t i = 0; i < rank; ++i) {
      bool drop = axes->empty() ? x.dims[static_cast<size_t>(i)] == 1
                                : std::any_of(axes->begin(), axes->end(), [&](int64_t a) {
                                    return Axis(a, rank) == std::optional<int64_t>(i);
                                  });
      if (drop && x.dims[static_cast<size_t>(i)] != 1) return std::nullopt;
      if (!drop) dims.push_back(x.dims[static_cast<size_t>(i)]);
    }
    out.dims = dims;
  }
  return One(out);
}

// Slice of input 0, its starts/ends/axes attributes (opset 1–9) or inputs 1–4.
std::optional<std::vector<ConstTensor>> EvaluateSlice(const onnx::NodeProto& node,
                                                      const std::vector<const ConstTensor*>& in) {
  const ConstTensor& x = *in[0];
  if (x.dims.empty()) return std::nullopt;
  if (auto starts = AttrInts(node, "starts")) {  // opset 1–9: attributes
    auto ends = AttrInts(node, "ends");
    if (!ends) return std::nullopt;
    return One(Slice(x, *starts, *ends, AttrInts(node, "axes").value_or(std::vector<int64_t>{}), {}));
  }
  auto starts = IntList(in, 1), ends = IntList(in, 2);
  if (!starts || !ends) return std::nullopt;
  std::vector<int64_t> axes, steps;
  if (InputAt(in, 3)) {
    auto a = IntList(in, 3);
    if (!a) return std::nullopt;
    axes = *a;
  }
  if (InputAt(in, 4)) {
    auto s = IntList(in, 4);
    if (!s) return std::nullopt;
    steps = *s;
  }
  return One(Slice(x, *starts, *ends, axes, steps));
}

// ConstantOfShape: input `x` the shape, the attribute `value` the value (float 0 without it).
std::optional<std::vector<ConstTensor>> EvaluateConstantOfShape(const onnx::NodeProto& node, const ConstTensor& x) {
  if (x.is_float) return std::nullopt;
  auto n = Product(x.ints);
  if (!n) return std::nullopt;
  const auto* a = Attr(node, "value");
  std::optional<ConstTensor> v = a ? FromTensorProto(a->t()) : std::nullopt;
  ConstTensor out;
  if (v && v->size() == 1) {
    out = Empty(v->dtype, x.ints);
    if (v->is_float) out.floats.assign(static_cast<size_t>(*n), v->floats[0]);
    else out.ints.assign(static_cast<size_t>(*n), v->ints[0]);
  } else if (!a) {
    out = Empty(T::FLOAT, x.ints);
    out.floats.assign(static_cast<size_t>(*n), 0.0);
  } else {
    return std::nullopt;
  }
  return One(out);
}

// Every other op, on its inputs `in`, all known constants (in[0] not null).
std::optional<std::vector<ConstTensor>> EvaluateOnConstants(const onnx::NodeProto& node,
                                                            const std::vector<const ConstTensor*>& in) {
  const std::string& op = node.op_type();
  const ConstTensor& x = *in[0];

  if (op == "Gather") {
    if (!InputAt(in, 1)) return std::nullopt;
    return One(Gather(x, *in[1], AttrInt(node, "axis", 0)));
  }
  if (op == "Unsqueeze" || op == "Squeeze") return EvaluateSqueeze(node, in);
  // Integer values only (tf2onnx's pads, shapes): a float Identity is an
  // exporter's weight alias, which the operator reading it carries along.
  if (op == "Identity") return x.is_float ? std::nullopt : One(x);
  if (op == "Split") return Split(node, x, IntList(in, 1));
  if (op == "Concat") return One(Concat(in, AttrInt(node, "axis", 0)));
  if (op == "Cast") return One(Cast(x, static_cast<int32_t>(AttrInt(node, "to", 0))));
  if (op == "CastLike") {
    if (!InputAt(in, 1)) return std::nullopt;
    return One(Cast(x, in[1]->dtype));
  }
  if (IsArithmetic(op) || IsComparison(op) || IsLogical(op)) return One(Elementwise(node, in));
  if (op == "Not" || op == "Neg" || op == "Abs" || op == "Floor" || op == "Ceil" || op == "Sqrt" ||
      op == "Reciprocal" || op == "Sign" || op == "Round") {
    return One(Unary(op, x));
  }
  if (op == "Where") {
    if (!InputAt(in, 1) || !InputAt(in, 2)) return std::nullopt;
    return One(Where(x, *in[1], *in[2]));
  }
  if (op == "Slice") return EvaluateSlice(node, in);
  if (op == "ConstantOfShape") return EvaluateConstantOfShape(node, x);
  if (op == "Reshape") {
    if (auto shape = AttrInts(node, "shape")) return One(Reshape(x, *shape, false));  // opset 1–4
    auto shape = IntList(in, 1);
    if (!shape) return std::nullopt;
    return One(Reshape(x, *shape, AttrInt(node, "allowzero", 0) != 0));
  }
  if (op == "Flatten") {
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    int64_t axis = AttrInt(node, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return std::nullopt;
    const int64_t outer = std::accumulate(x.dims.begin(), x.dims.begin() + axis, int64_t{1}, std::multiplies<>());
    return One(Reshape(x, {outer, outer == 0 ? 0 : x.size() / outer}, true));
  }
  if (op == "Expand") {
    auto shape = IntList(in, 1);
    if (!shape) return std::nullopt;
    return One(Expand(x, *shape));
  }
  if (op == "Transpose") return One(Transpose(x, AttrInts(node, "perm").value_or(std::vector<int64_t>{})));
  if (op == "Tile") {
    auto repeats = IntList(in, 1);
    if (!repeats) return std::nullopt;
    return One(Tile(x, *repeats));
  }
  if (op == "Range") {
    if (!InputAt(in, 1) || !InputAt(in, 2)) return std::nullopt;
    return One(Range(x, *in[1], *in[2]));
  }
  if (op == "ReduceSum" || op == "ReduceProd" || op == "ReduceMax" || op == "ReduceMin") {
    // ReduceSum takes its axes as an input from opset 13, the others from 18.
    auto axes = AxesOf(node, in, 1);
    if (!axes) return std::nullopt;
    return One(Reduce(op, x, *axes, AttrInt(node, "keepdims", 1) != 0, AttrInt(node, "noop_with_empty_axes", 0) != 0));
  }
  return std::nullopt;
}

}  // namespace
}  // namespace folding

onnx::TensorProto ToTensorProto(const ConstTensor& c, const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  for (int64_t d : c.dims) t.add_dims(d);
  if (c.is_float) {
    if (c.dtype == T::DOUBLE) {
      t.set_data_type(T::DOUBLE);
      for (double v : c.floats) t.add_double_data(v);
    } else {
      t.set_data_type(T::FLOAT);
      for (double v : c.floats) t.add_float_data(static_cast<float>(v));
    }
    return t;
  }
  switch (c.dtype) {
    case T::INT32: case T::INT16: case T::UINT16: case T::INT8: case T::UINT8: case T::BOOL:
      t.set_data_type(c.dtype);
      for (int64_t v : c.ints) t.add_int32_data(static_cast<int32_t>(folding::WrapTo(c.dtype, v)));
      break;
    case T::UINT32:
      t.set_data_type(T::UINT32);
      for (int64_t v : c.ints) t.add_uint64_data(static_cast<uint64_t>(folding::WrapTo(T::UINT32, v)));
      break;
    default:
      t.set_data_type(T::INT64);
      for (int64_t v : c.ints) t.add_int64_data(v);
  }
  return t;
}

std::optional<std::vector<ConstTensor>> EvaluateNode(
    const onnx::NodeProto& node, const std::unordered_map<std::string, ConstTensor>& constants,
    const std::unordered_map<std::string, std::vector<int64_t>>& shapes) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (node.output_size() != 1 && op != "Split") return std::nullopt;

  // Shape and Size need the input's shape only.
  if (op == "Shape" || op == "Size") return folding::EvaluateShapeOrSize(node, shapes);
  if (op == "Constant") return folding::EvaluateConstant(node);

  // Every other op needs all its (non-empty) inputs to be known constants.
  std::optional<std::vector<const ConstTensor*>> in = folding::KnownInputs(node, constants);
  if (!in || in->empty() || (*in)[0] == nullptr) return std::nullopt;
  return folding::EvaluateOnConstants(node, *in);
}

}  // namespace hetplan::internal
