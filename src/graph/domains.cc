// Operator domains by use (graph/domains.h): schemas for the operators ONNX
// Runtime adds to ONNX, and the matrix view of those that are products.
#include "graph/domains.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <onnx/defs/shape_inference.h>

#include "graph/attributes.h"

namespace hetplan::internal {
namespace {

using Dims = std::vector<int64_t>;

// The input's shape when every dim is known.
std::optional<Dims> StaticShape(onnx::InferenceContext& ctx, size_t k) {
  if (k >= ctx.getNumInputs() || !onnx::hasInputShape(ctx, k)) return std::nullopt;
  Dims d;
  for (const auto& dim : onnx::getInputShape(ctx, k).dim()) {
    if (!dim.has_dim_value()) return std::nullopt;
    d.push_back(dim.dim_value());
  }
  return d;
}

void SetShape(onnx::InferenceContext& ctx, size_t out, const Dims& dims) {
  if (out >= ctx.getNumOutputs()) return;
  auto* shape = onnx::getOutputShape(ctx, out);
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

void SetType(onnx::InferenceContext& ctx, size_t out, int32_t elem) {
  if (out < ctx.getNumOutputs()) onnx::updateOutputElemType(ctx, out, elem);
}

// Element type of input k, UNDEFINED when unknown.
int32_t InputType(onnx::InferenceContext& ctx, size_t k) {
  if (k >= ctx.getNumInputs() || ctx.getInputType(k) == nullptr) return onnx::TensorProto::UNDEFINED;
  return ctx.getInputType(k)->tensor_type().elem_type();
}

// Output `out` has input `in`'s type and shape.
void Same(onnx::InferenceContext& ctx, size_t in, size_t out) {
  if (out >= ctx.getNumOutputs() || InputType(ctx, in) == onnx::TensorProto::UNDEFINED) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, in, out);
  if (onnx::hasInputShape(ctx, in)) onnx::propagateShapeFromInputToOutput(ctx, in, out);
}

std::optional<Dims> BroadcastDims(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
    const int64_t y = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[k] = x == 1 ? y : x;
  }
  return out;
}

// numpy.matmul's shape, with optional transposes of the last two dims.
std::optional<Dims> MatMulDims(Dims a, Dims b, bool trans_a, bool trans_b) {
  if (a.empty() || b.empty()) return std::nullopt;
  if (trans_a && a.size() >= 2) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (trans_b && b.size() >= 2) std::swap(b[b.size() - 1], b[b.size() - 2]);
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  if (a.back() != b[b.size() - 2]) return std::nullopt;
  auto batch = BroadcastDims(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  if (!batch) return std::nullopt;
  Dims out = *batch;
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  return out;
}

void MatMulLike(onnx::InferenceContext& ctx, size_t a, size_t b, bool trans_a, bool trans_b, int32_t elem) {
  SetType(ctx, 0, elem);
  auto x = StaticShape(ctx, a), w = StaticShape(ctx, b);
  if (!x || !w) return;
  auto out = MatMulDims(*x, *w, trans_a, trans_b);
  if (!out) fail_shape_inference("the operands [", fmt::format("{}", fmt::join(*x, ",")), "] and [",
                                 fmt::format("{}", fmt::join(*w, ",")), "] cannot be multiplied");
  SetShape(ctx, 0, *out);
}

using Inference = std::function<void(onnx::InferenceContext&)>;

// Operators whose shapes are a standard operator's: that operator's inference.
Inference Standard(const onnx::ISchemaRegistry& registry, const char* type, int version) {
  const onnx::OpSchema* s = registry.GetSchema(type, version, "");
  if (s == nullptr || !s->has_type_and_shape_inference_function()) return {};
  return s->GetTypeAndShapeInferenceFunction();
}

// What ONNX Runtime's graph optimizer writes, with its shape inference.
void AddGraphOptimizerOperators(const onnx::ISchemaRegistry& registry, std::map<std::string, Inference>& ops) {
  ops["FusedConv"] = Standard(registry, "Conv", 11);
  ops["FusedGemm"] = Standard(registry, "Gemm", 13);
  ops["FusedMatMul"] = [](onnx::InferenceContext& ctx) {
    if (onnx::getAttribute(ctx, "transBatchA", 0) != 0 || onnx::getAttribute(ctx, "transBatchB", 0) != 0) {
      fail_shape_inference("FusedMatMul with transBatchA/transBatchB is not supported");
    }
    MatMulLike(ctx, 0, 1, onnx::getAttribute(ctx, "transA", 0) != 0, onnx::getAttribute(ctx, "transB", 0) != 0,
               InputType(ctx, 0));
  };
  for (const char* t : {"Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd", "BiasSoftmax",
                        "SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    ops[t] = [](onnx::InferenceContext& ctx) {
      Same(ctx, 0, 0);
      // SkipLayerNormalization's 4th output is the sum it normalised;
      // the mean and variance outputs stay unknown.
      if (ctx.getNumOutputs() > 3) Same(ctx, 0, 3);
    };
  }
  ops["BiasDropout"] = [](onnx::InferenceContext& ctx) {
    Same(ctx, 0, 0);
    if (ctx.getNumOutputs() > 1) {
      SetType(ctx, 1, onnx::TensorProto::BOOL);
      if (auto s = StaticShape(ctx, 0)) SetShape(ctx, 1, *s);
    }
  };
  ops["GemmFastGelu"] = [](onnx::InferenceContext& ctx) { MatMulLike(ctx, 0, 1, false, false, InputType(ctx, 0)); };
  ops["Attention"] = [](onnx::InferenceContext& ctx) {
    Same(ctx, 0, 0);
    auto x = StaticShape(ctx, 0), w = StaticShape(ctx, 1);
    if (!x || !w || x->size() != 3 || w->size() != 2) return;
    std::vector<int64_t> qkv;
    onnx::getRepeatedAttribute(ctx, "qkv_hidden_sizes", qkv);
    const int64_t v = qkv.size() == 3 ? qkv[2] : (*w)[1] / 3;
    SetShape(ctx, 0, {(*x)[0], (*x)[1], v});
  };
  ops["MultiHeadAttention"] = [](onnx::InferenceContext& ctx) {
    Same(ctx, 0, 0);
    auto q = StaticShape(ctx, 0);
    if (!q || q->size() != 3) return;
    auto v = StaticShape(ctx, 2);
    SetShape(ctx, 0, {(*q)[0], (*q)[1], v && v->size() == 3 ? (*v)[2] : (*q)[2]});
  };
  // The model builder's attention (ONNX Runtime GenAI): query [B, S, H·D]
  // (or Q, K and V packed, key and value absent), past [B, KVH, P, D];
  // output [B, S, H·D], presents [B, KVH, P + S, D] (a past that grows; a
  // shared buffer is the past's own length, which a decoder file planned
  // here does not use).
  ops["GroupQueryAttention"] = [](onnx::InferenceContext& ctx) {
    for (size_t k = 0; k < 3; ++k) SetType(ctx, k, InputType(ctx, 0));
    const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0), kv = onnx::getAttribute(ctx, "kv_num_heads", 0);
    auto q = StaticShape(ctx, 0);
    if (!q || q->size() != 3 || heads <= 0 || kv <= 0) return;
    const bool packed = InputType(ctx, 1) == onnx::TensorProto::UNDEFINED;
    const int64_t head = (*q)[2] / (packed ? heads + 2 * kv : heads);
    SetShape(ctx, 0, {(*q)[0], (*q)[1], heads * head});
    if (auto past = StaticShape(ctx, 3); past && past->size() == 4) {
      for (size_t k = 1; k < 3; ++k) SetShape(ctx, k, {(*q)[0], kv, (*past)[2] + (*q)[1], head});
    }
  };
  ops["EmbedLayerNormalization"] = [](onnx::InferenceContext& ctx) {
    SetType(ctx, 0, InputType(ctx, 2));
    SetType(ctx, 1, onnx::TensorProto::INT32);
    auto ids = StaticShape(ctx, 0), emb = StaticShape(ctx, 2);
    if (!ids || !emb || ids->size() != 2 || emb->size() != 2) return;
    SetShape(ctx, 0, {(*ids)[0], (*ids)[1], (*emb)[1]});
    SetShape(ctx, 1, {(*ids)[0]});
    if (ctx.getNumOutputs() > 2) {
      SetType(ctx, 2, InputType(ctx, 2));
      SetShape(ctx, 2, {(*ids)[0], (*ids)[1], (*emb)[1]});
    }
  };
}

// What ONNX Runtime's quantization tool writes (QOperator format), with its shape inference.
void AddQuantizationOperators(const onnx::ISchemaRegistry& registry, std::map<std::string, Inference>& ops) {
  const auto first = [](onnx::InferenceContext& ctx) { Same(ctx, 0, 0); };
  for (const char* t : {"QLinearAdd", "QLinearMul"}) {
    ops[t] = [](onnx::InferenceContext& ctx) {
      SetType(ctx, 0, InputType(ctx, 0));
      auto a = StaticShape(ctx, 0), b = StaticShape(ctx, 3);
      if (!a || !b) return;
      auto out = BroadcastDims(*a, *b);
      if (!out) fail_shape_inference("A and B do not broadcast");
      SetShape(ctx, 0, *out);
    };
  }
  for (const char* t : {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"}) ops[t] = first;
  ops["QLinearGlobalAveragePool"] = [](onnx::InferenceContext& ctx) {
    SetType(ctx, 0, InputType(ctx, 0));
    auto x = StaticShape(ctx, 0);
    if (!x || x->size() < 3) return;
    Dims out = *x;
    const bool last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
    for (size_t k = last ? 1 : 2; k < out.size() - (last ? 1 : 0); ++k) out[k] = 1;
    SetShape(ctx, 0, out);
  };
  ops["QLinearAveragePool"] = Standard(registry, "AveragePool", 11);
  ops["QLinearConcat"] = [](onnx::InferenceContext& ctx) {
    SetType(ctx, 0, InputType(ctx, 2));
    std::optional<Dims> out;
    const int64_t axis_attr = onnx::getAttribute(ctx, "axis", 0);
    for (size_t k = 2; k < ctx.getNumInputs(); k += 3) {
      auto s = StaticShape(ctx, k);
      if (!s) return;
      const int64_t rank = static_cast<int64_t>(s->size());
      const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
      if (axis < 0 || axis >= rank) fail_shape_inference("axis ", axis_attr, " is out of range");
      if (!out) {
        out = *s;
      } else {
        if (out->size() != s->size()) fail_shape_inference("the inputs' ranks differ");
        (*out)[static_cast<size_t>(axis)] += (*s)[static_cast<size_t>(axis)];
      }
    }
    if (out) SetShape(ctx, 0, *out);
  };
  ops["QGemm"] = [](onnx::InferenceContext& ctx) {
    // A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point:
    // quantized output when y_scale is given, float otherwise.
    const bool quantized = ctx.getNumInputs() > 7 && ctx.getInputType(7) != nullptr;
    SetType(ctx, 0, quantized ? InputType(ctx, 0) : onnx::TensorProto::FLOAT);
    auto a = StaticShape(ctx, 0), b = StaticShape(ctx, 3);
    if (!a || !b || a->size() != 2 || b->size() != 2) return;
    const bool ta = onnx::getAttribute(ctx, "transA", 0) != 0, tb = onnx::getAttribute(ctx, "transB", 0) != 0;
    auto out = MatMulDims(*a, *b, ta, tb);
    if (!out) fail_shape_inference("A and B have different inner dimensions");
    SetShape(ctx, 0, *out);
  };
  ops["MatMulIntegerToFloat"] = [](onnx::InferenceContext& ctx) {
    MatMulLike(ctx, 0, 1, false, false, InputType(ctx, 2));
  };
  ops["DynamicQuantizeMatMul"] = [](onnx::InferenceContext& ctx) {
    MatMulLike(ctx, 0, 1, false, false, onnx::TensorProto::FLOAT);
  };
  ops["MatMulNBits"] = [](onnx::InferenceContext& ctx) {
    SetType(ctx, 0, InputType(ctx, 0));
    auto a = StaticShape(ctx, 0);
    const int64_t k = onnx::getAttribute(ctx, "K", 0), n = onnx::getAttribute(ctx, "N", 0);
    if (!a || a->empty() || k <= 0 || n <= 0) return;
    if (a->back() != k) fail_shape_inference("the input's last dim is ", a->back(), " but K is ", k);
    Dims out = *a;
    out.back() = n;
    SetShape(ctx, 0, out);
  };
  // What its dynamic quantizer writes for every LSTM: LSTM's inputs (X, W, R,
  // B, sequence_lens, initial_h, initial_c, P) with W and R int8 and
  // transposed, then their scales and zero points; LSTM's outputs.
  ops["DynamicQuantizeLSTM"] = Standard(registry, "LSTM", 14);
  // The quantization tool's Q/DQ in ONNX Runtime's domain (16-bit, per-channel before opset 13).
  ops["QuantizeLinear"] = Standard(registry, "QuantizeLinear", 13);
  ops["DequantizeLinear"] = Standard(registry, "DequantizeLinear", 13);
}

// The com.microsoft operators hetplan knows, with their shape inference.
std::map<std::string, Inference> MicrosoftOperators(const onnx::ISchemaRegistry& registry) {
  std::map<std::string, Inference> ops;
  AddGraphOptimizerOperators(registry, ops);
  AddQuantizationOperators(registry, ops);
  for (auto it = ops.begin(); it != ops.end();) it = it->second ? std::next(it) : ops.erase(it);
  return ops;
}

struct SchemaTable {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<onnx::OpSchema>> schemas;  // (domain, type)
};
SchemaTable& Table() {
  static SchemaTable* table = new SchemaTable();  // never destroyed: ONNX may hold pointers at exit
  return *table;
}

const std::map<std::string, Inference>& Microsoft(const onnx::ISchemaRegistry& registry) {
  static const std::map<std::string, Inference>* ops = new std::map<std::string, Inference>(MicrosoftOperators(registry));
  return *ops;
}

bool IsStandardDomain(const std::string& d) { return d.empty() || d == "ai.onnx" || d == "ai.onnx.ml"; }

int64_t Prod(const Dims& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to && k < v.size(); ++k) p *= v[k];
  return p;
}

// A recurrent operator's view: each time step multiplies [x_t, h_{t-1}] by
// the stacked (input + hidden) × gates·hidden matrix once per direction.
// `x`: [seq, batch, input], or [batch, seq, input] when batch_first.
void SetRecurrentView(const Dims& x, bool batch_first, int64_t dirs, int64_t gate_cols, int64_t input,
                      int64_t hidden, const std::string& product, Operator* op) {
  const int64_t seq = batch_first ? x[1] : x[0], batch = batch_first ? x[0] : x[1];
  op->SetWeightMatrix(input + hidden, gate_cols, seq * batch * dirs, product);
  op->directions = dirs;
  op->macs = op->n_mvm * op->weight_rows * op->weight_cols;
}

}  // namespace

const onnx::OpSchema* ExtraSchema(const std::string& type, const std::string& domain,
                                  const onnx::ISchemaRegistry& standard) {
  Inference fn;
  if (domain == kMicrosoftDomain) {
    const auto& ops = Microsoft(standard);
    auto it = ops.find(type);
    if (it == ops.end()) return nullptr;
    fn = it->second;
  } else if (domain.empty() || domain == "ai.onnx") {
    // ONNX Runtime registers both in the default domain from opset 1; ONNX has
    // LayerNormalization from opset 17 only. Its layer-norm fusion writes them.
    if (type == "LayerNormalization") {
      fn = Standard(standard, "LayerNormalization", 17);
    } else if (type == "SimplifiedLayerNormalization") {
      fn = [](onnx::InferenceContext& ctx) { Same(ctx, 0, 0); };
    }
    if (!fn) return nullptr;
  } else {
    return nullptr;
  }
  SchemaTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mu);
  auto& slot = table.schemas[{domain, type}];
  if (!slot) {
    slot = std::make_unique<onnx::OpSchema>();
    slot->SetName(type).SetDomain(domain).SinceVersion(1).TypeAndShapeInferenceFunction(fn);
  }
  return slot.get();
}

