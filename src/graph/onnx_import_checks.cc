// The importer's checks (graph/onnx_importer.h): the model's structure
// (opsets, UTF-8 names, one producer per tensor, no dangling edge, --branch
// names), the tensor data stored in it, each node's domain and subgraphs, and
// no If left once nothing more folds.
#include "graph/onnx_importer.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/control_flow.h"
#include "graph/domains.h"
#include "graph/graph_builder.h"
#include "graph/shape_errors.h"
#include "hetplan/graph/external_data.h"
#include "hetplan/graph/graph_walk.h"
#include "hetplan/util/utf8.h"

namespace hetplan {

// ONNX Runtime's: it names the newest opset it supports in its refusal of a
// newer one ("Current official support for domain ai.onnx is till opset 26");
// tests/ort/opsets_test.cc checks both numbers against the library.
constexpr int kBundledOrtNewestOpset = 26;
constexpr const char* kBundledOrtVersion = "1.29";

int NewestSupportedOpset() {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = known.find(onnx::ONNX_DOMAIN);
  return std::min(it == known.end() ? 0 : it->second.second, kBundledOrtNewestOpset);
}

}  // namespace hetplan

namespace hetplan::internal {

Status Importer::CheckStructure() {
  auto& g = *model_->mutable_graph();
  // Domains are judged by the nodes that use them (below), not by the
  // imports a model declares: exporters list domains they never use.
  std::unordered_map<std::string, int> opset;
  for (const auto& o : model_->opset_import()) opset[o.domain()] = static_cast<int>(o.version());
  if (opset.empty()) {
    return Fail(ErrorCode::kParseError, "the model declares no opset_import; re-export it with an opset");
  }
  int version = opset.count("") ? opset[""] : opset["ai.onnx"];
  default_opset_ = version;
  // Shape inference and the operator check below use the ONNX library's
  // schemas, which would silently stand in for an opset newer than it knows;
  // ONNX Runtime refuses such a model only later, when it is profiled.
  if (const int newest = NewestSupportedOpset(); version > newest) {
    return Fail(ErrorCode::kUnsupported,
                fmt::format("the model declares opset {} of the default ONNX domain, newer than the newest "
                            "this hetplan supports ({}: ONNX Runtime {} runs up to it); re-export the model at "
                            "opset {} or lower",
                            version, newest, kBundledOrtVersion, newest));
  }
  internal::NameIfNodes(&g);

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
  bool uses_microsoft = false;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    HETPLAN_RETURN_IF_ERROR(CheckNode(n, i));
    uses_microsoft = uses_microsoft || n.domain() == internal::kMicrosoftDomain;
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
    std::vector<std::string> reads(g.node(i).input().begin(), g.node(i).input().end());
    if (g.node(i).op_type() == "If") {
      for (auto& name : internal::ImplicitInputs(g.node(i))) reads.push_back(std::move(name));
    }
    for (const auto& in : reads) {
      if (!in.empty() && !produced.count(in)) {
        return Fail(ErrorCode::kParseError,
                    fmt::format("{} reads tensor '{}', which no node, graph input or initializer "
                                "produces (dangling edge); repair or re-export the model",
                                NodeLabel(g.node(i), i), in));
      }
    }
  }
  if (uses_microsoft && !opset.count(internal::kMicrosoftDomain)) {
    // ONNX Runtime's tools always declare it; a hand-made model may not.
    auto* o = model_->add_opset_import();
    o->set_domain(internal::kMicrosoftDomain);
    o->set_version(1);
  }
  const std::vector<std::string> ifs = internal::IfNames(g);
  for (const auto& [name, then] : options_.branches) {
    if (std::find(ifs.begin(), ifs.end(), name) == ifs.end()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--branch names '{}', which is not an If node of the model; {}", name,
                              ifs.empty() ? std::string("the model has no If")
                                          : fmt::format("its Ifs are: {}", fmt::join(ifs, ", "))));
    }
    unused_branches_.insert(name);
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

