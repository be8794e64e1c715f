// The constant folder's kernels (graph/constant_folding_internal.h), in the
// forms opsets 7–18 give the nodes they evaluate. Values follow ONNX Runtime's
// CPU kernels: integer division truncates, Cast from float to integer
// truncates toward zero, float32 results are rounded to float32.
#include "graph/constant_folding_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace hetplan::internal::folding {
namespace {

using T = onnx::TensorProto;

bool IsFloatType(int32_t t) { return t == T::FLOAT || t == T::DOUBLE || t == T::FLOAT16 || t == T::BFLOAT16; }
bool IsIntType(int32_t t) {
  return t == T::INT64 || t == T::INT32 || t == T::INT16 || t == T::INT8 || t == T::UINT8 || t == T::UINT16 ||
         t == T::UINT32 || t == T::BOOL;
}

double AsDouble(const ConstTensor& t, int64_t i) {
  return t.is_float ? t.floats[static_cast<size_t>(i)] : static_cast<double>(t.ints[static_cast<size_t>(i)]);
}

// Appends element i of `src` to `dst` (same kind).
void PushFrom(ConstTensor& dst, const ConstTensor& src, int64_t i) {
  if (src.is_float) dst.floats.push_back(src.floats[static_cast<size_t>(i)]);
  else dst.ints.push_back(src.ints[static_cast<size_t>(i)]);
}

// A float value as the element type holds it.
double RoundTo(int32_t dtype, double v) { return dtype == T::FLOAT ? static_cast<double>(static_cast<float>(v)) : v; }

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int k = static_cast<int>(dims.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * dims[k + 1];
  return s;
}

// Numpy broadcasting of several shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<const ConstTensor*>& ts) {
  size_t rank = 0;
  for (const auto* t : ts) rank = std::max(rank, t->dims.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto* t : ts) {
    const size_t off = rank - t->dims.size();
    for (size_t k = 0; k < t->dims.size(); ++k) {
      const int64_t d = t->dims[k];
      int64_t& o = out[off + k];
      if (d == o || d == 1) continue;
      if (o == 1) o = d;
      else return std::nullopt;
    }
  }
  if (!Product(out)) return std::nullopt;
  return out;
}

