// Regression tests for the bugs the fuzzers (tests/fuzz) and the bad-input
// corpus (tests/bad_inputs) found, each reduced to a minimal input written
// inline, at the library level (the corpus test covers the binary). Add one
// here for every crash file a fuzzer writes; see docs/testing.md.
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "graph/constant_folding.h"
#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"
#include "hetplan/validate/validator.h"

namespace hetplan {
namespace {

using Dims = std::vector<int64_t>;

::testing::AssertionResult FailsWith(const Status& s, std::initializer_list<std::string_view> words) {
  if (s.ok()) return ::testing::AssertionFailure() << "accepted";
  for (std::string_view w : words) {
    if (s.message().find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << w << "' missing in: " << s.message();
    }
  }
  return ::testing::AssertionSuccess();
}

// --- platform YAML (fuzz_platform) -----------------------------------------------

// crash-9562490f…: a platform preset with one byte of its description flipped
// into invalid UTF-8 parsed fine, and PlatformToJson(...).dump() — every
// schedule file embeds it — then threw nlohmann type_error 316.
TEST(FuzzRegression, PlatformStringsMustBeUtf8) {
  auto p = ParsePlatformYaml("name: p\ndescription: \"roof\xecline\"\npus:\n  - name: cpu\n    kind: cpu\n", "p.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(FailsWith(p.status(), {"p.yaml:2:", "0xEC", "not valid UTF-8"}));
  // Overlong forms, surrogates and truncated sequences are refused too; real UTF-8 passes.
  for (std::string_view bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80", "\xff"}) {
    std::string yaml = "name: \"x" + std::string(bad) + "\"\npus:\n  - name: cpu\n    kind: cpu\n";
    EXPECT_FALSE(ParsePlatformYaml(yaml, "p.yaml").ok()) << yaml;
  }
  auto good = ParsePlatformYaml("name: café ✓ 𝄞\npus:\n  - name: cpu\n    kind: cpu\n", "p.yaml");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_NO_THROW((void)PlatformToJson(*good).dump());
  // Overrides cannot smuggle it in either (they are validated, then dumped with the platform).
  auto cim = ParsePlatformYaml("name: p\npus:\n  - name: cim\n    kind: cim\n", "p.yaml");
  ASSERT_TRUE(cim.ok()) << cim.status().message();
  EXPECT_TRUE(FailsWith(ApplyOverride(*cim, "cim.supported_ops=Conv,\xff"), {"not valid UTF-8"}));
  EXPECT_NO_THROW((void)PlatformToJson(*cim).dump());
}

// --- schedule validator (fuzz_validator, corpus) -----------------------------------

// json::value("format", "") throws type_error 302 when "format" is not a
// string: `hetplan validate` ended with "internal error" (exit 70).
TEST(FuzzRegression, ValidatorSurvivesWrongTypes) {
  auto s = nlohmann::json::parse(R"({"format": 7, "version": 1,
      "devices": [{"name": "cpu", "kind": 3, "execution": "serial"}],
      "operators": [], "edges": [], "makespan_us": 0})");
  ValidationReport r;
  EXPECT_NO_THROW(r = ValidateScheduleJson(s));
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0], "'format' is not \"hetplan-schedule\"");
}

// A 100 MB operator name was echoed whole into its violation (a 100 MB line).
TEST(FuzzRegression, ValidatorCutsLongNames) {
  auto s = nlohmann::json::parse(R"({"format": "hetplan-schedule", "version": 1,
      "devices": [{"name": "cpu", "execution": "serial"}],
      "operators": [{"id": 0, "device": "cpu", "start_us": 0, "finish_us": 1, "cost_us": {"cpu": 2}}],
      "edges": [], "makespan_us": 1})");
  s["operators"][0]["name"] = std::string(1 << 20, 'o');
  ValidationReport r = ValidateScheduleJson(s);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_LT(r.violations[0].size(), 300u);
  EXPECT_NE(r.violations[0].find("ooo..."), std::string::npos) << r.violations[0].substr(0, 200);
  s["operators"][0]["name"] = "two\nlines";
  r = ValidateScheduleJson(s);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].find('\n'), std::string::npos) << r.violations[0];
}

