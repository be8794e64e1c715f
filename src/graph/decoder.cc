// A decoder's interface read from its file (hetplan/graph/decoder.h).
#include "hetplan/graph/decoder.h"

#include <fmt/format.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string_view>
#include <set>

#include "hetplan/graph/dtype.h"
#include "hetplan/util/io.h"

namespace hetplan {
namespace {

using Dims = std::vector<std::optional<int64_t>>;  // nullopt: a symbolic dim

Dims DimsOf(const onnx::ValueInfoProto& v) {
  Dims d;
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return d;
  for (const auto& dim : v.type().tensor_type().shape().dim()) {
    d.push_back(dim.has_dim_value() ? std::optional<int64_t>(dim.dim_value()) : std::nullopt);
  }
  return d;
}

// Fills one half of a layer's pair from a name `prefix`N.key or
// `prefix`N.value (N decimal digits).
bool TakeKvName(const std::string& name, std::string_view prefix, bool past, std::map<int, KvLayer>* layers) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string_view rest = std::string_view(name).substr(prefix.size());
  const size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 9) return false;
  const std::string_view digits = rest.substr(0, dot), kind = rest.substr(dot + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  if (kind != "key" && kind != "value") return false;
  const int n = std::stoi(std::string(digits));
  KvLayer& l = (*layers)[n];
  l.layer = n;
  const bool key = kind == "key";
  (past ? (key ? l.past_key : l.past_value) : (key ? l.present_key : l.present_value)) = name;
  return true;
}

// The pairs complete and alike: every past has its present, every key its value.
Status CheckPairs(const std::string& path, const std::map<int, KvLayer>& layers) {
  for (const auto& [n, l] : layers) {
    const char* missing = l.past_key.empty()       ? "input past_key_values.{0}.key"
                          : l.past_value.empty()   ? "input past_key_values.{0}.value"
                          : l.present_key.empty()  ? "output present.{0}.key"
                          : l.present_value.empty() ? "output present.{0}.value"
                                                    : nullptr;
    if (missing != nullptr) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: layer {}'s KV cache has no {}: every layer needs past_key_values.N.key/value inputs and "
                   "present.N.key/value outputs; re-export the model with its cache (use_cache=True)",
                   path, n, fmt::format(fmt::runtime(missing), n));
    }
  }
  return Status::Ok();
}

// The head size of each past and present a GroupQueryAttention reads or
// writes, from its query's projection: ONNX Runtime GenAI's model builder
// leaves the cache's head dim symbolic ('kv_cache_dim'). The query is a
// MatMul's (weight [K, N]) or MatMulNBits' (attribute N) output: N = heads ×
// head, or (heads + 2 × kv heads) × head when Q, K and V come packed.
std::map<std::string, int64_t> GqaHeadSizes(const onnx::GraphProto& g) {
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) producer[o] = &n;
  }
  const auto attr = [](const onnx::NodeProto& n, const std::string& name) -> int64_t {
    for (const auto& a : n.attribute()) {
      if (a.name() == name) return a.i();
    }
    return 0;
  };
  std::map<std::string, int64_t> out;
  for (const auto& n : g.node()) {
    if (n.op_type() != "GroupQueryAttention" || n.input_size() < 5) continue;
    const int64_t heads = attr(n, "num_heads"), kv = attr(n, "kv_num_heads");
    const bool packed = n.input_size() < 3 || n.input(1).empty();
    const auto p = producer.find(n.input(0));
    if (p == producer.end() || heads <= 0 || kv <= 0) continue;
    int64_t cols = 0;
    if (p->second->op_type() == "MatMulNBits") cols = attr(*p->second, "N");
    if (p->second->op_type() == "MatMul" && p->second->input_size() == 2) {
      if (auto w = inits.find(p->second->input(1)); w != inits.end() && w->second->dims_size() == 2) {
        cols = w->second->dims(1);
      }
    }
    const int64_t width = packed ? heads + 2 * kv : heads;
    if (cols <= 0 || cols % width != 0) continue;
    for (int k : {3, 4}) out[n.input(k)] = cols / width;
    for (int k = 1; k < std::min(3, n.output_size()); ++k) out[n.output(k)] = cols / width;
  }
  return out;
}

// [batch, kv heads, length, head]: heads and head static (or the head from
// `heads`, GqaHeadSizes), alike in every layer.
Status CheckKvShape(const std::string& path, const std::string& name, Dims d, DecoderSignature* s,
                    const std::map<std::string, int64_t>& heads) {
  if (d.size() == 4 && !d[3]) {
    if (auto h = heads.find(name); h != heads.end()) d[3] = h->second;
  }
  if (d.size() != 4 || !d[1] || !d[3]) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: '{}' is not [batch, kv_heads, length, head_size] with static heads and head size; --llm reads "
                 "the cache's layout from it: re-export with static head dims",
                 path, name);
  }
  if (s->kv_heads == 0) {
    s->kv_heads = *d[1];
    s->head_dim = *d[3];
  } else if (*d[1] != s->kv_heads || *d[3] != s->head_dim) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: '{}' has {} heads of {} but the first KV input has {} of {}: mismatched past/present pairs; "
                 "re-export the model",
                 path, name, *d[1], *d[3], s->kv_heads, s->head_dim);
  }
  return Status::Ok();
}