// Flat index into `t` of output element `i` of broadcast shape `out`.
int64_t BroadcastIndex(const ConstTensor& t, const std::vector<int64_t>& out, const std::vector<int64_t>& out_strides,
                       int64_t i) {
  const size_t off = out.size() - t.dims.size();
  int64_t idx = 0, stride = 1;
  for (int k = static_cast<int>(t.dims.size()) - 1; k >= 0; --k) {
    const int64_t coord = (i / out_strides[off + k]) % out[off + k];
    if (t.dims[k] != 1) idx += coord * stride;
    stride *= t.dims[k];
  }
  return idx;
}

}  // namespace

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
std::optional<std::vector<int64_t>> AttrInts(const onnx::NodeProto& n, const char* name) {
  const auto* a = Attr(n, name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

ConstTensor Ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
  ConstTensor c;
  c.dims = std::move(dims);
  c.ints = std::move(values);
  return c;
}

// An empty tensor of `dtype` with `dims`, values to be pushed.
ConstTensor Empty(int32_t dtype, std::vector<int64_t> dims) {
  ConstTensor c;
  c.dtype = dtype;
  c.is_float = IsFloatType(dtype);
  c.dims = std::move(dims);
  return c;
}

// Wraps an integer to the element type's range, as a C++ cast does.
int64_t WrapTo(int32_t dtype, int64_t v) {
  switch (dtype) {
    case T::INT32: return static_cast<int32_t>(v);
    case T::INT16: return static_cast<int16_t>(v);
    case T::INT8: return static_cast<int8_t>(v);
    case T::UINT8: return static_cast<uint8_t>(v);
    case T::UINT16: return static_cast<uint16_t>(v);
    case T::UINT32: return static_cast<uint32_t>(v);
    case T::BOOL: return v != 0;
    default: return v;
  }
}

std::optional<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

bool IsComparison(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
}
bool IsLogical(const std::string& op) { return op == "And" || op == "Or" || op == "Xor"; }
bool IsArithmetic(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Pow" || op == "Max" ||
         op == "Min" || op == "Sum";
}

// Elementwise binary (and variadic Max/Min/Sum: tf2onnx writes AddN as Sum) with broadcasting.
std::optional<ConstTensor> Elementwise(const onnx::NodeProto& node, const std::vector<const ConstTensor*>& in) {
  const std::string& op = node.op_type();
  if (in.size() < 2 || std::find(in.begin(), in.end(), nullptr) != in.end()) return std::nullopt;
  for (const ConstTensor* t : in) {
    if (t->is_float && IsLogical(op)) return std::nullopt;
  }
  if (in.size() > 2 && op != "Max" && op != "Min" && op != "Sum") return std::nullopt;
  auto shape = Broadcast(in);
  if (!shape) return std::nullopt;
  const ConstTensor& a0 = *in[0];
  const bool floating = std::any_of(in.begin(), in.end(), [](const ConstTensor* t) { return t->is_float; });
  int32_t dtype = a0.dtype;
  if (IsComparison(op) || IsLogical(op)) dtype = T::BOOL;
  ConstTensor out = Empty(dtype, *shape);
  if (!(IsComparison(op) || IsLogical(op))) out.is_float = floating;
  const int64_t n = *Product(*shape);
  const auto strides = Strides(*shape);
  const bool fmod = AttrInt(node, "fmod", 0) != 0;
  for (int64_t i = 0; i < n; ++i) {
    if (floating && !IsLogical(op)) {
      double r = AsDouble(*in[0], BroadcastIndex(*in[0], *shape, strides, i));
      for (size_t k = 1; k < in.size(); ++k) {
        const double y = AsDouble(*in[k], BroadcastIndex(*in[k], *shape, strides, i));
        const double x = r;
        if (op == "Add" || op == "Sum") r = x + y;
        else if (op == "Sub") r = x - y;
        else if (op == "Mul") r = x * y;
        else if (op == "Div") r = x / y;
        else if (op == "Pow") r = std::pow(x, y);
        else if (op == "Max") r = std::max(x, y);
        else if (op == "Min") r = std::min(x, y);
        else if (op == "Mod") r = fmod ? std::fmod(x, y) : x - y * std::floor(x / y);
        else if (op == "Equal") r = x == y;
        else if (op == "Less") r = x < y;
        else if (op == "Greater") r = x > y;
        else if (op == "LessOrEqual") r = x <= y;
        else if (op == "GreaterOrEqual") r = x >= y;
        else return std::nullopt;
      }
      if (out.is_float) out.floats.push_back(RoundTo(dtype, r));
      else out.ints.push_back(static_cast<int64_t>(r));
      continue;
    }
    // Integer arithmetic that overflows is not folded (found by
    // tests/fuzz/fuzz_onnx: shape values near 2^60 multiplied).
    int64_t r = in[0]->ints[static_cast<size_t>(BroadcastIndex(*in[0], *shape, strides, i))];
    for (size_t k = 1; k < in.size(); ++k) {
      const int64_t y = in[k]->ints[static_cast<size_t>(BroadcastIndex(*in[k], *shape, strides, i))];
      const int64_t x = r;
      bool overflow = false;
      if (op == "Add" || op == "Sum") overflow = __builtin_add_overflow(x, y, &r);
      else if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r);
      else if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r);
      else if (op == "Div" || op == "Mod") {
        if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
        if (op == "Div") {
          r = x / y;
        } else {
          r = x % y;
          // Without fmod the result takes the divisor's sign (Python's %).
          if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
        }
      } else if (op == "Max") r = std::max(x, y);
      else if (op == "Min") r = std::min(x, y);
      else if (op == "Pow") {
        if (y < 0 || y > 62) return std::nullopt;
        r = 1;
        for (int64_t e = 0; e < y && !overflow; ++e) overflow = __builtin_mul_overflow(r, x, &r);
      } else if (op == "Equal") r = x == y;
      else if (op == "Less") r = x < y;
      else if (op == "Greater") r = x > y;
      else if (op == "LessOrEqual") r = x <= y;
      else if (op == "GreaterOrEqual") r = x >= y;
      else if (op == "And") r = (x != 0) && (y != 0);
      else if (op == "Or") r = (x != 0) || (y != 0);
      else if (op == "Xor") r = (x != 0) != (y != 0);
      else return std::nullopt;
      if (overflow) return std::nullopt;
    }
    out.ints.push_back(WrapTo(dtype, r));
  }
  return out;
}