std::vector<std::string> KnownMicrosoftOperators(const onnx::ISchemaRegistry& registry) {
  std::vector<std::string> names;
  for (const auto& [name, fn] : Microsoft(registry)) names.push_back(name);
  return names;
}

std::string CheckNodeDomain(const onnx::NodeProto& n, const std::string& label, int default_opset,
                            const onnx::ISchemaRegistry& registry) {
  const std::string& d = n.domain();
  if (d == kMicrosoftDomain) {
    const auto& ops = Microsoft(registry);
    if (ops.count(n.op_type())) return "";
    return fmt::format("{} is in ONNX Runtime's domain 'com.microsoft', but '{}' is not among the com.microsoft "
                       "operators hetplan knows the shapes of ({}); export the model without it",
                       label, n.op_type(), fmt::join(KnownMicrosoftOperators(registry), ", "));
  }
  if (d == "com.microsoft.nchwc") {
    return fmt::format("{} is in domain 'com.microsoft.nchwc' (type '{}'): ONNX Runtime's NCHWc layout, which "
                       "hetplan does not plan; save the optimized model at ORT_ENABLE_EXTENDED, not "
                       "ORT_ENABLE_ALL",
                       label, n.op_type());
  }
  if (d == "ai.onnx.preview.training") {
    return fmt::format("{} is in ONNX's training domain 'ai.onnx.preview.training' (type '{}'): a training step, "
                       "which an inference plan does not contain; export the inference graph",
                       label, n.op_type());
  }
  if (!IsStandardDomain(d)) {
    return fmt::format("{} is in the unknown domain '{}' (type '{}'), which neither ONNX nor ONNX Runtime's "
                       "com.microsoft defines; export the model with standard operators",
                       label, d, n.op_type());
  }
  if (d == "ai.onnx.ml") {
    if (registry.GetSchema(n.op_type(), std::numeric_limits<int>::max(), d) != nullptr) return "";
    return fmt::format("{}: '{}' is not an operator of the ONNX-ML domain; export with standard operators", label,
                       n.op_type());
  }
  if (registry.GetSchema(n.op_type(), default_opset, "") == nullptr) {
    return fmt::format("{}: '{}' is not an ONNX operator at opset {}; export with standard operators", label,
                       n.op_type(), default_opset);
  }
  return "";
}

