// ONNX import (hetplan/graph/onnx_import.h): the option parsers, then the
// importer's stages (graph/onnx_importer.h) but its checks, which are in
// onnx_import_checks.cc.
#include "hetplan/graph/onnx_import.h"

#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <queue>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "graph/constant_folding.h"
#include "graph/control_flow.h"
#include "graph/domains.h"
#include "graph/functions.h"
#include "graph/graph_builder.h"
#include "graph/onnx_importer.h"
#include "graph/shape_errors.h"
#include "graph/qdq.h"
#include "hetplan/graph/dtype.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"

namespace hetplan {

Result<FusionLevel> ParseFusionLevel(std::string_view text) {
  if (text == "none") return FusionLevel::kNone;
  if (text == "activation") return FusionLevel::kActivation;
  return Error(ErrorCode::kInvalidArgument, "unknown fusion level '{}'; use none or activation", text);
}

std::string ToString(FusionLevel level) {
  return level == FusionLevel::kNone ? "none" : "activation";
}

Result<std::pair<std::string, std::vector<int64_t>>> ParseShapeOverride(std::string_view text) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "--shape '{}': expected NAME=D0xD1x... such as input=1x3x224x224", text);
  }
  std::string name(text.substr(0, eq));
  std::vector<int64_t> dims;
  std::string_view rest = text.substr(eq + 1);
  while (!rest.empty()) {
    auto x = rest.find('x');
    std::string_view tok = rest.substr(0, x);
    int64_t v = 0;
    bool okd = !tok.empty() && tok.size() < 12;
    for (char c : tok) {
      if (c < '0' || c > '9') okd = false;
      else v = v * 10 + (c - '0');
    }
    if (!okd) {  // 0 is a size: an empty input (a KV cache's past at prefill)
      return Error(ErrorCode::kInvalidArgument,
                   "--shape '{}': dim '{}' is not a size (a non-negative integer); use e.g. {}=1x3x224x224", text,
                   tok, name);
    }
    dims.push_back(v);
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
    if (rest.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--shape '{}': trailing 'x'", text);
    }
  }
  return std::make_pair(name, dims);
}

Result<std::pair<std::string, std::vector<std::string>>> ParseValueOverride(std::string_view text) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Error(ErrorCode::kInvalidArgument, "--value '{}': expected NAME=V[,V...] such as sr=16000", text);
  }
  std::string name(text.substr(0, eq));
  std::vector<std::string> values;
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    auto comma = rest.find(',');
    std::string tok(rest.substr(0, comma));
    bool number = false;
    if (tok == "true" || tok == "false") {
      number = true;
    } else if (!tok.empty() && tok.size() < 40) {
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(tok.c_str(), &end);
      number = end == tok.c_str() + tok.size() && errno == 0 && std::isfinite(v);
    }
    if (!number) {
      return Error(ErrorCode::kInvalidArgument,
                   "--value '{}': '{}' is not a number (or true/false); use e.g. {}=16000 or {}=1,0,1", text, tok,
                   name, name);
    }
    values.push_back(tok);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return std::make_pair(name, values);
}

Result<std::pair<std::string, bool>> ParseBranchOverride(std::string_view text) {
  auto eq = text.rfind('=');
  if (eq != std::string_view::npos && eq > 0) {
    std::string_view which = text.substr(eq + 1);
    if (which == "then" || which == "else") return std::make_pair(std::string(text.substr(0, eq)), which == "then");
  }
  return Error(ErrorCode::kInvalidArgument, "--branch '{}': expected NODE=then or NODE=else, NODE an If's name",
               text);
}

}  // namespace hetplan