std::optional<ConstTensor> Unary(const std::string& op, const ConstTensor& x) {
  ConstTensor out = x;
  if (op == "Not") {
    if (x.is_float) return std::nullopt;
    for (auto& v : out.ints) v = v == 0;
    out.dtype = T::BOOL;
    return out;
  }
  if (x.is_float) {
    for (auto& v : out.floats) {
      if (op == "Neg") v = -v;
      else if (op == "Abs") v = std::fabs(v);
      else if (op == "Floor") v = std::floor(v);
      else if (op == "Ceil") v = std::ceil(v);
      else if (op == "Sqrt") v = std::sqrt(v);
      else if (op == "Reciprocal") v = 1.0 / v;
      else if (op == "Sign") v = (v > 0) - (v < 0);
      else if (op == "Round") v = std::nearbyint(v);  // half to even, as ONNX says
      else return std::nullopt;
      v = RoundTo(x.dtype, v);
    }
    return out;
  }
  for (auto& v : out.ints) {
    if (op == "Neg") {
      if (v == std::numeric_limits<int64_t>::min()) return std::nullopt;
      v = -v;
    } else if (op == "Abs") {
      if (v == std::numeric_limits<int64_t>::min()) return std::nullopt;
      v = v < 0 ? -v : v;
    } else if (op == "Sign") {
      v = (v > 0) - (v < 0);
    } else if (op != "Floor" && op != "Ceil" && op != "Round") {
      return std::nullopt;
    }
  }
  return out;
}

// Gather along `axis` of any-rank data.
std::optional<ConstTensor> Gather(const ConstTensor& x, const ConstTensor& idx, int64_t axis_attr) {
  if (idx.is_float || x.dims.empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  auto axis = Axis(axis_attr, rank);
  if (!axis) return std::nullopt;
  std::vector<int64_t> dims(x.dims.begin(), x.dims.begin() + *axis);
  dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
  dims.insert(dims.end(), x.dims.begin() + *axis + 1, x.dims.end());
  if (!Product(dims)) return std::nullopt;
  ConstTensor out = Empty(x.dtype, dims);
  out.is_float = x.is_float;
  const int64_t outer = std::accumulate(x.dims.begin(), x.dims.begin() + *axis, int64_t{1}, std::multiplies<>());
  const int64_t inner = std::accumulate(x.dims.begin() + *axis + 1, x.dims.end(), int64_t{1}, std::multiplies<>());
  const int64_t n_axis = x.dims[static_cast<size_t>(*axis)];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : idx.ints) {
      const int64_t k = i < 0 ? i + n_axis : i;
      if (k < 0 || k >= n_axis) return std::nullopt;
      for (int64_t r = 0; r < inner; ++r) PushFrom(out, x, (o * n_axis + k) * inner + r);
    }
  }
  return out;
}