// --- cost tables (corpus) ---------------------------------------------------------------

// A 100 MB cell was kept, then quoted whole in the error ("no operator named …").
TEST(FuzzRegression, CostTableCellsHaveALengthLimit) {
  std::string csv = "kind,op_name,pu,exec_us\nop," + std::string(5000, 'n') + ",cpu,1\n";
  auto t = ParseCostTableCsv(csv, "c.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(FailsWith(t.status(), {"c.csv:2: op_name", "5000 characters", "limit of 4096"}));
  EXPECT_LT(t.status().message().size(), 300u);
  auto meta = ParseCostTableCsv("# note=" + std::string(5000, 'm') + "\nkind\n", "c.csv");
  EXPECT_TRUE(FailsWith(meta.status(), {"c.csv:1", "meta"}));
  nlohmann::json j = {{"format", "hetplan-cost-table"}, {"meta", {{"note", std::string(5000, 'm')}}},
                      {"rows", nlohmann::json::array()}};
  EXPECT_TRUE(FailsWith(CostTableFromJson(j, "c.json").status(), {"c.json", "/meta"}));
}

// A CSV with Latin-1 in a meta value parsed fine; the schedule that quoted the
// table's provenance then threw type_error 316 while being written.
TEST(FuzzRegression, CostTablesMustBeUtf8) {
  auto t = ParseCostTableCsv("# source=caf\xe9\nkind,op_name,pu,exec_us\nop,a,cpu,1\n", "c.csv");
  EXPECT_TRUE(FailsWith(t.status(), {"c.csv:1:", "0xE9", "not valid UTF-8"}));
  auto ok = ParseCostTableCsv("\xEF\xBB\xBF# source=café\nkind,op_name,pu,exec_us\nop,ä,cpu,1\n", "c.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_NO_THROW((void)CostTableToJson(*ok).dump());
}

// crash-4fb8151c… (fuzz_cost_table): a JSON table whose PU was " cpu" kept
// the space, which the CSV reader trims from every cell, so the same table
// read as CSV and as JSON differed (and no platform has a PU named " cpu").
// Meta keys and values had the same problem with line breaks and spaces.
TEST(FuzzRegression, JsonAndCsvTablesReadTheSame) {
  auto j = nlohmann::json::parse(R"({"format": "hetplan-cost-table", "version": 1,
      "meta": {" source ": "user\nedited", "note": " x "},
      "rows": [{"kind": "op", "op_name": " conv1\t", "pu": " cpu", "exec_us": 112}]})");
  auto t = CostTableFromJson(j, "c.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->meta.at("source"), "user edited");
  EXPECT_EQ(t->meta.at("note"), "x");
  const std::string csv = CostTableToCsv(*t);
  EXPECT_NE(csv.find("op,,conv1,cpu,112,"), std::string::npos) << csv;
  auto again = ParseCostTableCsv(csv, "c.csv");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(CostTableToCsv(*again), csv);
  EXPECT_EQ(again->meta, t->meta);
  // A CSV meta line with a carriage return inside reads as the CSV writer writes it.
  auto cr = ParseCostTableCsv("# note=a\rb\nkind,op_name,pu,exec_us\nop,a,cpu,1\n", "c.csv");
  ASSERT_TRUE(cr.ok()) << cr.status().message();
  EXPECT_EQ(cr->meta.at("note"), "a b");
  // A meta key with '=' has no CSV form: refused by name.
  j["meta"] = {{"a=b", "c"}};
  EXPECT_TRUE(FailsWith(CostTableFromJson(j, "c.json").status(), {"c.json: /meta", "'a=b'", "'='"}));
}

// --- ONNX importer (fuzz_onnx, corpus) ------------------------------------------------

onnx::ModelProto ConvModel(const Dims& input, const Dims& weight) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : input) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : weight) {
    w->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) w->add_float_data(0.5f);
  auto* node = g->add_node();
  node->set_op_type("Conv");
  node->set_name("conv");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

