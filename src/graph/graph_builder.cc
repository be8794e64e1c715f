// Operators, tensors and edges from the nodes of an imported model: which
// nodes are operators and which tensors constants (ClassifyNodes), one
// operator per group of nodes with its inputs, outputs and matrix view
// (BuildOperators). Fusion, which decides the groups, is in fusion.cc.
#include "graph/graph_builder.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/attributes.h"
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

namespace {

// What the stages of BuildOperators read: the graph, its node roles and the tensor facts.
struct BuildContext {
  const onnx::GraphProto& g;
  const NodeRoles& roles;
  const TensorFacts& facts;
  const std::unordered_set<std::string>& initializers;
  const std::unordered_map<std::string, std::vector<int64_t>>& shapes;
  const std::unordered_map<std::string, int32_t>& dtypes;

  // An error prefixed with the model's label.
  Status Fail(ErrorCode code, const std::string& what) const {
    return Status(code, fmt::format("{}: {}", facts.label, what));
  }
};

// Producer unit of every resolved tensor.
std::unordered_map<std::string, int> ProducerUnits(const onnx::GraphProto& g, const std::vector<NodeGroup>& groups) {
  std::unordered_map<std::string, int> producer;
  for (int u = 0; u < static_cast<int>(groups.size()); ++u) {
    for (int i : groups[u]) {
      for (const auto& o : g.node(i).output()) {
        if (!o.empty()) producer[o] = u;
      }
    }
  }
  return producer;
}

// Name, static shape, element count and dtype of tensor `name`, which node `index` reads or writes; an error when its
// shape is unknown, zero-sized or beyond the size limit.
Status GetTensorInfo(const BuildContext& ctx, const std::string& name, const onnx::NodeProto& node, int index,
                     TensorInfo* out) {
  const TensorFacts& facts = ctx.facts;
  auto it = ctx.shapes.find(name);
  if (it == ctx.shapes.end()) {
    return ctx.Fail(ErrorCode::kUnsupported,
                    fmt::format("{}: tensor '{}' has no static shape after shape inference; give "
                                "static input shapes with --shape or re-export with static shapes",
                                NodeLabel(node, index), name));
  }
  out->name = name;
  out->shape = it->second;
  int64_t elements = 1;
  for (int64_t d : out->shape) {
    if (d == 0) {
      return ctx.Fail(ErrorCode::kUnsupported,
                      fmt::format("{}: tensor '{}' has zero elements (shape [{}]); a zero-sized "
                                  "tensor cannot be planned",
                                  NodeLabel(node, index), name, fmt::join(out->shape, ",")));
    }
    if (d < 0 || elements > facts.max_tensor_elements / d) {
      return ctx.Fail(ErrorCode::kLimitExceeded,
                      fmt::format("{}: tensor '{}' (shape [{}]) has more than {} elements, beyond the "
                                  "planner's size limit; check the model's dims and fix the input shape "
                                  "with --shape NAME=1x3x224x224",
                                  NodeLabel(node, index), name, fmt::join(out->shape, ","),
                                  facts.max_tensor_elements));
    }
    elements *= d;
  }
  out->elements = elements;
  auto dt = ctx.dtypes.find(name);
  int32_t type = dt == ctx.dtypes.end() ? onnx::TensorProto::FLOAT : dt->second;
  out->dtype = TensorDtypeName(type);
  out->element_bytes = TensorElementBytes(type);
  return Status::Ok();
}

// Adds to op->param_bytes the stored bytes of constant `in`, which node `i` reads: the integers a quantized weight or
// bias is stored as (`dequantized`), not its float image; each stored tensor counts once (`seen_inputs`).
Status AddConstantBytes(const BuildContext& ctx, const std::unordered_map<std::string, int>& dequantized,
                        const std::string& in, const onnx::NodeProto& node, int i,
                        std::set<std::string>* seen_inputs, Operator* op) {
  std::vector<std::string> stored = {in};
  if (auto dq = dequantized.find(in); dq != dequantized.end()) {
    stored.clear();
    for (const auto& s : ctx.g.node(dq->second).input()) stored.push_back(ctx.roles.Resolve(s));
  }
  for (const std::string& c : stored) {
    auto it = ctx.shapes.find(c);
    if (it != ctx.shapes.end() && seen_inputs->insert(c).second) {
      int64_t e = 1;
      for (int64_t d : it->second) {
        if (d > 0 && e > ctx.facts.max_tensor_elements / d) {
          return ctx.Fail(ErrorCode::kLimitExceeded,
                          fmt::format("{}: constant '{}' (shape [{}]) has more than {} elements; "
                                      "the model is beyond the planner's size limit",
                                      NodeLabel(node, i), c, fmt::join(it->second, ","),
                                      ctx.facts.max_tensor_elements));
        }
        e *= std::max<int64_t>(d, 0);  // an empty constant (a 0 dim) stores nothing
      }
      auto dt = ctx.dtypes.find(c);
      const int32_t type = dt == ctx.dtypes.end() ? onnx::TensorProto::FLOAT : dt->second;
      // Packed as stored (two int4 in a byte); a type without a width counts a byte per element.
      op->param_bytes += DtypeBits(type) > 0 ? DtypeStorageBytes(type, e) : e * TensorElementBytes(type);
    }
  }
  return Status::Ok();
}

// Constant inputs that are arguments of the operation, not parameters it
// computes with: axes, sizes, pads, bounds and counts. Opsets keep moving
// them from attributes to inputs (the reductions' axes at 18, DFT's axis at
// 20, Pad's axes at 18, Squeeze's at 13, Slice's at 10, ...); they are not
// counted in param_bytes, so that an operator costs the same at every opset.

// The nodes of unit `u` (sorted) into `op`, with the tensors they read: constants as parameter bytes, the others as
// inputs, with an edge from the unit that produces each.
Status AddUnitNodesAndInputs(const BuildContext& ctx, const std::unordered_map<std::string, int>& producer,
                             const std::unordered_map<std::string, int>& dequantized, int u,
                             const std::vector<int>& unit, Operator* op, std::vector<Edge>* edges) {
  std::set<std::string> seen_inputs;
  for (int i : unit) {
    const auto& node = ctx.g.node(i);
    op->nodes.push_back(node.name().empty() ? fmt::format("{}_{}", node.op_type(), i) : node.name());
    op->node_types.push_back(node.op_type());
    op->node_indices.push_back(i);
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string& raw = node.input(k);
      if (raw.empty()) continue;
      std::string in = ctx.roles.Resolve(raw);
      if (ctx.roles.constant_tensors.count(in)) {
        if (!IsArgumentInput(node, k)) {
          HETPLAN_RETURN_IF_ERROR(AddConstantBytes(ctx, dequantized, in, node, i, &seen_inputs, op));
        }
        continue;
      }
      auto p = producer.find(in);
      if (p != producer.end() && p->second == u) continue;  // internal to the fused unit
      if (!seen_inputs.insert(in).second) continue;
      TensorInfo ti;
      HETPLAN_RETURN_IF_ERROR(GetTensorInfo(ctx, in, node, i, &ti));
      op->input_elements += ti.elements;
      if (p != producer.end()) {
        edges->push_back(Edge{p->second, u, {in}, ti.elements, ti.bytes()});
      }
      op->inputs.push_back(std::move(ti));
    }
  }
  return Status::Ok();
}