// Slice of any-rank data (both forms: the caller gathers starts/ends/axes/steps).
std::optional<ConstTensor> Slice(const ConstTensor& x, const std::vector<int64_t>& starts,
                                 const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                 std::vector<int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (starts.size() != ends.size() || rank == 0) return std::nullopt;
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) return std::nullopt;
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1), count = x.dims;
  for (size_t k = 0; k < starts.size(); ++k) {
    auto a = Axis(axes[k], rank);
    if (!a || steps[k] == 0) return std::nullopt;
    const int64_t n = x.dims[static_cast<size_t>(*a)], s = steps[k];
    // ONNX's clamping: [0, n] for a positive step, [-1, n - 1] for a negative one.
    const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
    auto clamp = [&](int64_t v, bool is_start) {
      if (v < 0) v = v < -n ? (is_start && s < 0 ? -1 : lo) : v + n;
      return std::clamp<int64_t>(v, is_start && s < 0 ? 0 : lo, hi);
    };
    const int64_t b = clamp(starts[k], true), e = clamp(ends[k], false);
    const int64_t c = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e + (-s) - 1) / (-s) : 0);
    begin[static_cast<size_t>(*a)] = b;
    step[static_cast<size_t>(*a)] = s;
    count[static_cast<size_t>(*a)] = c;
  }
  if (!Product(count)) return std::nullopt;
  ConstTensor out = Empty(x.dtype, count);
  out.is_float = x.is_float;
  const int64_t total = *Product(count);
  const auto in_strides = Strides(x.dims), out_strides = Strides(count);
  for (int64_t i = 0; i < total; ++i) {
    int64_t src = 0;
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t c = (i / out_strides[static_cast<size_t>(k)]) % count[static_cast<size_t>(k)];
      src += (begin[static_cast<size_t>(k)] + c * step[static_cast<size_t>(k)]) * in_strides[static_cast<size_t>(k)];
    }
    PushFrom(out, x, src);
  }
  return out;
}

std::optional<ConstTensor> Concat(const std::vector<const ConstTensor*>& in, int64_t axis_attr) {
  const ConstTensor& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  auto axis = Axis(axis_attr, rank);
  if (!axis) return std::nullopt;
  std::vector<int64_t> dims = x.dims;
  dims[static_cast<size_t>(*axis)] = 0;
  for (const ConstTensor* t : in) {
    if (t == nullptr || t->dims.size() != x.dims.size() || t->is_float != x.is_float) return std::nullopt;
    for (int64_t k = 0; k < rank; ++k) {
      if (k != *axis && t->dims[static_cast<size_t>(k)] != x.dims[static_cast<size_t>(k)]) return std::nullopt;
    }
    dims[static_cast<size_t>(*axis)] += t->dims[static_cast<size_t>(*axis)];
  }
  if (!Product(dims)) return std::nullopt;
  ConstTensor out = Empty(x.dtype, dims);
  out.is_float = x.is_float;
  const int64_t outer = std::accumulate(x.dims.begin(), x.dims.begin() + *axis, int64_t{1}, std::multiplies<>());
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstTensor* t : in) {
      const int64_t block = std::accumulate(t->dims.begin() + *axis, t->dims.end(), int64_t{1}, std::multiplies<>());
      for (int64_t r = 0; r < block; ++r) PushFrom(out, *t, o * block + r);
    }
  }
  return out;
}

std::optional<ConstTensor> Cast(const ConstTensor& x, int32_t to) {
  ConstTensor out = Empty(to, x.dims);
  if (IsFloatType(to)) {
    for (int64_t i = 0; i < x.size(); ++i) out.floats.push_back(RoundTo(to, AsDouble(x, i)));
    return out;
  }
  if (!IsIntType(to)) return std::nullopt;
  for (int64_t i = 0; i < x.size(); ++i) {
    if (x.is_float) {
      const double v = x.floats[static_cast<size_t>(i)];
      if (to == T::BOOL) {
        out.ints.push_back(v != 0);
        continue;
      }
      if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) return std::nullopt;
      out.ints.push_back(WrapTo(to, static_cast<int64_t>(v)));
    } else {
      out.ints.push_back(WrapTo(to, x.ints[static_cast<size_t>(i)]));
    }
  }
  return out;
}

