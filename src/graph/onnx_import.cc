#include "hetplan/graph/onnx_import.h"

#include <algorithm>
#include <map>
#include <mutex>
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
#include "graph/graph_builder.h"
#include "graph/qdq.h"
#include "hetplan/graph/dtype.h"
#include "hetplan/util/io.h"
#include "hetplan/util/sha256.h"
#include "hetplan/util/utf8.h"

namespace hetplan {

using internal::ConstTensor;
using internal::NodeLabel;

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
    if (!okd || v <= 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "--shape '{}': dim '{}' is not a positive integer; use e.g. {}=1x3x224x224", text,
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

namespace {

constexpr int kMaxFoldRounds = 16;

// ONNX 1.12's convolution and pooling shape inference (convPoolShapeInference)
// trusts its inputs: it indexes past its vectors when the weight's rank
// differs from the input's — e.g. a rank-2 input into a Conv with a
// [4,3,3,3] weight — and segfaults, and it divides by the strides, so a
// stride of 0 kills the process with SIGFPE (both found by
// tests/fuzz/fuzz_onnx; later ONNX releases check them). Shape inference runs
// against this registry, which hands out copies of the standard schemas of
// those operators with these checks in front of their inference function.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    int weight = -1;  // index of the weight input
    if (key == "Conv" || key == "ConvInteger" || key == "ConvTranspose") weight = 1;
    if (key == "QLinearConv") weight = 3;
    const bool pool = key == "MaxPool" || key == "AveragePool" || key == "LpPool";
    if (schema == nullptr || (weight < 0 && !pool)) return schema;
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<onnx::OpSchema>& guarded = guarded_[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      guarded->TypeAndShapeInferenceFunction(
          [inner = schema->GetTypeAndShapeInferenceFunction(), weight](onnx::InferenceContext& ctx) {
            for (const char* name : {"strides", "dilations", "kernel_shape"}) {
              if (const onnx::AttributeProto* a = ctx.getAttribute(name)) {
                for (int64_t v : a->ints()) {
                  if (v < 1) fail_shape_inference("attribute '", name, "' has ", v, "; every value must be at least 1");
                }
              }
            }
            if (const onnx::AttributeProto* g = ctx.getAttribute("group"); g != nullptr && g->i() < 1) {
              fail_shape_inference("attribute 'group' is ", g->i(), "; it must be at least 1");
            }
            if (weight >= 0 && onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, weight)) {
              const int x = ctx.getInputType(0)->tensor_type().shape().dim_size();
              const int w = ctx.getInputType(weight)->tensor_type().shape().dim_size();
              if (x != w) {
                fail_shape_inference("the input has rank ", x, " but the weight has rank ", w,
                                     "; they must be equal");
              }
            }
            inner(ctx);
          });
    }
    return guarded.get();
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

const onnx::ISchemaRegistry* SchemaRegistry() {
  static const GuardedSchemaRegistry registry;
  return &registry;
}

// Everything the importer tracks while it works on one model.
class Importer {
 public:
  Importer(std::string label, const ImportOptions& options) : label_(std::move(label)), options_(options) {}

  Result<LoadedModel> Run(std::string_view bytes);

 private:
  Status Parse(std::string_view bytes);
  Status CheckStructure();
  Status CheckExternalData();
  Status CheckTensorData();
  Status FixInputShapes();
  Status TopologicalSort();
  Status InferShapes();
  bool FoldConstants();
  Status CollectShapes();
  Result<OpGraph> BuildGraph();

  Status Fail(ErrorCode code, const std::string& what) const {
    return Status(code, fmt::format("{}: {}", label_, what));
  }

  std::string label_;
  ImportOptions options_;
  std::shared_ptr<onnx::ModelProto> model_ = std::make_shared<onnx::ModelProto>();
  int original_nodes_ = 0;
  int folded_nodes_ = 0;
  std::unordered_set<std::string> initializer_names_;
  // name → static shape and dtype of every tensor with a fully known shape
  std::unordered_map<std::string, std::vector<int64_t>> shapes_;
  std::unordered_map<std::string, int32_t> dtypes_;
  std::unordered_map<std::string, ConstTensor> constants_;
};

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

Status Importer::CheckStructure() {
  const auto& g = model_->graph();
  std::unordered_map<std::string, int> opset;
  for (const auto& o : model_->opset_import()) opset[o.domain()] = static_cast<int>(o.version());
  for (const auto& [domain, version] : opset) {
    if (!domain.empty() && domain != "ai.onnx") {
      return Fail(ErrorCode::kUnsupported,
                  fmt::format("opset domain '{}' is not supported (only the standard ai.onnx domain "
                              "is); export without custom or vendor operators",
                              domain));
    }
  }
  if (opset.empty()) {
    return Fail(ErrorCode::kParseError, "the model declares no opset_import; re-export it with an opset");
  }
  int version = opset.count("") ? opset[""] : opset["ai.onnx"];
  // Shape inference and the operator check below use the ONNX library's
  // schemas, which would silently stand in for an opset newer than it knows;
  // ONNX Runtime refuses such a model only later, when it is profiled.
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  if (auto it = known.find(onnx::ONNX_DOMAIN); it != known.end() && version > it->second.second) {
    return Fail(ErrorCode::kUnsupported,
                fmt::format("the model declares opset {} of the default ONNX domain, newer than the newest "
                            "this hetplan supports ({}); re-export the model at opset {} or lower",
                            version, it->second.second, it->second.second));
  }

  auto not_utf8 = [&](const std::string& what) {
    return Fail(ErrorCode::kParseError,
                fmt::format("{} is not valid UTF-8; the file is corrupt or was written by a broken "
                            "exporter: re-export the model",
                            what));
  };
  if (!IsUtf8(g.name())) return not_utf8("the graph's name");
  for (const auto* list : {&g.input(), &g.output()}) {
    for (int i = 0; i < list->size(); ++i) {
      if (!IsUtf8(list->Get(i).name())) return not_utf8(fmt::format("the name of graph input/output #{}", i));
    }
  }
  for (int i = 0; i < g.initializer_size(); ++i) {
    if (!IsUtf8(g.initializer(i).name())) return not_utf8(fmt::format("the name of initializer #{}", i));
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (!IsUtf8(n.name()) || !IsUtf8(n.op_type())) return not_utf8(fmt::format("the name or type of node #{}", i));
    for (const auto* names : {&n.input(), &n.output()}) {
      for (const auto& t : *names) {
        if (!IsUtf8(t)) return not_utf8(fmt::format("a tensor name of node #{}", i));
      }
    }
  }

  for (const auto& init : g.initializer()) initializer_names_.insert(init.name());
  std::unordered_set<std::string> produced;  // graph inputs, initializers, node outputs
  for (const auto& in : g.input()) produced.insert(in.name());
  produced.insert(initializer_names_.begin(), initializer_names_.end());
  std::unordered_set<std::string> node_outputs;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      return Fail(ErrorCode::kUnsupported,
                  fmt::format("{} is in the unknown domain '{}'; only standard ONNX operators are "
                              "supported",
                              NodeLabel(n, i), n.domain()));
    }
    if (n.op_type() == "Loop" || n.op_type() == "If" || n.op_type() == "Scan") {
      return Fail(ErrorCode::kUnsupported,
                  fmt::format("{} is control flow, which hetplan cannot plan statically; export the "
                              "model with the loop unrolled or the branch resolved",
                              NodeLabel(n, i)));
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) {
        return Fail(ErrorCode::kUnsupported,
                    fmt::format("{} has a subgraph attribute '{}'; subgraphs are not supported",
                                NodeLabel(n, i), a.name()));
      }
    }
    if (onnx::OpSchemaRegistry::Schema(n.op_type(), version, "") == nullptr) {
      return Fail(ErrorCode::kUnsupported,
                  fmt::format("{}: '{}' is not an ONNX operator at opset {}; export with standard "
                              "operators",
                              NodeLabel(n, i), n.op_type(), version));
    }
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      if (!node_outputs.insert(out).second || produced.count(out)) {
        return Fail(ErrorCode::kParseError,
                    fmt::format("{} writes tensor '{}', which another node, input or initializer "
                                "already defines; each tensor must have one producer",
                                NodeLabel(n, i), out));
      }
    }
  }
  produced.insert(node_outputs.begin(), node_outputs.end());
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& in : g.node(i).input()) {
      if (!in.empty() && !produced.count(in)) {
        return Fail(ErrorCode::kParseError,
                    fmt::format("{} reads tensor '{}', which no node, graph input or initializer "
                                "produces (dangling edge); repair or re-export the model",
                                NodeLabel(g.node(i), i), in));
      }
    }
  }
  for (const auto& out : g.output()) {
    if (!produced.count(out.name())) {
      return Fail(ErrorCode::kParseError,
                  fmt::format("graph output '{}' is produced by no node; repair or re-export the model",
                              out.name()));
    }
  }
  return Status::Ok();
}

