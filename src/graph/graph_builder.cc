// Operators, tensors and edges from the nodes of an imported model: which
// nodes are operators and which tensors constants (ClassifyNodes), one
// operator per group of nodes with its inputs, outputs and matrix view
// (BuildOperators). Fusion, which decides the groups, is in fusion.cc.
#include "graph/graph_builder.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "graph/domains.h"
#include "graph/qdq.h"
#include "hetplan/graph/dtype.h"
#include "hetplan/graph/quantization.h"

namespace hetplan::internal {
namespace {

// Unknown element types (string, complex) are named "unknown" and counted as
// one byte per element: they only size tensors, they are never run here.
std::string TensorDtypeName(int32_t t) {
  std::string_view name = DtypeName(t);
  return name.empty() ? std::string("unknown") : std::string(name);
}
int64_t TensorElementBytes(int32_t t) { return std::max<int64_t>(1, DtypeBytes(t)); }

int64_t AttrInt(const onnx::NodeProto& n, const char* name, int64_t def) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return def;
}

}  // namespace

std::string NodeLabel(const onnx::NodeProto& n, int index) {
  if (!n.name().empty()) return fmt::format("node '{}' ({})", n.name(), n.op_type());
  return fmt::format("node #{} ({})", index, n.op_type());
}

std::string NodeRoles::Resolve(std::string name) const {
  const int n = graph->node_size();
  for (int guard = 0; guard < n + 1; ++guard) {
    auto it = alias.find(name);
    if (it == alias.end()) break;
    name = it->second;
  }
  return name;
}

NodeRoles ClassifyNodes(const onnx::GraphProto& g, const std::unordered_set<std::string>& initializers,
                        const std::vector<bool>* aliases) {
  NodeRoles roles;
  roles.graph = &g;
  const int n = g.node_size();
  std::unordered_set<std::string>& constant_tensors = roles.constant_tensors;
  constant_tensors.insert(initializers.begin(), initializers.end());
  std::unordered_map<std::string, std::string>& alias = roles.alias;
  auto resolve = [&](const std::string& name) { return roles.Resolve(name); };
  std::vector<bool>& is_op = roles.is_op;
  is_op.assign(n, false);
  for (int i = 0; i < n; ++i) {
    const auto& node = g.node(i);
    const std::string& t = node.op_type();
    if (t == "Constant") {
      for (const auto& o : node.output()) constant_tensors.insert(o);
    } else if (t == "Identity" || t == "Dropout" || (aliases != nullptr && (*aliases)[i])) {
      if (node.input_size() >= 1 && node.output_size() >= 1) {
        alias[node.output(0)] = node.input(0);
        if (constant_tensors.count(resolve(node.input(0)))) constant_tensors.insert(node.output(0));
      }
    } else {
      bool all_const = node.input_size() > 0;
      for (const auto& in : node.input()) {
        if (!in.empty() && !constant_tensors.count(resolve(in))) all_const = false;
      }
      if (all_const) {
        // A computation on constants only (e.g. a weight transpose left by the
        // exporter) is part of the constant, not an operator.
        for (const auto& o : node.output()) constant_tensors.insert(o);
      } else {
        is_op[i] = true;
      }
    }
  }

  // Consumers of every (resolved) tensor among operator nodes.
  for (int i = 0; i < n; ++i) {
    if (!is_op[i]) continue;
    std::set<std::string> seen;
    for (const auto& in : g.node(i).input()) {
      if (in.empty()) continue;
      std::string r = resolve(in);
      if (seen.insert(r).second) roles.consumers[r].push_back(i);
    }
  }
  for (const auto& o : g.output()) roles.graph_outputs.insert(resolve(o.name()));
  return roles;
}

std::vector<NodeGroup> UnfusedGroups(const NodeRoles& roles) {
  std::vector<NodeGroup> groups;
  for (int i = 0; i < static_cast<int>(roles.is_op.size()); ++i) {
    if (roles.is_op[i]) groups.push_back({i});
  }
  return groups;
}