namespace hetplan::internal {
namespace {

constexpr int kMaxFoldRounds = 64;

}  // namespace

Status Importer::Parse(std::string_view bytes) {
  if (bytes.empty()) return Fail(ErrorCode::kParseError, "the file is empty; expected an ONNX model (.onnx)");
  if (!model_->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Fail(ErrorCode::kParseError,
                "not a valid ONNX protobuf (truncated or not a model); re-export the model with "
                "torch.onnx.export or check the download");
  }
  if (!model_->has_graph()) {
    return Fail(ErrorCode::kParseError, "the protobuf has no graph: it is not an ONNX model; re-export it");
  }
  if (model_->graph().node_size() == 0) {
    return Fail(ErrorCode::kParseError, "the graph is empty (no nodes); nothing to plan");
  }
  original_nodes_ = model_->graph().node_size();
  return Status::Ok();
}

// A dim_value below zero (Paddle2ONNX writes -1 for a batch it does not
// fix) means "unknown", as a dim_param does: an input's becomes the
// symbolic kDeclaredUnknownDim (named in the errors), an output's or a
// value_info's is dropped so that shape inference does not compare with it.
void Importer::MarkNegativeDimsUnknown() {
  auto* g = model_->mutable_graph();
  auto unknown_dims = [](onnx::ValueInfoProto* vi, bool input) {
    if (!vi->type().has_tensor_type() || !vi->type().tensor_type().has_shape()) return;
    for (auto& dim : *vi->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!dim.has_dim_value() || dim.dim_value() >= 0) continue;
      dim.clear_dim_value();
      if (input) dim.set_dim_param(internal::kDeclaredUnknownDim);
    }
  };
  for (auto& vi : *g->mutable_input()) unknown_dims(&vi, true);
  for (auto& vi : *g->mutable_output()) unknown_dims(&vi, false);
  for (auto& vi : *g->mutable_value_info()) unknown_dims(&vi, false);
}

// --shape and --value on the graph inputs: --shape replaces an input's dims,
// the count of --value's values fixes a scalar or vector input's symbolic dim.
// Each option must name a graph input, and every input then needs a static,
// non-zero shape.
Status Importer::ApplyInputOptions() {
  auto* g = model_->mutable_graph();
  HETPLAN_RETURN_IF_ERROR(ExpandShapePatterns());
  if (!options_.samples.empty() && options_.recorded_shapes.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--sample-input {}: the shapes it produces were not recorded; load the model with "
                            "RecordSampleShapes (hetplan/cost/sample_shapes.h) first, as the hetplan command does",
                            options_.samples.front().name));
  }
  std::set<std::string> unused, unused_values;
  for (const auto& [name, dims] : options_.input_shapes) unused.insert(name);
  for (const auto& [name, values] : options_.input_values) unused_values.insert(name);
  std::vector<std::string> real_inputs;
  for (int i = 0; i < g->input_size(); ++i) {
    auto* in = g->mutable_input(i);
    if (initializer_names_.count(in->name())) continue;
    real_inputs.push_back(in->name());
    if (!in->type().has_tensor_type()) {
      return Fail(ErrorCode::kUnsupported,
                  fmt::format("graph input '{}' is not a tensor; only tensor inputs are supported",
                              in->name()));
    }
    auto* tt = in->mutable_type()->mutable_tensor_type();
    auto it = options_.input_shapes.find(in->name());
    if (it != options_.input_shapes.end()) {
      unused.erase(in->name());
      if (tt->has_shape() && tt->shape().dim_size() != static_cast<int>(it->second.size())) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("--shape {}: the input has rank {}, the option gives {} dims",
                                in->name(), tt->shape().dim_size(), it->second.size()));
      }
      tt->mutable_shape()->clear_dim();
      for (int64_t d : it->second) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    auto value = options_.input_values.find(in->name());
    if (value != options_.input_values.end()) {
      unused_values.erase(in->name());
      const int64_t count = static_cast<int64_t>(value->second.size());
      // The values' count fixes a symbolic dim of a scalar or vector input.
      if (tt->has_shape() && tt->shape().dim_size() <= 1) {
        if (tt->shape().dim_size() == 1 && !tt->shape().dim(0).has_dim_value()) {
          tt->mutable_shape()->mutable_dim(0)->set_dim_value(count);
        }
      }
    }
  }
  if (!unused.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--shape names '{}', which is not a graph input; inputs are: {}",
                            *unused.begin(), fmt::join(real_inputs, ", ")));
  }
  if (!unused_values.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--value names '{}', which is not a graph input; inputs are: {}",
                            *unused_values.begin(), fmt::join(real_inputs, ", ")));
  }
  std::vector<internal::MissingShape> missing = internal::MissingInputShapes(*g, initializer_names_);
  if (!missing.empty()) return Fail(ErrorCode::kInvalidArgument, internal::MissingShapesMessage(missing));
  return Status::Ok();
}

