// hetplan imports the opsets of the default domain that both the ONNX library
// it builds against (scripts/setup_onnx.sh) and the bundled ONNX Runtime
// support: every opset ONNX Runtime runs imports, and the first one it
// refuses is the first one hetplan refuses, with one line naming both
// versions. (Here, not in graph's
// tests: those also run under the sanitizers, which ONNX Runtime's prebuilt
// library was not built for.)
#include <string>

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnxruntime_cxx_api.h>

#include "hetplan/graph/onnx_import.h"

namespace hetplan {
namespace {

// x[1,4] → Relu → y, declared at `opset`.
std::string Relu(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(13);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("relu");
  auto declare = [](onnx::ValueInfoProto* vi, const char* name) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(4);
  };
  declare(g->add_input(), "x");
  declare(g->add_output(), "y");
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->set_name("relu");
  n->add_input("x");
  n->add_output("y");
  return m.SerializeAsString();
}

TEST(Opsets, HetplanImportsEveryOpsetOnnxRuntimeRunsAndNoOther) {
  const int newest = NewestSupportedOpset();
  EXPECT_EQ(newest, 26);
  // The ONNX library knows it (and more: 27, which ONNX Runtime 1.29 refuses).
  EXPECT_GE(onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second, newest);
  Ort::Env env(ORT_LOGGING_LEVEL_FATAL, "opsets");
  for (int v = 7; v <= newest + 1; ++v) {
    const std::string bytes = Relu(v);
    bool ort_runs = true;
    try {
      Ort::Session session(env, bytes.data(), bytes.size(), Ort::SessionOptions());
    } catch (const Ort::Exception&) {
      ort_runs = false;
    }
    const auto imported = LoadOnnxModelFromBytes(bytes, "relu.onnx");
    EXPECT_EQ(ort_runs, v <= newest) << "opset " << v;
    EXPECT_EQ(imported.ok(), v <= newest) << "opset " << v << ": " << imported.status().message();
    if (!imported.ok()) {
      const std::string& message = imported.status().message();
      EXPECT_NE(message.find("opset " + std::to_string(v)), std::string::npos) << message;
      EXPECT_NE(message.find("(" + std::to_string(newest) + ": ONNX Runtime"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace hetplan