// The outputs of the unit (sorted) that the graph or a node outside it reads, and the last node's first output.
Status AddUnitOutputs(const BuildContext& ctx, const std::vector<int>& unit, Operator* op) {
  std::unordered_set<int> in_unit(unit.begin(), unit.end());
  for (int i : unit) {
    const auto& node = ctx.g.node(i);
    for (const auto& o : node.output()) {
      if (o.empty()) continue;
      // An output is visible when the graph or a node outside the unit reads it.
      bool visible = ctx.roles.graph_outputs.count(o) > 0;
      auto c = ctx.roles.consumers.find(o);
      if (c != ctx.roles.consumers.end()) {
        for (int k : c->second) visible = visible || !in_unit.count(k);
      }
      if (!visible && !(i == unit.back() && o == node.output(0))) continue;  // unit is sorted: back() runs last
      TensorInfo ti;
      HETPLAN_RETURN_IF_ERROR(GetTensorInfo(ctx, o, node, i, &ti));
      op->output_elements += ti.elements;
      op->outputs.push_back(std::move(ti));
    }
  }
  return Status::Ok();
}

// The shapes of the main node's inputs and output, as the matrix views read them.
class MainNodeShapes final : public ShapeLookup {
 public:
  MainNodeShapes(const BuildContext& ctx, const onnx::NodeProto& main) : ctx_(ctx), main_(main) {
    if (auto it = ctx.shapes.find(main.output(0)); it != ctx.shapes.end()) out_ = &it->second;
  }
  // Input k's shape when it is a constant.
  const std::vector<int64_t>* const_shape(int k) const override {
    if (main_.input_size() <= k || main_.input(k).empty()) return nullptr;
    std::string r = ctx_.roles.Resolve(main_.input(k));
    if (!ctx_.roles.constant_tensors.count(r)) return nullptr;
    auto it = ctx_.shapes.find(r);
    return it == ctx_.shapes.end() ? nullptr : &it->second;
  }
  // Input k's shape, constant or not.
  const std::vector<int64_t>* shape(int k) const override {
    if (main_.input_size() <= k) return nullptr;
    auto it = ctx_.shapes.find(ctx_.roles.Resolve(main_.input(k)));
    return it == ctx_.shapes.end() ? nullptr : &it->second;
  }
  const std::vector<int64_t>* output_shape() const override { return out_; }