std::optional<ConstTensor> Reshape(const ConstTensor& x, std::vector<int64_t> dims, bool allowzero) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allowzero) {
      if (i >= x.dims.size()) return std::nullopt;
      dims[i] = x.dims[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(i);
    } else if (dims[i] < 0) {
      return std::nullopt;
    } else {
      if (dims[i] > 0 && known > kMaxFoldElements / dims[i]) return std::nullopt;
      known *= dims[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.size() % known != 0) return std::nullopt;
    dims[static_cast<size_t>(infer)] = x.size() / known;
  }
  if (Product(dims) != x.size()) return std::nullopt;
  ConstTensor out = x;
  out.dims = dims;
  return out;
}

std::optional<ConstTensor> Expand(const ConstTensor& x, const std::vector<int64_t>& shape) {
  ConstTensor target;
  target.dims = shape;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
  }
  auto dims = Broadcast({&x, &target});
  if (!dims) return std::nullopt;
  ConstTensor out = Empty(x.dtype, *dims);
  out.is_float = x.is_float;
  const auto strides = Strides(*dims);
  const int64_t n = *Product(*dims);
  for (int64_t i = 0; i < n; ++i) PushFrom(out, x, BroadcastIndex(x, *dims, strides, i));
  return out;
}

std::optional<ConstTensor> Where(const ConstTensor& c, const ConstTensor& a, const ConstTensor& b) {
  if (c.is_float || a.is_float != b.is_float) return std::nullopt;
  auto dims = Broadcast({&c, &a, &b});
  if (!dims) return std::nullopt;
  ConstTensor out = Empty(a.dtype, *dims);
  out.is_float = a.is_float;
  const auto strides = Strides(*dims);
  const int64_t n = *Product(*dims);
  for (int64_t i = 0; i < n; ++i) {
    const bool take_a = c.ints[static_cast<size_t>(BroadcastIndex(c, *dims, strides, i))] != 0;
    const ConstTensor& src = take_a ? a : b;
    PushFrom(out, src, BroadcastIndex(src, *dims, strides, i));
  }
  return out;
}

std::optional<ConstTensor> Reduce(const std::string& op, const ConstTensor& x, std::vector<int64_t> axes,
                                  bool keepdims, bool noop_with_empty_axes) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (axes.empty()) {
    if (noop_with_empty_axes) return x;
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  std::vector<bool> reduce(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    auto n = Axis(a, rank);
    if (!n) return std::nullopt;
    reduce[static_cast<size_t>(*n)] = true;
  }
  std::vector<int64_t> kept_dims, out_dims;
  for (int64_t k = 0; k < rank; ++k) {
    const bool r = reduce[static_cast<size_t>(k)];
    kept_dims.push_back(r ? 1 : x.dims[static_cast<size_t>(k)]);
    if (!r || keepdims) out_dims.push_back(kept_dims.back());
  }
  const int64_t n_out = *Product(kept_dims);
  if (x.size() == 0 && (op == "ReduceMax" || op == "ReduceMin")) return std::nullopt;
  std::vector<double> acc(static_cast<size_t>(n_out), op == "ReduceProd" ? 1.0 : 0.0);
  std::vector<bool> first(static_cast<size_t>(n_out), true);
  const auto in_strides = Strides(x.dims), out_strides = Strides(kept_dims);
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (int64_t k = 0; k < rank; ++k) {
      if (reduce[static_cast<size_t>(k)]) continue;
      o += ((i / in_strides[static_cast<size_t>(k)]) % x.dims[static_cast<size_t>(k)]) * out_strides[static_cast<size_t>(k)];
    }
    const double v = AsDouble(x, i);
    double& a = acc[static_cast<size_t>(o)];
    if (op == "ReduceSum") a += v;
    else if (op == "ReduceProd") a *= v;
    else if (op == "ReduceMax") a = first[static_cast<size_t>(o)] ? v : std::max(a, v);
    else if (op == "ReduceMin") a = first[static_cast<size_t>(o)] ? v : std::min(a, v);
    else return std::nullopt;
    first[static_cast<size_t>(o)] = false;
  }
  ConstTensor out = Empty(x.dtype, out_dims);
  out.is_float = x.is_float;
  for (double v : acc) {
    if (out.is_float) {
      out.floats.push_back(RoundTo(x.dtype, v));
    } else {
      if (std::fabs(v) >= 9.2e18) return std::nullopt;
      out.ints.push_back(static_cast<int64_t>(v));
    }
  }
  return out;
}