// --shape with a glob pattern ('past_key_values.*.key=1x2x128x32', fnmatch's
// * ? [...]): the shape of every graph input it matches; a name given
// exactly wins over a pattern. A pattern that matches nothing, or an input
// that two patterns match, is refused in one line. The patterns are replaced
// by the names they matched, which the plan records.
Status Importer::ExpandShapePatterns() {
  const auto is_pattern = [](const std::string& k) { return k.find_first_of("*?[") != std::string::npos; };
  std::map<std::string, std::vector<int64_t>> exact;
  std::vector<std::pair<std::string, std::vector<int64_t>>> patterns;
  std::set<std::string> input_names;  // a name with * ? [ in it is still a name
  for (const auto& in : model_->graph().input()) input_names.insert(in.name());
  for (const auto& [key, dims] : options_.input_shapes) {
    if (is_pattern(key) && !input_names.count(key)) {
      patterns.emplace_back(key, dims);
    } else {
      exact.emplace(key, dims);
    }
  }
  if (patterns.empty()) return Status::Ok();
  std::vector<std::string> real_inputs;
  for (const auto& in : model_->graph().input()) {
    if (!initializer_names_.count(in.name())) real_inputs.push_back(in.name());
  }
  std::map<std::string, std::string> matched_by;  // input → the pattern that gave its shape
  for (const auto& [pattern, dims] : patterns) {
    ShapePattern record{pattern, dims, {}};
    for (const std::string& name : real_inputs) {
      if (fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
      if (exact.count(name) && !matched_by.count(name)) continue;  // given by name
      if (auto it = matched_by.find(name); it != matched_by.end()) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("--shape patterns '{}' and '{}' both match input '{}'; give its shape by name "
                                "(--shape {}=...) or narrow a pattern",
                                it->second, pattern, name, name));
      }
      matched_by.emplace(name, pattern);
      exact.emplace(name, dims);
      record.matched.push_back(name);
    }
    if (record.matched.empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--shape pattern '{}' matches no graph input that is not given by name; inputs are: {}",
                              pattern, fmt::join(real_inputs, ", ")));
    }
    shape_patterns_.push_back(std::move(record));
  }
  options_.input_shapes = std::move(exact);
  return Status::Ok();
}