std::string StandardMatrixKind(const onnx::NodeProto& n) {
  const std::string& t = n.op_type();
  const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
  if (standard && (t == "Conv" || t == "Gemm" || t == "MatMul")) return t;
  if (n.domain() != kMicrosoftDomain) return "";
  if (t == "FusedConv") return "Conv";
  if (t == "FusedGemm") return "Gemm";
  if (t == "MatMulIntegerToFloat" || t == "DynamicQuantizeMatMul") return "MatMul";
  if (t == "FusedMatMul" && AttrInt(n, "transA", 0) == 0 && AttrInt(n, "transB", 0) == 0) return "MatMul";
  return "";
}

bool SetOtherMatrixView(const onnx::NodeProto& n, const ShapeLookup& s, Operator* op) {
  const std::string& t = n.op_type();
  const std::vector<int64_t>* out = s.output_shape();
  const bool ms = n.domain() == kMicrosoftDomain;
  const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
  if (ms && t == "FusedMatMul") {
    const auto* a = s.shape(0);
    const auto* b = s.const_shape(1);
    const auto* bs = b ? b : s.shape(1);
    if (!a || !bs || a->empty() || bs->size() < 2 || !out) return true;
    const bool ta = AttrInt(n, "transA", 0) != 0, tb = AttrInt(n, "transB", 0) != 0;
    const int64_t k = tb ? bs->back() : (*bs)[bs->size() - 2];
    op->macs = Prod(*out, 0, out->size()) * k;
    if (b && bs->size() == 2 && !ta) {
      op->SetWeightMatrix(k, tb ? (*bs)[0] : (*bs)[1], k > 0 ? Prod(*a, 0, a->size()) / k : 0, "MatMul");
    }
    return true;
  }
  if (ms && t == "MatMulNBits") {
    const int64_t k = AttrInt(n, "K", 0), cols = AttrInt(n, "N", 0);
    const auto* a = s.shape(0);
    if (!a || !out || k <= 0 || cols <= 0) return true;
    op->macs = Prod(*out, 0, out->size()) * k;
    if (s.const_shape(1)) {
      op->SetWeightMatrix(k, cols, Prod(*a, 0, a->size()) / k, "MatMul");
    }
    return true;
  }
  if (ms && t == "QGemm") {
    const auto* a = s.shape(0);
    const auto* b = s.const_shape(3);
    const auto* bs = b ? b : s.shape(3);
    if (!a || !bs || a->size() != 2 || bs->size() != 2) return true;
    const GemmDims d = GemmDimsOf(*a, *bs, AttrInt(n, "transA", 0) != 0, AttrInt(n, "transB", 0) != 0);
    op->macs = d.m * d.k * d.cols;
    if (b) {
      op->SetWeightMatrix(d.k, d.cols, d.m, "Gemm");
    }
    return true;
  }
  if (ms && t == "Attention") {
    // The QKV projection is the weight; the attention itself multiplies
    // activations, so the CIM does not take the operator unless a platform
    // lists Attention in supported_ops.
    const auto* x = s.shape(0);
    const auto* w = s.const_shape(1);
    if (!x || !w || x->size() != 3 || w->size() != 2) return true;
    op->SetWeightMatrix((*w)[0], (*w)[1], (*x)[0] * (*x)[1]);
    op->macs = op->n_mvm * op->weight_rows * op->weight_cols;
    return true;
  }
  if (ms && t == "DynamicQuantizeLSTM") {
    // W [dirs, input, 4·hidden] and R [dirs, hidden, 4·hidden], int8: LSTM's
    // matrices transposed, the same stacked (input + hidden) × 4·hidden product.
    const auto* x = s.shape(0);
    const auto* w = s.const_shape(1);
    const auto* r = s.const_shape(2);
    if (!x || x->size() != 3 || !w || !r || w->size() != 3 || r->size() != 3) return true;
    SetRecurrentView(*x, AttrInt(n, "layout", 0) != 0, (*w)[0], (*w)[2], (*w)[1], (*r)[1], "LSTM", op);
    return true;
  }
  if (standard && (t == "LSTM" || t == "GRU" || t == "RNN")) {
    // X [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1);
    // W [dirs, gates·hidden, input], R [dirs, gates·hidden, hidden]. Each time
    // step multiplies [x_t, h_{t-1}] by [W; R] once per direction, so the
    // stacked matrix is (input + hidden) × gates·hidden per direction.
    const auto* x = s.shape(0);
    const auto* w = s.const_shape(1);
    const auto* r = s.const_shape(2);
    if (!x || x->size() != 3 || !w || !r || w->size() != 3 || r->size() != 3) return true;
    SetRecurrentView(*x, AttrInt(n, "layout", 0) != 0, (*w)[0], (*w)[1], (*w)[2], (*r)[2], t, op);
    return true;
  }
  return false;
}

}  // namespace hetplan::internal