Status Import(const onnx::ModelProto& m) {
  return LoadOnnxModelFromBytes(m.SerializeAsString(), "m.onnx").status();
}

// crash-72defbb0…: ONNX 1.12's Conv shape inference reads past its vectors
// (a SEGV at address 0) when the input's rank differs from the weight's.
TEST(FuzzRegression, ConvWithInputRankUnlikeItsWeightIsRefusedNotACrash) {
  EXPECT_TRUE(FailsWith(Import(ConvModel({1, 3}, {4, 3, 3, 3})),
                        {"m.onnx", "node name: conv", "the input has rank 2 but the weight has rank 4"}));
  EXPECT_TRUE(FailsWith(Import(ConvModel({1, 3, 8, 8, 8}, {4, 3, 3, 3})), {"rank 5", "rank 4"}));
  EXPECT_TRUE(Import(ConvModel({1, 3, 8, 8}, {4, 3, 3, 3})).ok());
}

// crash-751883f9…: a MaxPool with strides [1, 0] in a mutated YOLOv5n made
// ONNX 1.12's convPoolShapeInference divide by zero (SIGFPE). Strides,
// dilations and kernel sizes below 1, and a group below 1, are refused first.
TEST(FuzzRegression, ZeroStridesDilationsAndGroupsAreRefusedNotACrash) {
  auto ints = [](onnx::NodeProto* n, const std::string& name, const Dims& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  };
  for (const std::string attr : {"strides", "dilations", "kernel_shape"}) {
    SCOPED_TRACE(attr);
    auto m = ConvModel({1, 3, 8, 8}, {4, 3, 3, 3});
    ints(m.mutable_graph()->mutable_node(0), attr, attr == "kernel_shape" ? Dims{3, 0} : Dims{1, 0});
    EXPECT_TRUE(FailsWith(Import(m), {"m.onnx", "node name: conv", "'" + attr + "' has 0"}));
  }
  auto pool = ConvModel({1, 3, 8, 8}, {4, 3, 3, 3});
  auto* node = pool.mutable_graph()->mutable_node(0);
  node->set_op_type("MaxPool");
  node->set_name("pool");
  node->mutable_input()->RemoveLast();
  ints(node, "kernel_shape", {2, 2});
  ints(node, "strides", {1, 0});
  EXPECT_TRUE(FailsWith(Import(pool), {"node name: pool", "'strides' has 0"}));
  auto group = ConvModel({1, 3, 8, 8}, {4, 3, 3, 3});
  auto* g = group.mutable_graph()->mutable_node(0)->add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(0);
  EXPECT_TRUE(FailsWith(Import(group), {"'group' is 0"}));
}

// fuzz_onnx, UBSan: folding a Mul of shape values near 2^60 overflowed
// int64 (undefined behaviour). Integer arithmetic that overflows, and
// INT64_MIN / -1, are now left unfolded.
TEST(FuzzRegression, ConstantFoldingDoesNotOverflow) {
  using internal::ConstTensor;
  auto ints = [](std::vector<int64_t> v) {
    ConstTensor t;
    t.dims = {static_cast<int64_t>(v.size())};
    t.ints = std::move(v);
    return t;
  };
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  for (const auto& [op, a, b] : {std::tuple<std::string, int64_t, int64_t>{"Mul", 768, int64_t{1297036692682702848}},
                                 {"Add", kMax, 1}, {"Sub", kMin, 1}, {"Div", kMin, -1}}) {
    SCOPED_TRACE(op);
    onnx::NodeProto node;
    node.set_op_type(op);
    node.add_input("a");
    node.add_input("b");
    node.add_output("c");
    const std::unordered_map<std::string, ConstTensor> constants = {{"a", ints({a})}, {"b", ints({b})}};
    EXPECT_FALSE(internal::EvaluateNode(node, constants, {}).has_value());
  }
  onnx::NodeProto mul;
  mul.set_op_type("Mul");
  mul.add_input("a");
  mul.add_input("b");
  mul.add_output("c");
  auto folded = internal::EvaluateNode(mul, {{"a", ints({3, 4})}, {"b", ints({5})}}, {});
  ASSERT_TRUE(folded.has_value());
  EXPECT_EQ(folded->at(0).ints, (std::vector<int64_t>{15, 20}));
}

