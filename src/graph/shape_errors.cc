// Shape errors that name their fix (graph/shape_errors.h).
#include "graph/shape_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "graph/constant_folding.h"
#include "graph/graph_builder.h"

namespace hetplan::internal {

std::string ShapeSuggestion(const std::string& input, const onnx::TensorShapeProto& shape) {
  if (shape.dim_size() == 0) return fmt::format("--shape {}=...", input);
  std::vector<int64_t> dims;
  for (const auto& dim : shape.dim()) dims.push_back(dim.has_dim_value() && dim.dim_value() > 0 ? dim.dim_value() : 1);
  return fmt::format("--shape {}={}", input, fmt::join(dims, "x"));
}

std::vector<MissingShape> MissingInputShapes(const onnx::GraphProto& g,
                                             const std::unordered_set<std::string>& skip) {
  std::vector<MissingShape> out;
  for (const auto& in : g.input()) {
    if (skip.count(in.name()) || !in.type().has_tensor_type()) continue;
    const auto& tt = in.type().tensor_type();
    if (!tt.has_shape()) {
      out.push_back({in.name(), "has no shape", fmt::format("--shape {}=D0xD1x... (its rank is not recorded)", in.name())});
      continue;
    }
    std::vector<std::string> whys;
    for (int d = 0; d < tt.shape().dim_size(); ++d) {
      const auto& dim = tt.shape().dim(d);
      if (dim.has_dim_value()) continue;  // known (a zero-sized one is refused on its own)
      if (dim.has_dim_param() && dim.dim_param() == kDeclaredUnknownDim) {
        whys.push_back(fmt::format("dim {} (declared -1)", d));
      } else {
        whys.push_back(dim.has_dim_param() ? fmt::format("dim {} ('{}')", d, dim.dim_param())
                                           : fmt::format("dim {} (unnamed)", d));
      }
    }
    if (whys.empty()) continue;
    out.push_back({in.name(), fmt::format("{} {} symbolic", fmt::join(whys, ", "), whys.size() == 1 ? "is" : "are"),
                   ShapeSuggestion(in.name(), tt.shape())});
  }
  return out;
}

std::string MissingShapesMessage(const std::vector<MissingShape>& missing) {
  std::vector<std::string> parts;
  for (const auto& m : missing) parts.push_back(fmt::format("'{}' {}: {}", m.input, m.why, m.suggestion));
  return fmt::format("{} graph input{} need{} a static shape: {} (replace the 1s by your real sizes)",
                     missing.size(), missing.size() == 1 ? "" : "s", missing.size() == 1 ? "s" : "",
                     fmt::join(parts, "; "));
}

namespace {

// The operands whose values decide an operator's output shape; all of them
// for an operator not listed.
std::vector<int> ShapeOperands(const std::string& op, int inputs) {
  static const std::map<std::string, std::vector<int>> kTable = {
      {"Reshape", {1}}, {"Expand", {1}},       {"Tile", {1}},     {"Slice", {1, 2, 3, 4}}, {"Pad", {1, 2, 3}},
      {"Resize", {1, 2, 3}}, {"Upsample", {1}}, {"TopK", {1}},    {"ConstantOfShape", {0}}, {"OneHot", {1}},
      {"Squeeze", {1}}, {"Unsqueeze", {1}},    {"Split", {1}},    {"ReduceSum", {1}},      {"ReduceMean", {1}},
      {"ReduceMax", {1}}, {"ReduceMin", {1}},  {"ReduceProd", {1}}, {"CenterCropPad", {1}}};
  std::vector<int> out;
  if (auto it = kTable.find(op); it != kTable.end()) {
    for (int k : it->second) {
      if (k < inputs) out.push_back(k);
    }
    return out;
  }
  for (int k = 0; k < inputs; ++k) out.push_back(k);
  return out;
}

}  // namespace

std::vector<std::string> InputsFeeding(const onnx::GraphProto& g, const std::string& name,
                                       const std::unordered_set<std::string>& constants) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) producer[o] = i;
  }
  std::unordered_set<std::string> inputs;
  for (const auto& in : g.input()) inputs.insert(in.name());
  std::set<std::string> sources;
  std::vector<std::string> work = {name};
  std::unordered_set<std::string> seen;
  while (!work.empty()) {
    std::string v = std::move(work.back());
    work.pop_back();
    if (v.empty() || !seen.insert(v).second || constants.count(v)) continue;
    if (inputs.count(v)) {
      sources.insert(v);
      continue;
    }
    if (auto p = producer.find(v); p != producer.end()) {
      for (const auto& in : g.node(p->second).input()) work.push_back(in);
    }
  }
  return {sources.begin(), sources.end()};
}