// The rotary table: an initializer of [positions, …] Gathered by the
// position ids, or the cos cache of a RotaryEmbedding.
void FindPositionTable(const onnx::GraphProto& g, DecoderSignature* s) {
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  for (const auto& n : g.node()) {
    int table = -1;
    if (n.op_type() == "Gather" && n.input_size() == 2 && n.input(1) == s->position_ids) table = 0;
    if (n.op_type() == "RotaryEmbedding" && n.input_size() >= 2) table = 1;
    if (n.op_type() == "GroupQueryAttention" && n.input_size() >= 8) table = 7;
    if (table < 0) continue;
    auto it = inits.find(n.input(table));
    if (it == inits.end() || it->second->dims_size() != 2) continue;
    s->max_positions = it->second->dims(0);
    s->position_table = it->first;
    return;
  }
}

}  // namespace

std::map<std::string, std::vector<int64_t>> DecoderSignature::Shapes(int64_t sequence, int64_t past) const {
  std::map<std::string, std::vector<int64_t>> out;
  out[tokens] = hidden > 0 ? std::vector<int64_t>{1, sequence, hidden} : std::vector<int64_t>{1, sequence};
  if (!attention_mask.empty()) out[attention_mask] = {1, past + sequence};
  if (!position_ids.empty()) out[position_ids] = {1, sequence};
  for (const KvLayer& l : layers) {
    out[l.past_key] = out[l.past_value] = {1, kv_heads, past, head_dim};
  }
  return out;
}

int64_t DecoderSignature::KvBytes(int64_t length) const {
  const int64_t per_tensor = DtypeStorageBytes(kv_elem_type, kv_heads * length * head_dim);
  return 2 * per_tensor * static_cast<int64_t>(layers.size());
}

Result<DecoderSignature> ReadDecoderSignature(const std::string& path) {
  HETPLAN_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path, int64_t{4} << 30));
  onnx::ModelProto m;
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !m.has_graph()) {
    return Error(ErrorCode::kParseError, "{}: not an ONNX model; give the decoder's .onnx file", path);
  }
  const onnx::GraphProto& g = m.graph();
  DecoderSignature s;
  s.path = path;
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  constexpr std::string_view past_prefix = "past_key_values.", present_prefix = "present.";
  std::map<int, KvLayer> layers;
  const std::map<std::string, int64_t> gqa_heads = GqaHeadSizes(g);
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) continue;
    if (TakeKvName(in.name(), past_prefix, true, &layers)) {
      const Dims d = DimsOf(in);
      HETPLAN_RETURN_IF_ERROR(CheckKvShape(path, in.name(), d, &s, gqa_heads));
      s.kv_elem_type = in.type().tensor_type().elem_type();
    } else if (in.name() == "input_ids" || in.name() == "inputs_embeds") {
      s.tokens = in.name();
      const Dims d = DimsOf(in);
      if (in.name() == "inputs_embeds" && d.size() == 3 && d[2]) s.hidden = *d[2];
    } else if (in.name() == "attention_mask") {
      s.attention_mask = in.name();
    } else if (in.name() == "position_ids") {
      s.position_ids = in.name();
    }
  }
  for (const auto& out : g.output()) {
    if (TakeKvName(out.name(), present_prefix, false, &layers)) {
      HETPLAN_RETURN_IF_ERROR(CheckKvShape(path, out.name(), DimsOf(out), &s, gqa_heads));
    }
  }
  const bool has_past = std::any_of(layers.begin(), layers.end(), [](const auto& l) { return !l.second.past_key.empty(); });
  if (!layers.empty() && !has_past) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: present.N.key/value outputs but no past_key_values inputs: this is the first step's model "
                 "(optimum's decoder_model.onnx); give the model that takes the past (decoder_with_past_model.onnx "
                 "or the merged one)",
                 path);
  }
  if (layers.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: no KV cache (no past_key_values.N.key/value inputs): --llm plans a decoder that generates "
                 "token by token; an encoder, or a decoder exported without its cache, has no decode step: "
                 "re-export it with use_cache=True (optimum: --task text-generation-with-past)",
                 path);
  }
  HETPLAN_RETURN_IF_ERROR(CheckPairs(path, layers));
  if (s.tokens.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: no input_ids or inputs_embeds input: --llm needs the token input a generation feeds", path);
  }
  for (auto& [n, l] : layers) s.layers.push_back(l);
  FindPositionTable(g, &s);
  return s;
}

}  // namespace hetplan