// External data: every reference is checked from its entries (inside the
// model's folder, the length the tensor needs). The tensors shape inference
// and folding read are read into the model: the arguments (axes, pads,
// shapes, sizes) and the small integer tensors (indices). The weights stay in
// their file, which the importer never opens: ONNX Runtime reads them when it
// profiles or runs, split when it copies them, and a plan from analytical
// costs needs no data file at all.
Status Importer::ResolveExternalData() {
  constexpr int64_t kSmallIntegerBytes = 64 << 10;
  constexpr int64_t kMaxReadBytes = 1 << 20;  // what import reads of one tensor, at most
  const std::string& dir = options_.external_data_dir;
  // What shape inference and folding read: the arguments (Range's bounds
  // too) and Constant nodes' values.
  std::unordered_set<std::string> arguments;
  std::unordered_set<const onnx::TensorProto*> constant_values;
  (void)ForEachGraph(model_->mutable_graph(), [&](onnx::GraphProto* g) {
    for (const auto& n : g->node()) {
      for (int k = 0; k < n.input_size(); ++k) {
        if (IsArgumentInput(n, k) || (n.op_type() == "Range" && n.domain().empty())) arguments.insert(n.input(k));
      }
      if (n.op_type() != "Constant") continue;
      for (const auto& a : n.attribute()) {
        if (a.has_t()) constant_values.insert(&a.t());
      }
    }
    return Status::Ok();
  });
  auto resolve = [&](onnx::TensorProto* t, const std::string& what) -> Status {
    if (t->data_location() != onnx::TensorProto::EXTERNAL) return Status::Ok();
    HETPLAN_ASSIGN_OR_RETURN(ExternalRange r, ExternalRangeOf(*t, label_, what));
    const bool integer = t->data_type() == onnx::TensorProto::INT64 || t->data_type() == onnx::TensorProto::INT32;
    const bool needed = arguments.count(t->name()) || constant_values.count(t) || (integer && r.length <= kSmallIntegerBytes);
    if (!needed || r.length > kMaxReadBytes) {
      ++external_tensors_;
      external_bytes_ += std::max<int64_t>(r.length, 0);
      return Status::Ok();
    }
    HETPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadExternalTensor(*t, dir, label_, what));
    t->set_raw_data(std::move(bytes));
    t->clear_external_data();
    t->set_data_location(onnx::TensorProto::DEFAULT);
    return Status::Ok();
  };
  return ForEachStoredTensor(model_->mutable_graph(), resolve);
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

Status Importer::CheckNode(const onnx::NodeProto& n, int i) const {
  const std::string reason = internal::CheckNodeDomain(n, NodeLabel(n, i), default_opset_, *SchemaRegistry());
  if (!reason.empty()) return Fail(ErrorCode::kUnsupported, reason);
  if (n.op_type() == "Loop" || n.op_type() == "Scan") {
    return Fail(ErrorCode::kUnsupported,
                fmt::format("{} is control flow, which hetplan cannot plan statically; export the "
                            "model with the loop unrolled or the branch resolved",
                            NodeLabel(n, i)));
  }
  for (const auto& a : n.attribute()) {
    const bool branch = n.op_type() == "If" && (a.name() == "then_branch" || a.name() == "else_branch");
    if ((a.has_g() || a.graphs_size() > 0) && !branch) {
      return Fail(ErrorCode::kUnsupported,
                  fmt::format("{} has a subgraph attribute '{}'; subgraphs are not supported",
                              NodeLabel(n, i), a.name()));
    }
  }
  return Status::Ok();
}

// What CheckStructure checks of the main graph's nodes, for a branch's.
Status Importer::CheckInlinedNodes(int first, int count) {
  auto* g = model_->mutable_graph();
  for (int i = first; i < first + count; ++i) {
    const auto& n = g->node(i);
    HETPLAN_RETURN_IF_ERROR(CheckNode(n, i));
    if (n.domain() == internal::kMicrosoftDomain) {
      bool declared = false;
      for (const auto& o : model_->opset_import()) declared = declared || o.domain() == internal::kMicrosoftDomain;
      if (!declared) {
        auto* o = model_->add_opset_import();
        o->set_domain(internal::kMicrosoftDomain);
        o->set_version(1);
      }
    }
  }
  return Status::Ok();
}

// An If still in the graph once nothing more folds depends on run-time data.
Status Importer::CheckNoIfLeft() {
  const auto& g = model_->graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type() != "If") continue;
    std::vector<std::string> sources = internal::InputsFeeding(g, n.input(0), initializer_names_);
    const std::string from = sources.empty() ? std::string("values computed at run time")
                                             : fmt::format("graph input{} '{}'", sources.size() == 1 ? "" : "s",
                                                           fmt::join(sources, "', '"));
    return Fail(ErrorCode::kUnsupported,
                fmt::format("{} is control flow on a condition known only at run time ('{}' depends on {}); plan "
                            "one branch with --branch {}=then or --branch {}=else{}",
                            NodeLabel(n, i), n.input(0), from, n.name(), n.name(),
                            sources.empty() ? "" : ", or fix the input with --value"));
  }
  if (!unused_branches_.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--branch names '{}', an If the model never reaches (it sits in a branch that is not "
                            "taken); drop the option",
                            *unused_branches_.begin()));
  }
  return Status::Ok();
}

}  // namespace hetplan::internal