// --value: the input becomes an initializer of its own type and shape.
Status Importer::InputValuesToInitializers() {
  auto* g = model_->mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto& in : g->input()) {
    auto value = options_.input_values.find(in.name());
    // A static shape with a 0 dim has one value, the empty tensor: a
    // constant, as if given with --value (a KV cache's past at prefill).
    // (A plan records it as a fixed input without values; re-imported from
    // the plan, it is the same empty tensor, whatever its element type.)
    const bool empty = (value == options_.input_values.end() || value->second.empty()) &&
                       internal::IsEmptyStaticTensor(in);
    if ((value == options_.input_values.end() && !empty) || initializer_names_.count(in.name())) {
      *kept.Add() = in;
      continue;
    }
    FixedInput fixed;
    fixed.name = in.name();
    fixed.elem_type = in.type().tensor_type().elem_type();
    int64_t elements = 1;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      fixed.shape.push_back(d.dim_value());
      elements = elements > internal::kMaxFoldElements ? elements : elements * d.dim_value();
    }
    if (!empty) fixed.values = value->second;
    const auto n = static_cast<int64_t>(fixed.values.size());
    if (n != elements) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--value {}: the input has shape [{}] ({} elements), the option gives {} value{}",
                              in.name(), fmt::join(fixed.shape, ","), elements, n, n == 1 ? "" : "s"));
    }
    internal::ConstTensor c;
    c.dtype = fixed.elem_type;
    c.dims = fixed.shape;
    c.is_float = IsFloatingDtype(fixed.elem_type);
    using T = onnx::TensorProto;
    const std::set<int32_t> supported = {T::FLOAT, T::DOUBLE, T::INT64, T::INT32, T::INT16, T::INT8,
                                         T::UINT8, T::UINT16, T::UINT32, T::BOOL};
    if (!empty && !supported.count(fixed.elem_type)) {
      return Fail(ErrorCode::kUnsupported,
                  fmt::format("--value {}: the input's element type ({}) cannot be given as a value", in.name(),
                              fixed.elem_type));
    }
    for (const auto& tok : fixed.values) {
      const double v = tok == "true" ? 1.0 : (tok == "false" ? 0.0 : std::strtod(tok.c_str(), nullptr));
      if (c.is_float) {
        c.floats.push_back(v);
        continue;
      }
      if (v != std::floor(v) || std::fabs(v) > 9.0e15) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("--value {}: '{}' is not an integer, but the input is {}", in.name(), tok,
                                DtypeName(fixed.elem_type)));
      }
      c.ints.push_back(static_cast<int64_t>(v));
    }
    onnx::TensorProto t = internal::ToTensorProto(c, in.name());
    if (empty) t.set_data_type(fixed.elem_type);  // no data: any element type (float16, bfloat16, ...)
    *g->add_initializer() = std::move(t);
    initializer_names_.insert(in.name());
    fixed_inputs_.push_back(std::move(fixed));
  }
  g->mutable_input()->Swap(&kept);
  return Status::Ok();
}

Status Importer::FixInputShapes() {
  MarkNegativeDimsUnknown();
  HETPLAN_RETURN_IF_ERROR(ApplyInputOptions());
  return InputValuesToInitializers();
}

