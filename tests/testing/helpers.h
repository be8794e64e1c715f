// Helpers shared by the test modules: the zoo's models, small ONNX models
// written inline, and the `hetplan` binary run as a user runs it.
// Header-only; this folder has no *_test.cc, so it is not a test module of
// its own.
#pragma once

#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace hetplan::test_util {

// The zoo's model `name` (models/, built by the `zoo` target).
inline std::string Zoo(const std::string& name) { return std::string(HETPLAN_ZOO_DIR) + "/" + name + ".onnx"; }

// The zoo's ResNet-18, the model most planning tests run.
inline const std::string kResnet18 = Zoo("resnet18");

// A float32 graph input/output with a static shape.
inline void AddTensor(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A float32 initializer with small deterministic values (scale · {−5..5}).
inline onnx::TensorProto Floats(const std::string& name, const std::vector<int64_t>& dims, float scale) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t.add_float_data(scale * static_cast<float>((i * 7) % 11 - 5));
  return t;
}

inline onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                                const std::vector<std::string>& out, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

// pads = [1, 1, 1, 1]: a 3×3 Conv that keeps the spatial size.
inline void Pads(onnx::NodeProto* n) {
  auto* a = n->add_attribute();
  a->set_name("pads");
  a->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) a->add_ints(1);
}

// An empty model (IR 8, default domain at opset 13) whose graph is `graph_name`.
inline onnx::ModelProto NewModel(const std::string& graph_name) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("hetplan-test");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  m.mutable_graph()->set_name(graph_name);
  return m;
}

// x → Conv → Relu → Conv (weight via Identity) → Add(x) = "s": a residual
// block with its weights and an exporter's weight alias, as a model whose
// graph still needs its output "y" (each test adds the tail it needs).
inline onnx::ModelProto ResidualBlock(int64_t c = 8, int64_t hw = 16) {
  onnx::ModelProto m = NewModel("block");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {1, c, hw, hw});
  AddTensor(g->add_output(), "y", {1, c, hw, hw});
  *g->add_initializer() = Floats("w1", {c, c, 3, 3}, 0.01f);
  *g->add_initializer() = Floats("b1", {c}, 0.1f);
  *g->add_initializer() = Floats("w2", {c, c, 3, 3}, 0.02f);
  *g->add_initializer() = Floats("b2", {c}, 0.1f);
  Pads(AddNode(g, "Conv", {"x", "w1", "b1"}, {"c1"}, "/conv1/Conv"));
  AddNode(g, "Relu", {"c1"}, {"r1"}, "/relu/Relu");
  // Exporters route weights through Identity; it must come along.
  AddNode(g, "Identity", {"w2"}, {"w2_alias"}, "/w2/Identity");
  Pads(AddNode(g, "Conv", {"r1", "w2_alias", "b2"}, {"c2"}, "/conv2/Conv"));
  AddNode(g, "Add", {"c2", "x"}, {"s"}, "/add/Add");
  return m;
}

// x → Relu → two branches of `depth` × (MatMul width×width → Relu) → Add =
// "y": a model whose two branches can run at the same time on two PUs.
// Operator names: /stem/Relu, /a<i>/MatMul, /a<i>/Relu, /b<i>/..., /join/Add.
inline onnx::ModelProto TwoBranchModel(int64_t rows = 64, int64_t width = 256, int depth = 3) {
  onnx::ModelProto m = NewModel("two_branches");
  auto* g = m.mutable_graph();
  AddTensor(g->add_input(), "x", {rows, width});
  AddTensor(g->add_output(), "y", {rows, width});
  AddNode(g, "Relu", {"x"}, {"stem"}, "/stem/Relu");
  for (const char* b : {"a", "b"}) {
    std::string in = "stem";
    for (int i = 0; i < depth; ++i) {
      const std::string w = std::string(b) + "_w" + std::to_string(i);
      const std::string p = "/" + std::string(b) + std::to_string(i);
      *g->add_initializer() = Floats(w, {width, width}, 0.01f / static_cast<float>(i + 1));
      AddNode(g, "MatMul", {in, w}, {p + "_mm"}, p + "/MatMul");
      AddNode(g, "Relu", {p + "_mm"}, {p + "_r"}, p + "/Relu");
      in = p + "_r";
    }
  }
  const std::string last = std::to_string(depth - 1);
  AddNode(g, "Add", {"/a" + last + "_r", "/b" + last + "_r"}, {"y"}, "/join/Add");
  return m;
}

struct CmdResult {
  int code = -1;
  std::string out;  // stdout + stderr
};

// Runs a shell command line; its stdout and stderr, and its exit code.
inline CmdResult Shell(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the hetplan binary under test with `args` (a shell command line).
inline CmdResult Hetplan(const std::string& args) { return Shell(std::string(HETPLAN_BINARY) + " " + args); }

}  // namespace hetplan::test_util