Result<OpGraph> BuildOperators(const NodeRoles& roles, const std::vector<NodeGroup>& groups,
                               const TensorFacts& facts) {
  const onnx::GraphProto& g = *roles.graph;
  const auto& initializers = *facts.initializer_names;
  const auto& shapes = *facts.shapes;
  const auto& dtypes = *facts.dtypes;
  auto fail = [&](ErrorCode code, const std::string& what) {
    return Status(code, fmt::format("{}: {}", facts.label, what));
  };
  // Producer unit of every resolved tensor.
  std::unordered_map<std::string, int> producer;
  for (int u = 0; u < static_cast<int>(groups.size()); ++u) {
    for (int i : groups[u]) {
      for (const auto& o : g.node(i).output()) {
        if (!o.empty()) producer[o] = u;
      }
    }
  }
  auto tensor_info = [&](const std::string& name, const onnx::NodeProto& node, int index,
                         TensorInfo* out) -> Status {
    auto it = shapes.find(name);
    if (it == shapes.end()) {
      return fail(ErrorCode::kUnsupported,
                  fmt::format("{}: tensor '{}' has no static shape after shape inference; give "
                              "static input shapes with --shape or re-export with static shapes",
                              NodeLabel(node, index), name));
    }
    out->name = name;
    out->shape = it->second;
    int64_t elements = 1;
    for (int64_t d : out->shape) {
      if (d == 0) {
        return fail(ErrorCode::kUnsupported,
                    fmt::format("{}: tensor '{}' has zero elements (shape [{}]); a zero-sized "
                                "tensor cannot be planned",
                                NodeLabel(node, index), name, fmt::join(out->shape, ",")));
      }
      if (d < 0 || elements > facts.max_tensor_elements / d) {
        return fail(ErrorCode::kLimitExceeded,
                    fmt::format("{}: tensor '{}' (shape [{}]) has more than {} elements, beyond the "
                                "planner's size limit; check the model's dims and fix the input shape "
                                "with --shape NAME=1x3x224x224",
                                NodeLabel(node, index), name, fmt::join(out->shape, ","),
                                facts.max_tensor_elements));
      }
      elements *= d;
    }
    out->elements = elements;
    auto dt = dtypes.find(name);
    int32_t type = dt == dtypes.end() ? onnx::TensorProto::FLOAT : dt->second;
    out->dtype = TensorDtypeName(type);
    out->element_bytes = TensorElementBytes(type);
    return Status::Ok();
  };

  // A quantized weight or bias is stored as integers: count those, not its float image.
  const std::unordered_map<std::string, int> dequantized = DequantizedConstants(roles);
  std::vector<Operator> ops;
  std::vector<Edge> edges;
  for (int u = 0; u < static_cast<int>(groups.size()); ++u) {
    // The main node first in the group; nodes are listed in execution order.
    std::vector<int> unit = groups[u];
    const int main_index = unit[0];
    std::sort(unit.begin(), unit.end());
    const auto& main = g.node(main_index);
    Operator op;
    op.id = u;
    op.type = main.op_type();
    op.name = main.name().empty() ? fmt::format("{}_{}", main.op_type(), main_index) : main.name();
    std::unordered_set<int> in_unit(unit.begin(), unit.end());
    std::set<std::string> seen_inputs;
    for (int i : unit) {
      const auto& node = g.node(i);
      op.nodes.push_back(node.name().empty() ? fmt::format("{}_{}", node.op_type(), i) : node.name());
      op.node_types.push_back(node.op_type());
      op.node_indices.push_back(i);
      for (const auto& raw : node.input()) {
        if (raw.empty()) continue;
        std::string in = roles.Resolve(raw);
        if (roles.constant_tensors.count(in)) {
          std::vector<std::string> stored = {in};
          if (auto dq = dequantized.find(in); dq != dequantized.end()) {
            stored.clear();
            for (const auto& s : g.node(dq->second).input()) stored.push_back(roles.Resolve(s));
          }
          for (const std::string& c : stored) {
          auto it = shapes.find(c);
          if (it != shapes.end() && seen_inputs.insert(c).second) {
            int64_t e = 1;
            for (int64_t d : it->second) {
              if (d > 0 && e > facts.max_tensor_elements / d) {
                return fail(ErrorCode::kLimitExceeded,
                            fmt::format("{}: constant '{}' (shape [{}]) has more than {} elements; "
                                        "the model is beyond the planner's size limit",
                                        NodeLabel(node, i), c, fmt::join(it->second, ","),
                                        facts.max_tensor_elements));
              }
              e *= std::max<int64_t>(d, 1);
            }
            auto dt = dtypes.find(c);
            op.param_bytes += e * TensorElementBytes(dt == dtypes.end() ? onnx::TensorProto::FLOAT : dt->second);
          }
          }
          continue;
        }
        auto p = producer.find(in);
        if (p != producer.end() && p->second == u) continue;  // internal to the fused unit
        if (!seen_inputs.insert(in).second) continue;
        TensorInfo ti;
        HETPLAN_RETURN_IF_ERROR(tensor_info(in, node, i, &ti));
        op.input_elements += ti.elements;
        if (p != producer.end()) {
          edges.push_back(Edge{p->second, u, {in}, ti.elements, ti.bytes()});
        }
        op.inputs.push_back(std::move(ti));
      }
    }
    for (int i : unit) {
      const auto& node = g.node(i);
      for (const auto& o : node.output()) {
        if (o.empty()) continue;
        // An output is visible when the graph or a node outside the unit reads it.
        bool visible = roles.graph_outputs.count(o) > 0;
        auto c = roles.consumers.find(o);
        if (c != roles.consumers.end()) {
          for (int k : c->second) visible = visible || !in_unit.count(k);
        }
        if (!visible && !(i == unit.back() && o == node.output(0))) continue;  // unit is sorted: back() runs last
        TensorInfo ti;
        HETPLAN_RETURN_IF_ERROR(tensor_info(o, node, i, &ti));
        op.output_elements += ti.elements;
        op.outputs.push_back(std::move(ti));
      }
    }
    if (op.inputs.empty() && op.outputs.empty()) continue;
    op.dtype = op.outputs.empty() ? "float32" : op.outputs[0].dtype;

    // Matrix view of the main node.
    auto const_shape = [&](int k) -> const std::vector<int64_t>* {
      if (main.input_size() <= k || main.input(k).empty()) return nullptr;
      std::string r = roles.Resolve(main.input(k));
      if (!roles.constant_tensors.count(r)) return nullptr;
      auto it = shapes.find(r);
      return it == shapes.end() ? nullptr : &it->second;
    };
    auto shape_of = [&](int k) -> const std::vector<int64_t>* {
      if (main.input_size() <= k) return nullptr;
      auto it = shapes.find(roles.Resolve(main.input(k)));
      return it == shapes.end() ? nullptr : &it->second;
    };
    const std::vector<int64_t>* main_out = nullptr;
    if (auto it = shapes.find(main.output(0)); it != shapes.end()) main_out = &it->second;
    auto prod = [](const std::vector<int64_t>& v, size_t from, size_t to) {
      int64_t p = 1;
      for (size_t k = from; k < to && k < v.size(); ++k) p *= v[k];
      return p;
    };
    // Products laid out as Conv/Gemm/MatMul (com.microsoft's FusedConv, ...)
    // share their view; the others are in graph/domains.cc. A quantized
    // operator of the standard domain (QLinearConv, MatMulInteger, ...) has
    // the matrix of the float operator it computes, its weight at another input.
    std::string kind = StandardMatrixKind(main);
    const bool standard_domain = main.domain().empty() || main.domain() == "ai.onnx";
    const std::optional<MatrixOperands> operands =
        standard_domain ? MatrixOperandsOf(main.op_type()) : std::nullopt;
    if (kind.empty() && operands) kind = std::string(FloatOpType(main.op_type()));
    const int xi = operands ? operands->activation : 0, wi = operands ? operands->weight : 1;
    struct Lookup final : ShapeLookup {
      std::function<const std::vector<int64_t>*(int)> c, s;
      const std::vector<int64_t>* out = nullptr;
      const std::vector<int64_t>* const_shape(int k) const override { return c(k); }
      const std::vector<int64_t>* shape(int k) const override { return s(k); }
      const std::vector<int64_t>* output_shape() const override { return out; }
    } lookup;
    lookup.c = const_shape;
    lookup.s = shape_of;
    lookup.out = main_out;
    if (kind.empty() && SetOtherMatrixView(main, lookup, &op)) {
      // set by SetOtherMatrixView
    } else if (kind == "Conv" && main_out && main_out->size() >= 3) {
      op.groups = std::max<int64_t>(1, AttrInt(main, "group", 1));
      const auto* w = const_shape(wi);
      const auto* ws = w ? w : shape_of(wi);
      // ONNX shape inference does not compare the input's channels with the
      // weight's; a mismatch would be planned with the wrong crossbar count.
      const auto* x = shape_of(xi);
      if (x && ws && x->size() >= 2 && ws->size() >= 2 &&
          (*ws)[1] > 0 && (*x)[1] != (*ws)[1] * op.groups) {
        return fail(ErrorCode::kParseError,
                    fmt::format("{}: the input has {} channels, but the weight [{}] with group {} "
                                "expects {}; the model is inconsistent: re-export it",
                                NodeLabel(main, main_index), (*x)[1], fmt::join(*ws, ","), op.groups,
                                (*ws)[1] * op.groups));
      }
      if (ws && ws->size() >= 3) {
        op.kernel_h = (*ws)[2];
        op.kernel_w = ws->size() >= 4 ? (*ws)[3] : 1;
        int64_t rows = prod(*ws, 1, ws->size());
        op.macs = prod(*main_out, 0, main_out->size()) * rows;
        if (w) {
          op.has_weight = true;
          op.weight_rows = rows;
          op.weight_cols = (*ws)[0];
          op.n_mvm = (*main_out)[0] * prod(*main_out, 2, main_out->size());
        }
      }
    } else if (kind == "Gemm") {
      const auto* a = shape_of(xi);
      const auto* b = const_shape(wi);
      const auto* bs = b ? b : shape_of(wi);
      if (a && bs && a->size() == 2 && bs->size() == 2) {
        bool ta = AttrInt(main, "transA", 0) != 0, tb = AttrInt(main, "transB", 0) != 0;
        int64_t m = ta ? (*a)[1] : (*a)[0];
        int64_t k = tb ? (*bs)[1] : (*bs)[0];
        int64_t cols = tb ? (*bs)[0] : (*bs)[1];
        // ONNX shape inference does not compare Gemm's inner dimensions.
        if ((ta ? (*a)[0] : (*a)[1]) != k) {
          return fail(ErrorCode::kParseError,
                      fmt::format("{}: A [{}] and B [{}] (transA {}, transB {}) have different inner "
                                  "dimensions ({} vs {}); the model is inconsistent: re-export it",
                                  NodeLabel(main, main_index), fmt::join(*a, ","), fmt::join(*bs, ","),
                                  ta ? 1 : 0, tb ? 1 : 0, ta ? (*a)[0] : (*a)[1], k));
        }
        op.macs = m * k * cols;
        if (b) {
          op.has_weight = true;
          op.weight_rows = k;
          op.weight_cols = cols;
          op.n_mvm = m;
        }
      }
    } else if (kind == "MatMul") {
      const auto* a = shape_of(xi);
      const auto* b = const_shape(wi);
      const auto* bs = b ? b : shape_of(wi);
      if (a && bs && !a->empty() && bs->size() >= 2 && main_out) {
        int64_t k = (*bs)[bs->size() - 2];
        op.macs = prod(*main_out, 0, main_out->size()) * k;
        if (b && bs->size() == 2) {
          op.has_weight = true;
          op.weight_rows = k;
          op.weight_cols = (*bs)[1];
          op.n_mvm = k > 0 ? prod(*a, 0, a->size()) / k : 0;
        }
      }
    }
    if (op.has_weight && op.matrix_op.empty()) op.matrix_op = kind;
    ops.push_back(std::move(op));
  }
  // Re-number in case an empty unit was skipped.
  std::vector<int> renumber(groups.size(), -1);
  for (int k = 0; k < static_cast<int>(ops.size()); ++k) {
    renumber[ops[k].id] = k;
    ops[k].id = k;
  }
  for (auto& e : edges) {
    e.from = renumber[e.from];
    e.to = renumber[e.to];
  }

  // Graph inputs and outputs no operator reads or writes were not checked above.
  auto count_elements = [&](const char* what, TensorInfo* ti) -> Status {
    ti->elements = 1;
    for (int64_t d : ti->shape) {
      if (d > 0 && ti->elements > facts.max_tensor_elements / d) {
        return fail(ErrorCode::kLimitExceeded,
                    fmt::format("graph {} '{}' (shape [{}]) has more than {} elements; the model "
                                "is beyond the planner's size limit",
                                what, ti->name, fmt::join(ti->shape, ","), facts.max_tensor_elements));
      }
      ti->elements *= d;
    }
    return Status::Ok();
  };
  std::vector<TensorInfo> inputs, outputs;
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) continue;
    TensorInfo ti;
    ti.name = in.name();
    if (auto it = shapes.find(in.name()); it != shapes.end()) {
      ti.shape = it->second;
      HETPLAN_RETURN_IF_ERROR(count_elements("input", &ti));
    }
    ti.dtype = TensorDtypeName(dtypes.count(in.name()) ? dtypes.at(in.name()) : 1);
    ti.element_bytes = TensorElementBytes(dtypes.count(in.name()) ? dtypes.at(in.name()) : 1);
    inputs.push_back(ti);
  }
  for (const auto& out : g.output()) {
    TensorInfo ti;
    ti.name = out.name();
    if (auto it = shapes.find(roles.Resolve(out.name())); it != shapes.end()) {
      ti.shape = it->second;
      HETPLAN_RETURN_IF_ERROR(count_elements("output", &ti));
    }
    if (auto dt = dtypes.find(roles.Resolve(out.name())); dt != dtypes.end()) {  // a quantized model's may be uint8
      ti.dtype = TensorDtypeName(dt->second);
      ti.element_bytes = TensorElementBytes(dt->second);
    }
    outputs.push_back(ti);
  }
  auto graph = OpGraph::Create(facts.label, std::move(ops), std::move(edges), std::move(inputs),
                               std::move(outputs));
  if (!graph.ok()) return graph.status();
  if (graph->size() == 0) {
    return fail(ErrorCode::kParseError, "the graph has no operators after removing constants; nothing to plan");
  }
  return graph;
}

}  // namespace hetplan::internal