Status Importer::TopologicalSort() {
  auto* g = model_->mutable_graph();
  const int n = g->node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& out : g->node(i).output()) {
      if (!out.empty()) producer[out] = i;
    }
  }
  std::vector<std::vector<int>> succ(n), pred(n);
  std::vector<int> indeg(n, 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> preds;
    std::vector<std::string> reads(g->node(i).input().begin(), g->node(i).input().end());
    // An If's branches read outer values too: it must come after their producers.
    if (g->node(i).op_type() == "If") {
      for (auto& name : internal::ImplicitInputs(g->node(i))) reads.push_back(std::move(name));
    }
    for (const auto& in : reads) {
      auto it = producer.find(in);
      if (it != producer.end()) preds.insert(it->second);
    }
    for (int p : preds) {
      if (p == i) {
        return Fail(ErrorCode::kParseError,
                    fmt::format("{} reads its own output: the graph has a cycle; an inference graph "
                                "must be acyclic",
                                NodeLabel(g->node(i), i)));
      }
      succ[p].push_back(i);
      pred[i].push_back(p);
      ++indeg[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i) {
    if (indeg[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int u = ready.top();
    ready.pop();
    order.push_back(u);
    for (int v : succ[u]) {
      if (--indeg[v] == 0) ready.push(v);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    // A node left over may only be downstream of the cycle: walk back through
    // left-over predecessors (each has one) n times to land on the cycle.
    int culprit = 0;
    while (indeg[culprit] == 0) ++culprit;
    for (int step = 0; step < n; ++step) {
      for (int p : pred[culprit]) {
        if (indeg[p] > 0) {
          culprit = p;
          break;
        }
      }
    }
    return Fail(ErrorCode::kParseError,
                fmt::format("the graph has a cycle through {}; an inference graph must be acyclic",
                            NodeLabel(g->node(culprit), culprit)));
  }
  bool sorted = true;
  for (int i = 0; i < n; ++i) sorted = sorted && order[i] == i;
  if (!sorted) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i : order) *nodes.Add() = g->node(i);
    g->mutable_node()->Swap(&nodes);
  }
  return Status::Ok();
}

// --sample-input: every tensor of the main graph that a node still computes
// gets the shape ONNX Runtime gave it on the sample, as value_info that
// shape inference keeps where it cannot compute a dim (a NonZero's count, a
// Range's length); the graph outputs' unknown dims too.
void Importer::AddRecordedShapes() {
  if (options_.recorded_shapes.empty()) return;
  auto* g = model_->mutable_graph();
  auto set_dims = [](const RecordedTensor& r, onnx::TypeProto_Tensor* tt) {
    tt->set_elem_type(r.elem_type);
    auto* shape = tt->mutable_shape();
    shape->clear_dim();
    for (int64_t d : r.dims) shape->add_dim()->set_dim_value(d);
  };
  std::set<std::string> outputs;
  for (auto& o : *g->mutable_output()) {
    outputs.insert(o.name());
    auto it = options_.recorded_shapes.find(o.name());
    if (it != options_.recorded_shapes.end()) set_dims(it->second, o.mutable_type()->mutable_tensor_type());
  }
  for (const auto& n : g->node()) {
    for (const auto& t : n.output()) {
      auto it = options_.recorded_shapes.find(t);
      if (t.empty() || it == options_.recorded_shapes.end() || outputs.count(t) || initializer_names_.count(t)) continue;
      auto* vi = g->add_value_info();
      vi->set_name(t);
      set_dims(it->second, vi->mutable_type()->mutable_tensor_type());
    }
  }
}

Status Importer::InferShapes() {
  // Drop stale value_info so that inference starts from what the nodes say
  // (and, with --sample-input, what the sample run recorded).
  model_->mutable_graph()->clear_value_info();
  AddRecordedShapes();
  try {
    // A first pass without data propagation: where a node's inference fails
    // (a --shape that contradicts the weights), its output has no type, and
    // ONNX 1.12's data propagation of a Shape node after it dereferenced that
    // missing type and crashed. Such an error is reported by this pass.
    onnx::ShapeInferenceOptions check(/*check_type=*/false, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(*model_, SchemaRegistry(), check);
    model_->mutable_graph()->clear_value_info();
    AddRecordedShapes();
    // Data propagation carries Shape → Gather → Concat values into Reshape
    // and Expand targets before the folder has turned them into constants.
    onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/1, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(*model_, SchemaRegistry(), opts);
  } catch (const std::exception& e) {
    // ONNX lists one error per line, the first node's first; the nodes after
    // it mostly fail because its output has no type. Keep the first.
    std::string what = e.what();
    const int more = static_cast<int>(std::count(what.begin(), what.end(), '\n'));
    what = what.substr(0, what.find('\n'));
    return Fail(ErrorCode::kParseError,
                fmt::format("ONNX shape inference failed: {}{}; check the named node's inputs{}", what,
                            more > 0 ? fmt::format(" (and {} more error{} after it)", more, more == 1 ? "" : "s") : "",
                            options_.input_shapes.empty() ? "" : " and that each --shape matches the model"));
  }
  return CollectShapes();
}

Status Importer::CollectShapes() {
  shapes_.clear();
  dtypes_.clear();
  const auto& g = model_->graph();
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) return;
    const auto& tt = vi.type().tensor_type();
    dtypes_[vi.name()] = tt.elem_type();
    if (!tt.has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) return;
      dims.push_back(d.dim_value());
    }
    shapes_[vi.name()] = std::move(dims);
  };
  for (const auto& vi : g.input()) add(vi);
  for (const auto& vi : g.value_info()) add(vi);
  for (const auto& vi : g.output()) add(vi);
  for (const auto& t : g.initializer()) {
    shapes_[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    dtypes_[t.name()] = t.data_type();
  }
  return Status::Ok();
}

bool Importer::FoldConstants() {
  auto* g = model_->mutable_graph();
  for (const auto& t : g->initializer()) {
    if (constants_.count(t.name())) continue;
    int64_t n = 1;
    for (int64_t d : t.dims()) {
      if (d > 0 && n > internal::kMaxFoldElements / d) {  // also guards n * d against overflow
        n = internal::kMaxFoldElements + 1;
        break;
      }
      n *= std::max<int64_t>(d, 0);
    }
    if (n > internal::kMaxFoldElements) continue;
    if (auto c = internal::FromTensorProto(t)) constants_[t.name()] = std::move(*c);
  }
  std::unordered_set<std::string> graph_outputs;
  for (const auto& o : g->output()) graph_outputs.insert(o.name());

  std::vector<bool> folded(g->node_size(), false);
  int count = 0;
  for (int i = 0; i < g->node_size(); ++i) {
    const auto& n = g->node(i);
    if (n.output_size() < 1 ||
        std::any_of(n.output().begin(), n.output().end(), [&](const std::string& o) { return graph_outputs.count(o); })) {
      continue;
    }
    auto out = internal::EvaluateNode(n, constants_, shapes_);
    if (!out || static_cast<int>(out->size()) != n.output_size()) continue;
    if (std::any_of(out->begin(), out->end(), [](const auto& t) { return t.size() > internal::kMaxFoldElements; })) {
      continue;
    }
    for (int k = 0; k < n.output_size(); ++k) {
      if (!n.output(k).empty()) constants_[n.output(k)] = std::move((*out)[static_cast<size_t>(k)]);
    }
    folded[i] = true;
    ++count;
  }
  if (count == 0) return false;
  // Keep the remaining nodes; turn folded values they read into initializers.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::set<std::string> needed;
  for (int i = 0; i < g->node_size(); ++i) {
    if (folded[i]) continue;
    for (const auto& in : g->node(i).input()) needed.insert(in);
    if (g->node(i).op_type() == "If") {
      for (const auto& in : internal::ImplicitInputs(g->node(i))) needed.insert(in);
    }
    *kept.Add() = g->node(i);
  }
  for (int i = 0; i < g->node_size(); ++i) {
    if (!folded[i]) continue;
    for (const std::string& name : g->node(i).output()) {
      if (name.empty() || !needed.count(name) || initializer_names_.count(name)) continue;
      *g->add_initializer() = internal::ToTensorProto(constants_[name], name);
      initializer_names_.insert(name);
    }
  }
  g->mutable_node()->Swap(&kept);
  folded_nodes_ += count;
  return true;
}

Result<bool> Importer::ResolveIfs(bool assumed) {
  auto* g = model_->mutable_graph();
  bool changed = false;
  for (int i = 0; i < g->node_size(); ++i) {
    const onnx::NodeProto& n = g->node(i);
    if (n.op_type() != "If" || n.input_size() < 1) continue;
    const std::string name = n.name(), cond = n.input(0);
    auto chosen = options_.branches.find(name);
    BranchChoice choice{name, true, false, cond};
    // Through Identity aliases (which the folder keeps as nodes) to the value.
    std::string value = cond;
    for (int guard = 0; guard < g->node_size() && !constants_.count(value); ++guard) {
      const onnx::NodeProto* p = nullptr;
      for (const auto& m : g->node()) {
        if (m.output_size() > 0 && m.output(0) == value) p = &m;
      }
      if (p == nullptr || p->op_type() != "Identity" || p->input_size() < 1) break;
      value = p->input(0);
    }
    auto c = constants_.find(value);
    if (c != constants_.end() && c->second.size() >= 1) {
      choice.then = c->second.is_float ? c->second.floats[0] != 0 : c->second.ints[0] != 0;
      if (chosen != options_.branches.end() && chosen->second != choice.then) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("--branch {}={}: the condition '{}' of {} folds to {}, so the model takes its {} "
                                "branch; drop the option or give --branch {}={}",
                                name, chosen->second ? "then" : "else", cond, NodeLabel(n, i),
                                choice.then ? "true" : "false", choice.then ? "then" : "else", name,
                                choice.then ? "then" : "else"));
      }
    } else if (assumed && chosen != options_.branches.end()) {
      choice.then = chosen->second;
      choice.assumed = true;
    } else {
      continue;
    }
    unused_branches_.erase(name);
    const int count = internal::InlineIf(g, i, choice.then);
    branches_.push_back(std::move(choice));
    for (const auto& t : g->initializer()) initializer_names_.insert(t.name());
    HETPLAN_RETURN_IF_ERROR(CheckInlinedNodes(i, count));
    i += count - 1;
    changed = true;
  }
  if (changed) HETPLAN_RETURN_IF_ERROR(TopologicalSort());
  return changed;
}