std::optional<ConstTensor> Tile(const ConstTensor& x, const std::vector<int64_t>& repeats) {
  if (repeats.size() != x.dims.size()) return std::nullopt;
  std::vector<int64_t> dims;
  for (size_t k = 0; k < repeats.size(); ++k) {
    if (repeats[k] < 0) return std::nullopt;
    if (x.dims[k] > 0 && repeats[k] > kMaxFoldElements / x.dims[k]) return std::nullopt;
    dims.push_back(x.dims[k] * repeats[k]);
  }
  if (!Product(dims)) return std::nullopt;
  ConstTensor out = Empty(x.dtype, dims);
  out.is_float = x.is_float;
  const auto in_strides = Strides(x.dims), out_strides = Strides(dims);
  const int64_t n = *Product(dims);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t k = 0; k < dims.size(); ++k) src += ((i / out_strides[k]) % dims[k] % x.dims[k]) * in_strides[k];
    PushFrom(out, x, src);
  }
  return out;
}

// perm empty: the axes reversed (the ONNX default).
std::optional<ConstTensor> Transpose(const ConstTensor& x, std::vector<int64_t> perm) {
  const size_t rank = x.dims.size();
  if (perm.empty()) {
    for (size_t k = rank; k-- > 0;) perm.push_back(static_cast<int64_t>(k));
  }
  if (perm.size() != rank) return std::nullopt;
  std::vector<int64_t> dims(rank);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < rank; ++k) {
    if (perm[k] < 0 || perm[k] >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(perm[k])]) {
      return std::nullopt;
    }
    seen[static_cast<size_t>(perm[k])] = true;
    dims[k] = x.dims[static_cast<size_t>(perm[k])];
  }
  ConstTensor out = Empty(x.dtype, dims);
  out.is_float = x.is_float;
  const auto in_strides = Strides(x.dims), out_strides = Strides(dims);
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k) src += ((i / out_strides[k]) % dims[k]) * in_strides[static_cast<size_t>(perm[k])];
    PushFrom(out, x, src);
  }
  return out;
}

std::optional<ConstTensor> Range(const ConstTensor& start, const ConstTensor& limit, const ConstTensor& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) return std::nullopt;
  ConstTensor out = Empty(start.dtype, {});
  out.is_float = start.is_float;
  if (start.is_float) {
    const double s = start.floats[0], l = AsDouble(limit, 0), d = AsDouble(delta, 0);
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) return std::nullopt;
    const double n = std::max(std::ceil((l - s) / d), 0.0);
    if (n > static_cast<double>(kMaxFoldElements)) return std::nullopt;
    for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) out.floats.push_back(RoundTo(start.dtype, s + d * i));
  } else {
    const int64_t s = start.ints[0], l = limit.ints.at(0), d = delta.ints.at(0);
    if (d == 0) return std::nullopt;
    for (int64_t v = s; (d > 0 ? v < l : v > l);) {
      out.ints.push_back(v);
      if (static_cast<int64_t>(out.ints.size()) > kMaxFoldElements || __builtin_add_overflow(v, d, &v)) {
        return std::nullopt;
      }
    }
  }
  out.dims = {out.size()};
  return out;
}

// Axes from the attribute (older opsets) or from input `k` (newer ones).
std::optional<std::vector<int64_t>> AxesOf(const onnx::NodeProto& node, const std::vector<const ConstTensor*>& in,
                                           size_t k) {
  if (auto a = AttrInts(node, "axes")) return a;
  if (in.size() > k && in[k] != nullptr) {
    if (in[k]->is_float) return std::nullopt;
    return in[k]->ints;
  }
  return std::vector<int64_t>{};
}

}  // namespace hetplan::internal::folding