// ONNX shape inference lets a Conv whose weight expects other input channels
// through, and the planner then sized crossbars from the wrong weight.
TEST(FuzzRegression, ConvChannelMismatchIsRefused) {
  EXPECT_TRUE(FailsWith(Import(ConvModel({1, 4, 8, 8}, {4, 3, 3, 3})),
                        {"'conv'", "the input has 4 channels", "expects 3"}));
}

// Gemm's inner dimensions were not compared by ONNX 1.12's shape inference;
// ONNX 1.22's says "Dimension mismatch in unification", hetplan's guard which.
TEST(FuzzRegression, GemmInnerDimensionMismatchIsRefused) {
  auto m = ConvModel({1, 4}, {3, 5});
  m.mutable_graph()->mutable_node(0)->set_op_type("Gemm");
  m.mutable_graph()->mutable_node(0)->set_name("gemm");
  auto* trans_b = m.mutable_graph()->mutable_node(0)->add_attribute();
  trans_b->set_name("transB");
  trans_b->set_type(onnx::AttributeProto::INT);
  trans_b->set_i(1);
  EXPECT_TRUE(FailsWith(Import(m), {"node name: gemm", "A [1,4] and B [3,5]", "inner dimensions (4 vs 5)"}));
  trans_b->set_i(0);  // [1,4] x [3,5] without transposition: still 4 vs 3
  EXPECT_TRUE(FailsWith(Import(m), {"node name: gemm", "4 vs 3"}));
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(3);
  EXPECT_TRUE(Import(m).ok());
}

TEST(FuzzRegression, InitializerDataMustMatchItsDims) {
  auto m = ConvModel({1, 3, 8, 8}, {4, 3, 3, 3});
  m.mutable_graph()->mutable_initializer(0)->mutable_float_data()->Truncate(10);
  EXPECT_TRUE(FailsWith(Import(m), {"initializer 'w'", "[4,3,3,3]", "108 elements", "holds 10 values"}));
  auto raw = ConvModel({1, 3, 8, 8}, {4, 3, 3, 3});
  auto* w = raw.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(107 * 4, '\0'));
  EXPECT_TRUE(FailsWith(Import(raw), {"initializer 'w'", "428 bytes"}));
  w->set_raw_data(std::string(108 * 4, '\0'));
  EXPECT_TRUE(Import(raw).ok());
  auto negative = ConvModel({1, 3, 8, 8}, {4, 3, 3, 3});
  negative.mutable_graph()->mutable_initializer(0)->set_dims(0, -4);
  EXPECT_TRUE(FailsWith(Import(negative), {"initializer 'w'", "negative dim"}));
}

// `hetplan graph --json` on a model whose node name is not UTF-8 ended in
// "internal error" (type_error 316 from the JSON writer).
TEST(FuzzRegression, ModelNamesMustBeUtf8) {
  auto m = ConvModel({1, 3, 8, 8}, {4, 3, 3, 3});
  m.mutable_graph()->mutable_node(0)->set_name("co\xffnv");
  EXPECT_TRUE(FailsWith(Import(m), {"m.onnx", "node #0", "not valid UTF-8"}));
  m.mutable_graph()->mutable_node(0)->set_name("conv");
  m.mutable_graph()->mutable_node(0)->set_output(0, "y\xc3");
  m.mutable_graph()->mutable_output(0)->set_name("y\xc3");
  EXPECT_TRUE(FailsWith(Import(m), {"not valid UTF-8"}));
}

}  // namespace
}  // namespace hetplan