// Nodes to operators, in the stages of graph/graph_builder.h.
Result<OpGraph> Importer::BuildGraph() {
  const internal::NodeRoles roles = internal::ClassifyNodes(model_->graph(), initializer_names_);
  // Every tensor an operator reads or writes needs a static shape; say which
  // input's shape or value fixes one that has none.
  const auto& g = model_->graph();
  for (int i = 0; i < g.node_size(); ++i) {
    if (!roles.is_op[static_cast<size_t>(i)]) continue;
    const auto& node = g.node(i);
    std::vector<std::string> names;
    for (const auto& in : node.input()) {
      if (!in.empty() && !roles.constant_tensors.count(roles.Resolve(in))) names.push_back(roles.Resolve(in));
    }
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& o = node.output(k);
      if (o.empty()) continue;
      if (k == 0 || roles.consumers.count(o) || roles.graph_outputs.count(o)) names.push_back(o);
    }
    for (const auto& name : names) {
      if (shapes_.count(name)) continue;
      return Fail(ErrorCode::kUnsupported,
                  internal::UnknownShapeMessage(g, NodeLabel(node, i), name, shapes_, roles.constant_tensors));
    }
  }
  // A quantized model is grouped as its float model, then its quantization
  // nodes join their operators (graph/qdq.h).
  const std::vector<bool> quant = internal::FindQuantizationNodes(roles);
  const internal::NodeRoles float_view =
      quant.empty() ? internal::NodeRoles{} : internal::ClassifyNodes(model_->graph(), initializer_names_, &quant);
  const internal::NodeRoles& view = quant.empty() ? roles : float_view;
  std::vector<internal::NodeGroup> groups = internal::UnfusedGroups(view);
  if (options_.fusion == FusionLevel::kActivation) groups = internal::FuseActivations(view, groups);
  if (!quant.empty()) groups = internal::AttachQuantizationNodes(roles, quant, groups);
  if (static_cast<int>(groups.size()) > options_.max_operators) {
    return Fail(ErrorCode::kLimitExceeded,
                fmt::format("the model has {} operators, more than the limit of {}; raise "
                            "--max-operators if this is intended",
                            groups.size(), options_.max_operators));
  }
  return internal::BuildOperators(
      roles, groups, {label_, &initializer_names_, &shapes_, &dtypes_, options_.max_tensor_elements});
}

