#include "hetplan/graph/graph_index.h"

namespace hetplan {

GraphProtoIndex::GraphProtoIndex(const onnx::GraphProto& g) {
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty()) producer.emplace(o, i);
    }
  }
  for (int i = 0; i < g.initializer_size(); ++i) initializer.emplace(g.initializer(i).name(), i);
  for (int i = 0; i < g.sparse_initializer_size(); ++i) sparse.emplace(g.sparse_initializer(i).values().name(), i);
  for (const auto& vi : g.input()) value_info.emplace(vi.name(), &vi);
  for (const auto& vi : g.value_info()) value_info.emplace(vi.name(), &vi);
  for (const auto& vi : g.output()) value_info.emplace(vi.name(), &vi);
}

}  // namespace hetplan
