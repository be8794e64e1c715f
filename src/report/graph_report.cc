#include "hetplan/report/graph_report.h"

#include <algorithm>
#include <map>

#include "hetplan/graph/algorithms.h"

namespace hetplan {

GraphStats ComputeGraphStats(const OpGraph& g) {
  GraphStats s;
  s.operators = g.size();
  s.edges = static_cast<int>(g.edges().size());
  s.parallel_pairs = CountParallelPairs(g);
  for (const Phase& p : Phases(g)) {
    ++s.phases;
    if (p.parallel()) ++s.parallel_phases;
    s.max_branches = std::max(s.max_branches, static_cast<int>(p.branches.size()));
  }
  return s;
}

namespace {
nlohmann::json TensorJson(const TensorInfo& t) {
  return {{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype}, {"elements", t.elements}};
}
}  // namespace

nlohmann::json GraphToJson(const LoadedModel& m) {
  const OpGraph& g = m.graph;
  nlohmann::json j;
  j["format"] = "hetplan-graph";
  j["version"] = 1;
  j["model"] = {{"file", m.path},         {"sha256", m.sha256},
                {"fusion", ToString(m.fusion)}, {"onnx_nodes", m.onnx_nodes},
                {"folded_nodes", m.folded_nodes}};
  GraphStats s = ComputeGraphStats(g);
  j["stats"] = {{"operators", s.operators},       {"edges", s.edges},
                {"parallel_pairs", s.parallel_pairs}, {"phases", s.phases},
                {"parallel_phases", s.parallel_phases}, {"max_branches", s.max_branches}};
  auto& ops = j["operators"] = nlohmann::json::array();
  for (const Operator& op : g.operators()) {
    nlohmann::json o;
    o["id"] = op.id;
    o["name"] = op.name;
    o["type"] = op.type;
    o["nodes"] = op.nodes;
    o["node_types"] = op.node_types;
    o["inputs"] = nlohmann::json::array();
    for (const auto& t : op.inputs) o["inputs"].push_back(TensorJson(t));
    o["outputs"] = nlohmann::json::array();
    for (const auto& t : op.outputs) o["outputs"].push_back(TensorJson(t));
    o["input_elements"] = op.input_elements;
    o["output_elements"] = op.output_elements;
    o["dtype"] = op.dtype;
    if (op.has_weight) {
      o["weight"] = {{"rows", op.weight_rows}, {"cols", op.weight_cols}};
      if (op.matrix_op != op.type) o["weight"]["product"] = op.matrix_op;  // FusedConv: "Conv"
      if (op.directions > 1) o["weight"]["directions"] = op.directions;
      if (op.weight_bits > 0) o["weight"]["bits"] = op.weight_bits;
    } else {
      o["weight"] = nullptr;
    }
    o["n_mvm"] = op.n_mvm;
    o["groups"] = op.groups;
    o["macs"] = op.macs;
    o["param_bytes"] = op.param_bytes;
    ops.push_back(std::move(o));
  }
  auto& edges = j["edges"] = nlohmann::json::array();
  for (const Edge& e : g.edges()) {
    std::string tensor;
    for (size_t i = 0; i < e.tensors.size(); ++i) tensor += (i ? "," : "") + e.tensors[i];
    edges.push_back({{"from", e.from}, {"to", e.to}, {"tensor", tensor}, {"elements", e.elements},
                     {"bytes", e.bytes}});
  }
  auto& phases = j["phases"] = nlohmann::json::array();
  for (const Phase& p : Phases(g)) phases.push_back({{"branches", p.branches}});
  j["graph_inputs"] = nlohmann::json::array();
  for (const auto& t : g.graph_inputs()) j["graph_inputs"].push_back(TensorJson(t));
  j["graph_outputs"] = nlohmann::json::array();
  for (const auto& t : g.graph_outputs()) j["graph_outputs"].push_back(TensorJson(t));
  return j;
}

std::string GraphToDot(const OpGraph& g) {
  std::string out = "digraph \"" + g.name() + "\" {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  auto esc = [](const std::string& s) {
    std::string r;
    for (char c : s) {
      if (c == '"' || c == '\\') r.push_back('\\');
      r.push_back(c);
    }
    return r;
  };
  for (const Operator& op : g.operators()) {
    std::string label = fmt::format("{}: {}\\n{}", op.id, op.type, esc(op.name));
    if (op.has_weight) label += fmt::format("\\nW {}x{}", op.weight_rows, op.weight_cols);
    out += fmt::format("  n{} [label=\"{}\"];\n", op.id, label);
  }
  for (const Edge& e : g.edges()) {
    out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", e.from, e.to, e.elements);
  }
  out += "}\n";
  return out;
}

std::string GraphSummaryText(const LoadedModel& m) {
  const OpGraph& g = m.graph;
  GraphStats s = ComputeGraphStats(g);
  std::string out;
  out += fmt::format("model      {}\n", m.path);
  out += fmt::format("sha256     {}\n", m.sha256);
  out += fmt::format("fusion     {}\n", ToString(m.fusion));
  out += fmt::format("ONNX nodes {} ({} folded into constants)\n", m.onnx_nodes,
                     m.folded_nodes);
  if (m.external_tensors > 0) {
    out += fmt::format("weights    {} tensors ({:.1f} MiB) in external data, read by ONNX Runtime from {}\n",
                       m.external_tensors, static_cast<double>(m.external_bytes) / (1 << 20), m.external_data_dir);
  }
  out += fmt::format("operators  {}   edges {}   parallel pairs |P| {}\n", s.operators, s.edges,
                     s.parallel_pairs);
  out += fmt::format("phases     {} ({} parallel, up to {} branches)\n", s.phases, s.parallel_phases,
                     s.max_branches);
  std::map<std::string, int> by_type;
  for (const Operator& op : g.operators()) ++by_type[op.type];
  std::vector<std::pair<std::string, int>> sorted(by_type.begin(), by_type.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  out += "\n  operator type          count\n";
  for (const auto& [type, count] : sorted) out += fmt::format("  {:<22} {:>5}\n", type, count);
  const Operator* largest = nullptr;
  for (const Operator& op : g.operators()) {
    if (op.has_weight && (!largest || op.weight_rows * op.weight_cols >
                                          largest->weight_rows * largest->weight_cols)) {
      largest = &op;
    }
  }
  if (largest) {
    out += fmt::format("\nlargest weight matrix: {} ({}) {} rows x {} cols, n_mvm {}\n",
                       largest->name, largest->type, largest->weight_rows, largest->weight_cols,
                       largest->n_mvm);
  }
  int64_t macs = 0;
  for (const Operator& op : g.operators()) macs += op.macs;
  out += fmt::format("total MACs: {:.3f} G\n", static_cast<double>(macs) / 1e9);
  return out;
}

}  // namespace hetplan