// External data is never read (the planner needs shapes, not weights), but a
// reference that escapes the model's directory is refused outright.
Status Importer::CheckExternalData() {
  auto check = [&](const onnx::TensorProto& t) -> Status {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return Status::Ok();
    for (const auto& kv : t.external_data()) {
      if (kv.key() != "location") continue;
      const std::string& loc = kv.value();
      bool escapes = loc.empty() || loc[0] == '/' || loc.find("..") != std::string::npos ||
                     loc.find('\\') != std::string::npos || loc.find(':') != std::string::npos;
      if (escapes) {
        return Fail(ErrorCode::kUnsupported,
                    fmt::format("initializer '{}' points to external data at '{}', outside the "
                                "model's folder; refusing to follow it (keep external data next to "
                                "the model)",
                                t.name(), loc));
      }
    }
    return Status::Ok();
  };
  for (const auto& t : model_->graph().initializer()) HETPLAN_RETURN_IF_ERROR(check(t));
  for (const auto& n : model_->graph().node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_t()) HETPLAN_RETURN_IF_ERROR(check(a.t()));
    }
  }
  return Status::Ok();
}

// A tensor stored in the file whose data disagrees with its dims is corrupt
// (a truncated download, a broken converter): refuse it rather than plan with
// shapes its weights contradict. Only the sizes are compared; values are
// never decoded, and external data is never opened.
Status Importer::CheckTensorData() {
  using T = onnx::TensorProto;
  auto check = [&](const T& t, const std::string& what) -> Status {
    if (t.data_location() == T::EXTERNAL) return Status::Ok();
    int64_t width = 0;  // bytes per element in raw_data
    int64_t typed = 0;  // values in the typed field
    int64_t per = 1;    // typed values per element (2 for complex)
    switch (t.data_type()) {
      case T::FLOAT: width = 4, typed = t.float_data_size(); break;
      case T::COMPLEX64: width = 8, typed = t.float_data_size(), per = 2; break;
      case T::DOUBLE: width = 8, typed = t.double_data_size(); break;
      case T::COMPLEX128: width = 16, typed = t.double_data_size(), per = 2; break;
      case T::INT64: width = 8, typed = t.int64_data_size(); break;
      case T::UINT64: width = 8, typed = t.uint64_data_size(); break;
      case T::UINT32: width = 4, typed = t.uint64_data_size(); break;
      case T::INT32: width = 4, typed = t.int32_data_size(); break;
      case T::INT16: case T::UINT16: case T::FLOAT16: case T::BFLOAT16:
        width = 2, typed = t.int32_data_size();
        break;
      case T::INT8: case T::UINT8: case T::BOOL: width = 1, typed = t.int32_data_size(); break;
      default: return Status::Ok();  // strings and types the planner never sizes
    }
    // Saturating element count: anything past kCap cannot be in a file under 2^62 bytes.
    constexpr int64_t kCap = int64_t{1} << 58;
    int64_t elements = 1;
    for (int64_t d : t.dims()) {
      if (d < 0) {
        return Fail(ErrorCode::kParseError,
                    fmt::format("{} has a negative dim ({}); the file is corrupt: re-export the model", what, d));
      }
      elements = (d != 0 && elements > kCap / d) ? kCap : elements * d;
    }
    const std::string dims = fmt::format("[{}]", fmt::join(t.dims(), ","));
    if (t.has_raw_data()) {
      const auto bytes = static_cast<int64_t>(t.raw_data().size());
      if (bytes != elements * width) {
        return Fail(ErrorCode::kParseError,
                    fmt::format("{} has dims {} ({} elements of {} bytes) but {} bytes of data; the "
                                "file is corrupt: re-export the model",
                                what, dims, elements, width, bytes));
      }
    } else if (typed != elements * per) {
      return Fail(ErrorCode::kParseError,
                  fmt::format("{} has dims {} ({} elements) but its data holds {} values; the file "
                              "is corrupt: re-export the model",
                              what, dims, elements, typed));
    }
    return Status::Ok();
  };
  for (const auto& t : model_->graph().initializer()) {
    HETPLAN_RETURN_IF_ERROR(check(t, fmt::format("initializer '{}'", t.name())));
  }
  const auto& g = model_->graph();
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& a : g.node(i).attribute()) {
      if (a.has_t()) {
        HETPLAN_RETURN_IF_ERROR(check(a.t(), fmt::format("{} attribute '{}'", NodeLabel(g.node(i), i), a.name())));
      }
    }
  }
  return Status::Ok();
}