 private:
  const BuildContext& ctx_;
  const onnx::NodeProto& main_;
  const std::vector<int64_t>* out_ = nullptr;
};

// Product of dims [from, to) of `v`.
int64_t DimProduct(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to && k < v.size(); ++k) p *= v[k];
  return p;
}

// Matrix view of a Conv-like main node (activation input `xi`, weight `wi`); an error when the input's channels
// disagree with the weight's.
Status SetConvView(const BuildContext& ctx, const MainNodeShapes& s, const onnx::NodeProto& main, int main_index,
                   int xi, int wi, Operator* op) {
  const std::vector<int64_t>* main_out = s.output_shape();
  op->groups = std::max<int64_t>(1, AttrInt(main, "group", 1));
  const auto* w = s.const_shape(wi);
  const auto* ws = w ? w : s.shape(wi);
  // ONNX shape inference does not compare the input's channels with the
  // weight's; a mismatch would be planned with the wrong crossbar count.
  const auto* x = s.shape(xi);
  if (x && ws && x->size() >= 2 && ws->size() >= 2 &&
      (*ws)[1] > 0 && (*x)[1] != (*ws)[1] * op->groups) {
    return ctx.Fail(ErrorCode::kParseError,
                    fmt::format("{}: the input has {} channels, but the weight [{}] with group {} "
                                "expects {}; the model is inconsistent: re-export it",
                                NodeLabel(main, main_index), (*x)[1], fmt::join(*ws, ","), op->groups,
                                (*ws)[1] * op->groups));
  }
  if (ws && ws->size() >= 3) {
    op->kernel_h = (*ws)[2];
    op->kernel_w = ws->size() >= 4 ? (*ws)[3] : 1;
    int64_t rows = DimProduct(*ws, 1, ws->size());
    op->macs = DimProduct(*main_out, 0, main_out->size()) * rows;
    if (w) {
      op->SetWeightMatrix(rows, (*ws)[0], (*main_out)[0] * DimProduct(*main_out, 2, main_out->size()));
    }
  }
  return Status::Ok();
}

// Matrix view of a Gemm-like main node; an error when its inner dimensions disagree.
Status SetGemmView(const BuildContext& ctx, const MainNodeShapes& s, const onnx::NodeProto& main, int main_index,
                   int xi, int wi, Operator* op) {
  const auto* a = s.shape(xi);
  const auto* b = s.const_shape(wi);
  const auto* bs = b ? b : s.shape(wi);
  if (a && bs && a->size() == 2 && bs->size() == 2) {
    const bool ta = AttrInt(main, "transA", 0) != 0, tb = AttrInt(main, "transB", 0) != 0;
    const GemmDims d = GemmDimsOf(*a, *bs, ta, tb);
    // Shape inference refuses a Gemm's mismatch first (GuardedGemm); this also covers the Gemm-like contrib nodes.
    if (d.a_inner != d.k) {
      return ctx.Fail(ErrorCode::kParseError,
                      fmt::format("{}: A [{}] and B [{}] (transA {}, transB {}) have different inner "
                                  "dimensions ({} vs {}); the model is inconsistent: re-export it",
                                  NodeLabel(main, main_index), fmt::join(*a, ","), fmt::join(*bs, ","),
                                  ta ? 1 : 0, tb ? 1 : 0, d.a_inner, d.k));
    }
    op->macs = d.m * d.k * d.cols;
    if (b) {
      op->SetWeightMatrix(d.k, d.cols, d.m);
    }
  }
  return Status::Ok();
}