Result<LoadedModel> Importer::Run(std::string_view bytes) {
  if (static_cast<int64_t>(bytes.size()) > options_.max_file_bytes) {
    return Fail(ErrorCode::kLimitExceeded,
                fmt::format("the file has {} bytes, more than the limit of {}; raise --max-model-mib if this "
                            "model is intended",
                            bytes.size(), options_.max_file_bytes));
  }
  HETPLAN_RETURN_IF_ERROR(Parse(bytes));
  // Model-local functions (torch's torch.export-based exporter, onnxscript):
  // every call becomes its nodes, named after the call, before anything reads them.
  HETPLAN_RETURN_IF_ERROR(internal::InlineModelFunctions(model_.get(), label_));
  HETPLAN_RETURN_IF_ERROR(CheckStructure());
  HETPLAN_RETURN_IF_ERROR(ResolveExternalData());
  HETPLAN_RETURN_IF_ERROR(CheckTensorData());
  HETPLAN_RETURN_IF_ERROR(FixInputShapes());
  HETPLAN_RETURN_IF_ERROR(TopologicalSort());
  std::shared_ptr<const onnx::ModelProto> source;
  if (options_.keep_source) source = std::make_shared<const onnx::ModelProto>(*model_);
  HETPLAN_RETURN_IF_ERROR(InferShapes());
  // Fold, resolve the Ifs whose condition folded, and infer again until
  // nothing changes; only then take the branches --branch assumes, so that
  // an assumption never stands in for a condition the model itself fixes.
  for (int round = 0; round < kMaxFoldRounds; ++round) {
    bool changed = FoldConstants();
    HETPLAN_ASSIGN_OR_RETURN(bool resolved, ResolveIfs(/*assumed=*/false));
    if (!changed && !resolved) {
      HETPLAN_ASSIGN_OR_RETURN(resolved, ResolveIfs(/*assumed=*/true));
      if (!resolved) break;
    }
    HETPLAN_RETURN_IF_ERROR(InferShapes());
  }
  HETPLAN_RETURN_IF_ERROR(CheckNoIfLeft());
  // Quantized models (graph/qdq.h): every scale and zero point checked, then
  // one DequantizeLinear per reader.
  HETPLAN_RETURN_IF_ERROR(internal::CheckQuantization(model_->graph(), shapes_, dtypes_, label_));
  if (internal::SplitSharedDequantize(model_->mutable_graph(), initializer_names_)) {
    HETPLAN_RETURN_IF_ERROR(InferShapes());
  }
  auto graph = BuildGraph();
  if (!graph.ok()) return graph.status();
  LoadedModel m{std::move(graph).value(), model_, label_, Sha256Hex(bytes), original_nodes_,
                folded_nodes_, options_.fusion, {}, 0, 0, {}, nullptr};
  if (external_tensors_ > 0) {
    m.external_data_dir = options_.external_data_dir;
    m.external_tensors = external_tensors_;
    m.external_bytes = external_bytes_;
  }
  m.assumptions.input_shapes = options_.input_shapes;
  m.assumptions.shape_patterns = shape_patterns_;
  m.assumptions.fixed_inputs = fixed_inputs_;
  m.assumptions.branches = branches_;
  m.assumptions.sample_inputs = options_.samples;
  m.source = std::move(source);
  return m;
}

}  // namespace hetplan::internal

