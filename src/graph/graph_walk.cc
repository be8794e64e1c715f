#include "hetplan/graph/graph_walk.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <unordered_map>
#include <vector>

namespace hetplan {

Status ForEachGraph(onnx::GraphProto* g, const std::function<Status(onnx::GraphProto*)>& f) {
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) HETPLAN_RETURN_IF_ERROR(ForEachGraph(a.mutable_g(), f));
      for (auto& sub : *a.mutable_graphs()) HETPLAN_RETURN_IF_ERROR(ForEachGraph(&sub, f));
    }
  }
  return f(g);
}

Status ForEachStoredTensor(onnx::GraphProto* g,
                           const std::function<Status(onnx::TensorProto*, const std::string& what)>& f) {
  return ForEachGraph(g, [&](onnx::GraphProto* graph) -> Status {
    for (auto& t : *graph->mutable_initializer()) HETPLAN_RETURN_IF_ERROR(f(&t, fmt::format("initializer '{}'", t.name())));
    for (auto& sp : *graph->mutable_sparse_initializer()) {
      const std::string what = fmt::format("sparse initializer '{}'", sp.values().name());
      HETPLAN_RETURN_IF_ERROR(f(sp.mutable_values(), what));
      HETPLAN_RETURN_IF_ERROR(f(sp.mutable_indices(), what + "'s indices"));
    }
    for (auto& n : *graph->mutable_node()) {
      for (auto& a : *n.mutable_attribute()) {
        if (!a.has_t() && a.tensors_size() == 0 && !a.has_sparse_tensor() && a.sparse_tensors_size() == 0) continue;
        const std::string what = fmt::format("attribute '{}' of node '{}'", a.name(), n.name());
        if (a.has_t()) HETPLAN_RETURN_IF_ERROR(f(a.mutable_t(), what));
        for (auto& t : *a.mutable_tensors()) HETPLAN_RETURN_IF_ERROR(f(&t, what));
        auto sparse = [&](onnx::SparseTensorProto* sp) -> Status {
          HETPLAN_RETURN_IF_ERROR(f(sp->mutable_values(), what));
          return f(sp->mutable_indices(), what);
        };
        if (a.has_sparse_tensor()) HETPLAN_RETURN_IF_ERROR(sparse(a.mutable_sparse_tensor()));
        for (auto& sp : *a.mutable_sparse_tensors()) HETPLAN_RETURN_IF_ERROR(sparse(&sp));
      }
    }
    return Status::Ok();
  });
}

void FillFromNeighbours(const onnx::GraphProto& g, const std::function<bool(int)>& has,
                        const std::function<void(int to, int from)>& take) {
  std::unordered_map<std::string, std::vector<int>> readers;
  std::unordered_map<std::string, int> writer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& t : g.node(i).input()) readers[t].push_back(i);
    for (const std::string& t : g.node(i).output()) writer[t] = i;
  }
  for (int i = g.node_size(); i-- > 0;) {  // readers come later: theirs are settled first
    for (const std::string& t : g.node(i).output()) {
      for (int c : readers[t]) {
        if (!has(i) && has(c)) take(i, c);
      }
    }
  }
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& t : g.node(i).input()) {
      auto w = writer.find(t);
      if (!has(i) && w != writer.end() && has(w->second)) take(i, w->second);
    }
  }
}

}  // namespace hetplan