// Matrix view of a MatMul-like main node.
void SetMatMulView(const MainNodeShapes& s, int xi, int wi, Operator* op) {
  const std::vector<int64_t>* main_out = s.output_shape();
  const auto* a = s.shape(xi);
  const auto* b = s.const_shape(wi);
  const auto* bs = b ? b : s.shape(wi);
  if (a && bs && !a->empty() && bs->size() >= 2 && main_out) {
    int64_t k = (*bs)[bs->size() - 2];
    op->macs = DimProduct(*main_out, 0, main_out->size()) * k;
    if (b && bs->size() == 2) {
      op->SetWeightMatrix(k, (*bs)[1], k > 0 ? DimProduct(*a, 0, a->size()) / k : 0);
    }
  }
}

// Matrix view of the main node: its MACs and, for a product with a constant weight, the weight matrix.
Status SetMatrixView(const BuildContext& ctx, const onnx::NodeProto& main, int main_index, Operator* op) {
  const MainNodeShapes shapes(ctx, main);
  const std::vector<int64_t>* main_out = shapes.output_shape();
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
  if (kind.empty() && SetOtherMatrixView(main, shapes, op)) {
    // set by SetOtherMatrixView
  } else if (kind == "Conv" && main_out && main_out->size() >= 3) {
    HETPLAN_RETURN_IF_ERROR(SetConvView(ctx, shapes, main, main_index, xi, wi, op));
  } else if (kind == "Gemm") {
    HETPLAN_RETURN_IF_ERROR(SetGemmView(ctx, shapes, main, main_index, xi, wi, op));
  } else if (kind == "MatMul") {
    SetMatMulView(shapes, xi, wi, op);
  }
  if (op->has_weight && op->matrix_op.empty()) op->matrix_op = kind;
  return Status::Ok();
}

// Bits of one stored weight of the product `main`, when it is stored as
// integers: its DequantizeLinear's input (QDQ), the integer weight of
// QLinearConv/MatMulInteger, MatMulNBits' `bits`; 0 for a float weight.
int64_t WeightBits(const BuildContext& ctx, const std::unordered_map<std::string, int>& dequantized,
                   const onnx::NodeProto& main) {
  if (main.domain() == "com.microsoft" && main.op_type() == "MatMulNBits") return AttrInt(main, "bits", 4);
  const bool standard_domain = main.domain().empty() || main.domain() == "ai.onnx";
  const std::optional<MatrixOperands> operands = standard_domain ? MatrixOperandsOf(main.op_type()) : std::nullopt;
  const bool qgemm = main.domain() == "com.microsoft" && main.op_type() == "QGemm";  // B at 3, as QLinear*'s
  const int wi = operands ? operands->weight : qgemm ? 3 : 1;
  if (main.input_size() <= wi || main.input(wi).empty()) return 0;
  std::string w = ctx.roles.Resolve(main.input(wi));
  if (auto dq = dequantized.find(w); dq != dequantized.end() && ctx.g.node(dq->second).input_size() > 0) {
    w = ctx.roles.Resolve(ctx.g.node(dq->second).input(0));
  }
  auto dt = ctx.dtypes.find(w);
  return dt == ctx.dtypes.end() || IsFloatingDtype(dt->second) ? 0 : DtypeBits(dt->second);
}

// Re-numbers the operators and their edges in case an empty unit was skipped.
void RenumberOperators(size_t unit_count, std::vector<Operator>* ops, std::vector<Edge>* edges) {
  std::vector<int> renumber(unit_count, -1);
  for (int k = 0; k < static_cast<int>(ops->size()); ++k) {
    renumber[(*ops)[k].id] = k;
    (*ops)[k].id = k;
  }
  for (auto& e : *edges) {
    e.from = renumber[e.from];
    e.to = renumber[e.to];
  }
}

// Element count of a graph input or output (`what`); an error beyond the size limit.
Status CountGraphTensorElements(const BuildContext& ctx, const char* what, TensorInfo* ti) {
  ti->elements = 1;
  for (int64_t d : ti->shape) {
    if (d > 0 && ti->elements > ctx.facts.max_tensor_elements / d) {
      return ctx.Fail(ErrorCode::kLimitExceeded,
                      fmt::format("graph {} '{}' (shape [{}]) has more than {} elements; the model "
                                  "is beyond the planner's size limit",
                                  what, ti->name, fmt::join(ti->shape, ","), ctx.facts.max_tensor_elements));
    }
    ti->elements *= d;
  }
  return Status::Ok();
}

