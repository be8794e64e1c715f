// The operator graph G = (V, E) on which every formulation works.
//
// An Operator is one schedulable unit: one ONNX node, or (with fusion) a main
// node plus the nodes it absorbed. Constants, initializers, Identity, Dropout
// and folded shape arithmetic are not operators. An Edge (u, v) exists when v
// reads a tensor that u writes; it carries the tensor names and their total
// size. The graph is immutable once built; topological order and
// reachability (E⁺) are computed at construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hetplan/graph/bitset.h"
#include "hetplan/util/status.h"

namespace hetplan {

// A tensor with a static shape.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype = "float32";  // ONNX element type, lower case ("float32", "int64")
  int64_t elements = 0;           // product of shape (1 for a scalar)
  int64_t element_bytes = 4;
  int64_t bytes() const { return elements * element_bytes; }
};

struct Operator {
  int id = 0;
  std::string name;                 // the main node's name
  std::string type;                 // the main node's ONNX op type, e.g. "Conv"
  std::vector<std::string> nodes;   // ONNX node names covered, in execution order
  std::vector<std::string> node_types;  // their op types, same order
  std::vector<int> node_indices;    // indices into the imported model's node list
  std::vector<TensorInfo> inputs;   // activation inputs (not constants)
  std::vector<TensorInfo> outputs;  // outputs read by other operators or the graph
  int64_t input_elements = 0;       // Σ inputs' elements  (N_in in the CIM paper)
  int64_t output_elements = 0;      // Σ outputs' elements (N_out)
  std::string dtype = "float32";

  // Matrix-vector view, for Conv/Gemm/MatMul with a constant weight:
  // weight_rows = N_v (C_in/groups·K_h·K_w, or K), weight_cols = M_v (C_out, or
  // the output columns); n_mvm = number of input vectors (H_out·W_out·batch
  // for Conv, rows of the activation for MatMul/Gemm).
  bool has_weight = false;
  int64_t weight_rows = 0;
  int64_t weight_cols = 0;
  int64_t n_mvm = 0;
  int64_t groups = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  // Recurrent operators (LSTM, GRU, RNN): one weight matrix per direction;
  // n_mvm counts every time step of every direction.
  int64_t directions = 1;
  // The standard matrix product the operator computes when its own type is
  // another ("Conv" for com.microsoft's FusedConv, "MatMul" for MatMulNBits,
  // "LSTM" for LSTM): what a platform's supported_ops is matched against
  // besides `type`. Empty for operators without a weight matrix.
  std::string matrix_op;
  // Bits of one stored weight when the weight is stored as integers: 8 for
  // int8 (QDQ, QLinearConv, MatMulInteger), 4 for int4/uint4 (block-wise QDQ)
  // and MatMulNBits' `bits`. 0 for a float weight, which a CIM quantizes to
  // its own weight_bits; a CIM stores an integer weight in
  // min(weight_bits, its own) bits (CimParams::CellsPerWeight).
  int64_t weight_bits = 0;

  int64_t param_bytes = 0;  // all constant inputs (weights, biases, BN params)
  int64_t macs = 0;         // multiply-accumulates of the main node (0 if none)

  // The one place the importer records a constant weight matrix: rows × cols
  // multiplied by `mvms` input vectors per inference; `product` sets
  // matrix_op when not empty.
  void SetWeightMatrix(int64_t rows, int64_t cols, int64_t mvms, const std::string& product = "") {
    has_weight = true;
    weight_rows = rows;
    weight_cols = cols;
    n_mvm = mvms;
    if (!product.empty()) matrix_op = product;
  }
};

struct Edge {
  int from = 0;
  int to = 0;
  std::vector<std::string> tensors;  // tensors of `from` read by `to`
  int64_t elements = 0;              // their total element count
  int64_t bytes = 0;                 // their total bytes at their own dtype
};

// An independent branch is a set of operators in topological order; a phase
// is the set of operators between two consecutive fork/join points (BIDENT).
struct Phase {
  std::vector<std::vector<int>> branches;
  bool parallel() const { return branches.size() > 1; }
};

class OpGraph {
 public:
  // Builds and checks the graph: ids must be 0..n-1 in vector order, edges must
  // name existing operators, no self-loops, no cycles. Parallel edges between
  // the same pair are merged (tensors concatenated, sizes added).
  static Result<OpGraph> Create(std::string name, std::vector<Operator> operators,
                                std::vector<Edge> edges, std::vector<TensorInfo> graph_inputs = {},
                                std::vector<TensorInfo> graph_outputs = {});

  const std::string& name() const { return name_; }
  int size() const { return static_cast<int>(operators_.size()); }
  const std::vector<Operator>& operators() const { return operators_; }
  const Operator& op(int v) const { return operators_[v]; }
  const std::vector<Edge>& edges() const { return edges_; }
  const std::vector<TensorInfo>& graph_inputs() const { return graph_inputs_; }
  const std::vector<TensorInfo>& graph_outputs() const { return graph_outputs_; }

  // Edge indices into edges().
  const std::vector<int>& in_edges(int v) const { return in_edges_[v]; }
  const std::vector<int>& out_edges(int v) const { return out_edges_[v]; }
  std::vector<int> predecessors(int v) const;
  std::vector<int> successors(int v) const;
  bool is_source(int v) const { return in_edges_[v].empty(); }
  bool is_sink(int v) const { return out_edges_[v].empty(); }

  // A topological order, smallest id first among ready operators.
  const std::vector<int>& topological_order() const { return topo_; }
  // position of v in topological_order()
  int topo_position(int v) const { return topo_pos_[v]; }
  // E⁺: descendants(u) has bit v iff there is a path u → v (u itself excluded).
  const DynamicBitset& descendants(int u) const { return descendants_[u]; }
  bool reaches(int u, int v) const { return descendants_[u].test(v); }
  // u and v can run in parallel: distinct and neither reaches the other.
  bool parallelizable(int u, int v) const { return u != v && !reaches(u, v) && !reaches(v, u); }

 private:
  std::string name_;
  std::vector<Operator> operators_;
  std::vector<Edge> edges_;
  std::vector<TensorInfo> graph_inputs_, graph_outputs_;
  std::vector<std::vector<int>> in_edges_, out_edges_;
  std::vector<int> topo_, topo_pos_;
  std::vector<DynamicBitset> descendants_;
};

}  // namespace hetplan