Status Importer::FixInputShapes() {
  auto* g = model_->mutable_graph();
  std::set<std::string> unused;
  for (const auto& [name, dims] : options_.input_shapes) unused.insert(name);
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
      continue;
    }
    if (!tt->has_shape()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("graph input '{}' has no shape; give one with --shape {}=1x3x224x224",
                              in->name(), in->name()));
    }
    for (int d = 0; d < tt->shape().dim_size(); ++d) {
      const auto& dim = tt->shape().dim(d);
      if (dim.has_dim_value() && dim.dim_value() <= 0) {
        return Fail(ErrorCode::kUnsupported,
                    fmt::format("graph input '{}' dim {} is {}: a zero-sized tensor cannot be planned; give "
                                "real sizes with --shape {}=1x3x224x224",
                                in->name(), d, dim.dim_value(), in->name()));
      }
      if (!dim.has_dim_value()) {
        std::string sym = dim.has_dim_param() ? fmt::format(" ('{}')", dim.dim_param()) : "";
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("graph input '{}' dim {}{} is symbolic; fix it with --shape "
                                "{}=1x3x224x224 (your real sizes)",
                                in->name(), d, sym, in->name()));
      }
    }
  }
  if (!unused.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--shape names '{}', which is not a graph input; inputs are: {}",
                            *unused.begin(), fmt::join(real_inputs, ", ")));
  }
  return Status::Ok();
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
    for (const auto& in : g->node(i).input()) {
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

Status Importer::InferShapes() {
  // Drop stale value_info so that inference starts from what the nodes say.
  model_->mutable_graph()->clear_value_info();
  try {
    onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(*model_, SchemaRegistry(), opts);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return Fail(ErrorCode::kParseError,
                fmt::format("ONNX shape inference failed: {}; check the named node's inputs", what));
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
    if (n.output_size() != 1 || graph_outputs.count(n.output(0))) continue;
    auto out = internal::EvaluateNode(n, constants_, shapes_);
    if (!out) continue;
    if ((*out)[0].size() > internal::kMaxFoldElements) continue;
    constants_[n.output(0)] = std::move((*out)[0]);
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
    *kept.Add() = g->node(i);
  }
  for (int i = 0; i < g->node_size(); ++i) {
    if (!folded[i]) continue;
    const std::string& name = g->node(i).output(0);
    if (needed.count(name) && !initializer_names_.count(name)) {
      *g->add_initializer() = internal::ToTensorProto(constants_[name], name);
      initializer_names_.insert(name);
    }
  }
  g->mutable_node()->Swap(&kept);
  folded_nodes_ += count;
  return true;
}

// Nodes to operators, in the stages of graph/graph_builder.h.
Result<OpGraph> Importer::BuildGraph() {
  const internal::NodeRoles roles = internal::ClassifyNodes(model_->graph(), initializer_names_);
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
  HETPLAN_RETURN_IF_ERROR(CheckStructure());
  HETPLAN_RETURN_IF_ERROR(CheckExternalData());
  HETPLAN_RETURN_IF_ERROR(CheckTensorData());
  HETPLAN_RETURN_IF_ERROR(FixInputShapes());
  HETPLAN_RETURN_IF_ERROR(TopologicalSort());
  HETPLAN_RETURN_IF_ERROR(InferShapes());
  for (int round = 0; round < kMaxFoldRounds && FoldConstants(); ++round) {
    HETPLAN_RETURN_IF_ERROR(InferShapes());
  }
  // Quantized models (graph/qdq.h): every scale and zero point checked, then
  // one DequantizeLinear per reader.
  HETPLAN_RETURN_IF_ERROR(internal::CheckQuantization(model_->graph(), shapes_, dtypes_, label_));
  if (internal::SplitSharedDequantize(model_->mutable_graph(), initializer_names_)) {
    HETPLAN_RETURN_IF_ERROR(InferShapes());
  }
  auto graph = BuildGraph();
  if (!graph.ok()) return graph.status();
  LoadedModel m{std::move(graph).value(), model_, label_, Sha256Hex(bytes), original_nodes_,
                folded_nodes_, options_.fusion};
  return m;
}

}  // namespace

Result<LoadedModel> LoadOnnxModelFromBytes(std::string_view bytes, const std::string& label,
                                           const ImportOptions& options) {
  Importer importer(label, options);
  try {
    return importer.Run(bytes);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kParseError, "{}: could not read the model: {}", label, e.what());
  }
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
  return LoadOnnxModelFromBytes(*bytes, path, options);
}

}  // namespace hetplan
