// The `--fusion activation` pass (graph_builder.h, FuseActivations): a
// Conv/Gemm/MatMul absorbs the bias Add, BatchNormalization and activation
// that follow it, so that the operator the planner places is the kernel a
// runtime would run.
#include <string>
#include <utility>

#include "graph/graph_builder.h"
#include "hetplan/graph/quantization.h"

namespace hetplan::internal {
namespace {

// Quantized matrix operators (QLinearConv, ...) fuse as their float type does.
bool IsMvmType(const std::string& t) {
  const std::string_view f = FloatOpType(t);
  return f == "Conv" || f == "Gemm" || f == "MatMul";
}
bool IsActivation(const std::string& t) {
  return t == "Relu" || t == "Clip" || t == "HardSwish" || t == "HardSigmoid" || t == "Gelu" ||
         t == "LeakyRelu" || t == "Tanh" || t == "Sigmoid" || t == "Elu" || t == "Selu";
}

}  // namespace

std::vector<NodeGroup> FuseActivations(const NodeRoles& roles, const std::vector<NodeGroup>& groups) {
  const onnx::GraphProto& g = *roles.graph;
  const auto& consumers = roles.consumers;
  const auto& graph_outputs = roles.graph_outputs;
  const auto& constant_tensors = roles.constant_tensors;
  // unit_of[node]: the index of its group in `units`, -1 until it has one.
  std::vector<int> unit_of(g.node_size(), -1);
  std::vector<NodeGroup> units;
  auto single_consumer = [&](const std::string& tensor) -> int {
    if (graph_outputs.count(tensor)) return -1;
    auto it = consumers.find(tensor);
    if (it == consumers.end() || it->second.size() != 1) return -1;
    return it->second[0];
  };
  auto is_const_input = [&](const onnx::NodeProto& node, const std::string& other) {
    for (const auto& in : node.input()) {
      if (in != other && !in.empty() && constant_tensors.count(roles.Resolve(in))) return true;
    }
    return false;
  };
  for (const NodeGroup& group : groups) {
    const int i = group.front();
    if (unit_of[i] >= 0) continue;  // absorbed by an earlier Conv/Gemm/MatMul
    NodeGroup unit = group;
    unit_of[i] = static_cast<int>(units.size());
    if (IsMvmType(g.node(i).op_type())) {
      auto absorb = [&](int j) {
        unit.push_back(j);
        unit_of[j] = unit_of[i];
      };
      std::string tail = g.node(i).output(0);
      bool bias_done = false, bn_done = false, act_done = false;
      while (!act_done) {
        int j = single_consumer(tail);
        auto it = consumers.find(tail);
        // SiLU: tail → Sigmoid → Mul(tail, sigmoid); tail has exactly these two consumers.
        if (j < 0 && it != consumers.end() && it->second.size() == 2 && !graph_outputs.count(tail)) {
          int a = it->second[0], b = it->second[1];
          if (g.node(a).op_type() == "Mul") std::swap(a, b);
          if (g.node(a).op_type() == "Sigmoid" && g.node(b).op_type() == "Mul" &&
              single_consumer(g.node(a).output(0)) == b && unit_of[a] < 0 && unit_of[b] < 0) {
            absorb(a);
            absorb(b);
            tail = g.node(b).output(0);
            act_done = true;
            continue;
          }
          // Erf-GELU: tail → Div(c) → Erf → Add(c) → Mul(tail, ·) → Mul(c).
          if (g.node(a).op_type() == "Div" || g.node(b).op_type() == "Div") {
            if (g.node(b).op_type() == "Div") std::swap(a, b);
            int erf = single_consumer(g.node(a).output(0));
            int add = erf >= 0 ? single_consumer(g.node(erf).output(0)) : -1;
            int mul = add >= 0 ? single_consumer(g.node(add).output(0)) : -1;
            int half = mul >= 0 ? single_consumer(g.node(mul).output(0)) : -1;
            if (erf >= 0 && add >= 0 && mul == b && half >= 0 && g.node(erf).op_type() == "Erf" &&
                g.node(add).op_type() == "Add" && g.node(b).op_type() == "Mul" &&
                g.node(half).op_type() == "Mul" && is_const_input(g.node(a), tail) &&
                is_const_input(g.node(half), g.node(mul).output(0))) {
              for (int k : {a, erf, add, b, half}) absorb(k);
              tail = g.node(half).output(0);
              act_done = true;
              continue;
            }
          }
          break;
        }
        if (j < 0 || unit_of[j] >= 0) break;
        const auto& nj = g.node(j);
        const std::string& tj = nj.op_type();
        if (!bias_done && !bn_done && tj == "Add" && FloatOpType(g.node(i).op_type()) == "MatMul" &&
            is_const_input(nj, tail)) {
          bias_done = true;
        } else if (!bn_done && tj == "BatchNormalization") {
          bn_done = true;
        } else if (IsActivation(tj) && nj.input_size() >= 1 && roles.Resolve(nj.input(0)) == tail) {
          act_done = true;
        } else {
          break;
        }
        absorb(j);
        tail = nj.output(0);
      }
    }
    units.push_back(std::move(unit));
  }
  return units;
}

}  // namespace hetplan::internal