namespace hetplan {

Result<LoadedModel> LoadOnnxModelFromBytes(std::string_view bytes, const std::string& label,
                                           const ImportOptions& options) {
  internal::Importer importer(label, options);
  try {
    return importer.Run(bytes);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kParseError, "{}: could not read the model: {}", label, e.what());
  }
}

void ApplyPlanAssumptions(const PlanAssumptions& a, ImportOptions* o) {
  for (const auto& [name, dims] : a.input_shapes) o->input_shapes.emplace(name, dims);
  for (const auto& f : a.fixed_inputs) o->input_values.emplace(f.name, f.values);
  for (const auto& b : a.branches) {
    if (b.assumed) o->branches.emplace(b.node, b.then);
  }
  if (o->samples.empty()) o->samples = a.sample_inputs;
}

Status PinIfBranches(onnx::ModelProto* model, const std::map<std::string, bool>& branches) {
  return internal::PinBranches(model, branches);
}

Result<LoadedModel> LoadOnnxModel(const std::string& path, const ImportOptions& options) {
  auto bytes = ReadFile(path, options.max_file_bytes);
  if (!bytes.ok()) {
    if (bytes.status().code() == ErrorCode::kLimitExceeded) {
      return Error(ErrorCode::kLimitExceeded, "{}; raise --max-model-mib if this model is intended",
                   bytes.status().message());
    }
    return bytes.status();
  }
  ImportOptions o = options;
  if (o.external_data_dir.empty()) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(std::filesystem::path(path), ec);
    o.external_data_dir = (ec ? std::filesystem::path(path) : abs).parent_path().string();
  }
  return LoadOnnxModelFromBytes(*bytes, path, o);
}

}  // namespace hetplan