// The graph's inputs (initializers aside) and outputs.
Status GraphInputsAndOutputs(const BuildContext& ctx, std::vector<TensorInfo>* inputs,
                             std::vector<TensorInfo>* outputs) {
  const auto& shapes = ctx.shapes;
  const auto& dtypes = ctx.dtypes;
  for (const auto& in : ctx.g.input()) {
    if (ctx.initializers.count(in.name())) continue;
    TensorInfo ti;
    ti.name = in.name();
    if (auto it = shapes.find(in.name()); it != shapes.end()) {
      ti.shape = it->second;
      HETPLAN_RETURN_IF_ERROR(CountGraphTensorElements(ctx, "input", &ti));
    }
    ti.dtype = TensorDtypeName(dtypes.count(in.name()) ? dtypes.at(in.name()) : 1);
    ti.element_bytes = TensorElementBytes(dtypes.count(in.name()) ? dtypes.at(in.name()) : 1);
    inputs->push_back(ti);
  }
  for (const auto& out : ctx.g.output()) {
    TensorInfo ti;
    ti.name = out.name();
    if (auto it = shapes.find(ctx.roles.Resolve(out.name())); it != shapes.end()) {
      ti.shape = it->second;
      HETPLAN_RETURN_IF_ERROR(CountGraphTensorElements(ctx, "output", &ti));
    }
    if (auto dt = dtypes.find(ctx.roles.Resolve(out.name())); dt != dtypes.end()) {  // a quantized model's may be uint8
      ti.dtype = TensorDtypeName(dt->second);
      ti.element_bytes = TensorElementBytes(dt->second);
    }
    outputs->push_back(ti);
  }
  return Status::Ok();
}

}  // namespace

Result<OpGraph> BuildOperators(const NodeRoles& roles, const std::vector<NodeGroup>& groups,
                               const TensorFacts& facts) {
  const BuildContext ctx{*roles.graph, roles, facts, *facts.initializer_names, *facts.shapes, *facts.dtypes};
  const onnx::GraphProto& g = ctx.g;
  const std::unordered_map<std::string, int> producer = ProducerUnits(g, groups);
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
    HETPLAN_RETURN_IF_ERROR(AddUnitNodesAndInputs(ctx, producer, dequantized, u, unit, &op, &edges));
    HETPLAN_RETURN_IF_ERROR(AddUnitOutputs(ctx, unit, &op));
    if (op.inputs.empty() && op.outputs.empty()) continue;
    op.dtype = op.outputs.empty() ? "float32" : op.outputs[0].dtype;
    HETPLAN_RETURN_IF_ERROR(SetMatrixView(ctx, main, main_index, &op));
    if (op.has_weight) op.weight_bits = WeightBits(ctx, dequantized, main);
    ops.push_back(std::move(op));
  }
  RenumberOperators(groups.size(), &ops, &edges);

  // Graph inputs and outputs no operator reads or writes were not checked above.
  std::vector<TensorInfo> inputs, outputs;
  HETPLAN_RETURN_IF_ERROR(GraphInputsAndOutputs(ctx, &inputs, &outputs));
  auto graph = OpGraph::Create(facts.label, std::move(ops), std::move(edges), std::move(inputs),
                               std::move(outputs));
  if (!graph.ok()) return graph.status();
  if (graph->size() == 0) {
    return ctx.Fail(ErrorCode::kParseError, "the graph has no operators after removing constants; nothing to plan");
  }
  return graph;
}

bool IsArgumentInput(const onnx::NodeProto& node, int index) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  static const std::unordered_map<std::string, std::vector<int>> kArguments = {
      {"ReduceMean", {1}},   {"ReduceMax", {1}},      {"ReduceMin", {1}},       {"ReduceProd", {1}},
      {"ReduceSum", {1}},    {"ReduceL1", {1}},       {"ReduceL2", {1}},        {"ReduceLogSum", {1}},
      {"ReduceLogSumExp", {1}}, {"ReduceSumSquare", {1}}, {"Squeeze", {1}},    {"Unsqueeze", {1}},
      {"Split", {1}},        {"Slice", {1, 2, 3, 4}}, {"Pad", {1, 2, 3}},      {"Resize", {1, 2, 3}},
      {"Upsample", {1}},     {"Reshape", {1}},        {"Expand", {1}},          {"Tile", {1}},
      {"TopK", {1}},         {"Clip", {1, 2}},        {"DFT", {1, 2}},          {"STFT", {1, 3}},
      {"CumSum", {1}},       {"Trilu", {1}},          {"OneHot", {1}},          {"Col2Im", {1, 2}},
      {"CenterCropPad", {1}}, {"Dropout", {1, 2}},    {"NonMaxSuppression", {2, 3, 4}},
  };
  auto it = kArguments.find(node.op_type());
  return it != kArguments.end() && std::find(it->second.begin(), it->second.end(), index) != it->second.end();
}

}  // namespace hetplan::internal