std::string UnknownShapeMessage(const onnx::GraphProto& g, const std::string& node_label, const std::string& name,
                                const std::unordered_map<std::string, std::vector<int64_t>>& shapes,
                                const std::unordered_set<std::string>& constants) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) producer[o] = i;
  }
  // Walk up to the first node whose inputs all have static shapes but whose
  // output does not: its output shape depends on its inputs' values.
  std::string t = name;
  int culprit = -1;
  for (int guard = 0; guard <= g.node_size(); ++guard) {
    auto p = producer.find(t);
    if (p == producer.end()) break;
    const auto& n = g.node(p->second);
    std::string unknown;
    for (const auto& in : n.input()) {
      if (!in.empty() && !shapes.count(in)) unknown = in;
    }
    if (unknown.empty()) {
      culprit = p->second;
      break;
    }
    t = unknown;
  }
  const std::string head = fmt::format("{}: tensor '{}' has no static shape after shape inference", node_label, name);
  if (culprit < 0) {
    return fmt::format("{}; give static input shapes with --shape or re-export with static shapes", head);
  }
  // The graph inputs the culprit's shape-deciding operands depend on (a
  // Reshape's target, not its data).
  const auto& n = g.node(culprit);
  std::set<std::string> sources;
  const std::vector<int> deciding = ShapeOperands(n.op_type(), n.input_size());
  for (int k : deciding) {
    const std::string& in = n.input(k);
    if (in.empty() || constants.count(in)) continue;
    for (auto& s : InputsFeeding(g, in, constants)) sources.insert(std::move(s));
  }
  const std::string at = NodeLabel(n, culprit);
  // Only a small input can be given as a value (the folder's limit, graph/constant_folding.h).
  std::erase_if(sources, [&](const std::string& s) {
    auto it = shapes.find(s);
    int64_t elements = 1;
    if (it != shapes.end()) {
      for (int64_t d : it->second) elements = d > 0 && elements > kMaxFoldElements / d ? kMaxFoldElements + 1 : elements * d;
    }
    return it == shapes.end() || elements > kMaxFoldElements;
  });
  if (sources.empty()) {
    return fmt::format("{}: {} computes a shape from values known only at run time; hetplan cannot plan it "
                       "statically: re-export the model with static shapes",
                       head, at);
  }
  std::vector<std::string> fixes;
  for (const auto& s : sources) {
    int64_t elements = 1;
    if (auto it = shapes.find(s); it != shapes.end()) {
      for (int64_t d : it->second) elements *= d;
    }
    std::vector<std::string> v(static_cast<size_t>(std::clamp<int64_t>(elements, 1, 4)), "V");
    fixes.push_back(fmt::format("--value {}={}{}", s, fmt::join(v, ","), elements > 4 ? ",..." : ""));
  }
  std::vector<std::string> samples;
  for (const auto& s : sources) samples.push_back(fmt::format("--sample-input {}=FILE.npy", s));
  return fmt::format("{}: the output of {} depends on the value of graph input{} '{}'; fix {} with {} ({} values), "
                     "or plan for the shapes one representative input gives with {}",
                     head, at, sources.size() == 1 ? "" : "s", fmt::join(sources, "', '"),
                     sources.size() == 1 ? "it" : "them", fmt::join(fixes, " "), sources.size() == 1 ? "its" : "their",
                     fmt::join(samples, " "));
}

bool IsEmptyStaticTensor(const onnx::ValueInfoProto& input) {
  if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) return false;
  bool zero = false;
  for (const auto& d : input.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return false;
    zero = zero || d.dim_value() == 0;
  }
  return zero;
}

}  // namespace hetplan::internal
