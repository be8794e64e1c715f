#include "hetplan/graph/op_graph.h"

#include <algorithm>
#include <map>
#include <queue>

namespace hetplan {

Result<OpGraph> OpGraph::Create(std::string name, std::vector<Operator> operators,
                                std::vector<Edge> edges, std::vector<TensorInfo> graph_inputs,
                                std::vector<TensorInfo> graph_outputs) {
  const int n = static_cast<int>(operators.size());
  for (int v = 0; v < n; ++v) {
    if (operators[v].id != v) {
      return Error(ErrorCode::kInternal, "{}: operator '{}' has id {} at position {}", name,
                   operators[v].name, operators[v].id, v);
    }
  }
  // Merge parallel edges (u, v) and check endpoints.
  std::map<std::pair<int, int>, int> index;
  std::vector<Edge> merged;
  for (Edge& e : edges) {
    if (e.from < 0 || e.from >= n || e.to < 0 || e.to >= n) {
      return Error(ErrorCode::kInvalidArgument, "{}: edge {}→{} names an operator that does not exist",
                   name, e.from, e.to);
    }
    if (e.from == e.to) {
      return Error(ErrorCode::kInvalidArgument, "{}: operator '{}' reads its own output (self-loop)",
                   name, operators[e.from].name);
    }
    auto [it, inserted] = index.emplace(std::make_pair(e.from, e.to), static_cast<int>(merged.size()));
    if (inserted) {
      merged.push_back(std::move(e));
    } else {
      Edge& m = merged[it->second];
      m.tensors.insert(m.tensors.end(), e.tensors.begin(), e.tensors.end());
      m.elements += e.elements;
      m.bytes += e.bytes;
    }
  }

  OpGraph g;
  g.name_ = std::move(name);
  g.operators_ = std::move(operators);
  g.edges_ = std::move(merged);
  g.graph_inputs_ = std::move(graph_inputs);
  g.graph_outputs_ = std::move(graph_outputs);
  g.in_edges_.assign(n, {});
  g.out_edges_.assign(n, {});
  for (int i = 0; i < static_cast<int>(g.edges_.size()); ++i) {
    g.out_edges_[g.edges_[i].from].push_back(i);
    g.in_edges_[g.edges_[i].to].push_back(i);
  }

  // Kahn's algorithm, smallest id first, so the order is deterministic.
  std::vector<int> indegree(n);
  for (int v = 0; v < n; ++v) indegree[v] = static_cast<int>(g.in_edges_[v].size());
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push(v);
  }
  g.topo_.reserve(n);
  while (!ready.empty()) {
    int u = ready.top();
    ready.pop();
    g.topo_.push_back(u);
    for (int e : g.out_edges_[u]) {
      if (--indegree[g.edges_[e].to] == 0) ready.push(g.edges_[e].to);
    }
  }
  if (static_cast<int>(g.topo_.size()) != n) {
    int culprit = 0;
    while (indegree[culprit] == 0) ++culprit;
    return Error(ErrorCode::kInvalidArgument,
                 "{}: the graph has a cycle through operator '{}'; an inference graph must be acyclic",
                 g.name_, g.operators_[culprit].name);
  }
  g.topo_pos_.assign(n, 0);
  for (int i = 0; i < n; ++i) g.topo_pos_[g.topo_[i]] = i;

  // E⁺ in reverse topological order: desc(u) = ∪ over successors w of desc(w) ∪ {w}.
  g.descendants_.assign(n, DynamicBitset(n));
  for (int i = n - 1; i >= 0; --i) {
    int u = g.topo_[i];
    for (int e : g.out_edges_[u]) {
      int w = g.edges_[e].to;
      g.descendants_[u].set(w);
      g.descendants_[u] |= g.descendants_[w];
    }
  }
  return g;
}

std::vector<int> OpGraph::predecessors(int v) const {
  std::vector<int> out;
  for (int e : in_edges_[v]) out.push_back(edges_[e].from);
  return out;
}

std::vector<int> OpGraph::successors(int v) const {
  std::vector<int> out;
  for (int e : out_edges_[v]) out.push_back(edges_[e].to);
  return out;
}

}  // namespace hetplan
