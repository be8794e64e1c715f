// Cost tables: exact CSV/JSON round trips, every malformed-CSV case with its
// one-line "<label>:<line>: <column>: <problem>; <fix>" message, and the
// checks against a graph and a model hash.
#include "hetplan/cost/cost_table.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "hetplan/util/io.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

OpGraph ThreeOps() {
  std::vector<Operator> ops(3);
  const char* names[] = {"/conv1/Conv", "/relu/Relu", "/fc/Gemm"};
  for (int i = 0; i < 3; ++i) {
    ops[i].id = i;
    ops[i].name = names[i];
    ops[i].type = "Op";
    ops[i].nodes = {names[i]};
  }
  auto g = OpGraph::Create("three", std::move(ops), {Edge{0, 1, {"t0"}, 1, 4}, Edge{1, 2, {"t1"}, 1, 4}});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

CostTable Sample() {
  CostTable t;
  t.meta = {{"source", "measured"}, {"model_sha256", "ab12"}, {"threads", "1"},
            {"cpu", "Some CPU @ 3.0GHz, with = and , in it"}};
  OpCost a;
  a.op_id = 0;
  a.op_name = "/conv1/Conv";
  a.pu = "cpu";
  a.exec_us = 0.1 + 0.2;  // not exactly 0.3: the round trip must keep every bit
  a.p10_us = 1.0 / 3.0;
  a.p90_us = 123456789.123456789;
  a.in_context_us = 1e-7;
  a.framework_us = 0.7;
  OpCost b;
  b.op_name = "/relu/Relu";  // no op_id, no percentiles
  b.pu = "cpu";
  b.exec_us = 2;
  OpCost c;
  c.op_id = 2;
  c.op_name = "/fc/Gemm";
  c.pu = "npu";
  c.exec_us = 5e-300;
  c.dispatch_us = 12.5;
  c.h2d_us = 3.25;
  c.d2h_us = 1e15;
  OpCost d = c;
  d.op_name = "name, with \"quotes\"";  // CSV quoting
  d.op_id = -1;
  d.crossbars = 12;  // a CIM layer as a simulator mapped it
  t.ops = {a, b, c, d};
  t.power_w = {{"cpu", 15.5}, {"npu", 4.0}};
  t.boundary_us = {{"cpu", 41.25}, {"npu", 0}};
  t.slowdowns = {{"cpu", "npu", 1.25}, {"npu", "cpu", 1.0000000000000002}};
  t.coexec = {{"/conv1/Conv", "cpu", "/fc/Gemm", "npu", 99.75}};
  t.model_median_us = 1234.5678;
  t.model_p10_us = 1200.0;
  t.model_p90_us = 1300.1;
  return t;
}

void ExpectSame(const CostTable& x, const CostTable& y) {
  EXPECT_EQ(x.meta, y.meta);
  ASSERT_EQ(x.ops.size(), y.ops.size());
  for (size_t i = 0; i < x.ops.size(); ++i) {
    const OpCost& a = x.ops[i];
    const OpCost& b = y.ops[i];
    EXPECT_EQ(a.op_id, b.op_id) << i;
    EXPECT_EQ(a.op_name, b.op_name) << i;
    EXPECT_EQ(a.pu, b.pu) << i;
    EXPECT_EQ(a.exec_us, b.exec_us) << i;  // bit-exact, not approximately
    EXPECT_EQ(a.dispatch_us, b.dispatch_us) << i;
    EXPECT_EQ(a.h2d_us, b.h2d_us) << i;
    EXPECT_EQ(a.d2h_us, b.d2h_us) << i;
    EXPECT_EQ(a.p10_us, b.p10_us) << i;
    EXPECT_EQ(a.p90_us, b.p90_us) << i;
    EXPECT_EQ(a.in_context_us, b.in_context_us) << i;
    EXPECT_EQ(a.framework_us, b.framework_us) << i;
    EXPECT_EQ(a.crossbars, b.crossbars) << i;
  }
  EXPECT_EQ(x.power_w, y.power_w);
  EXPECT_EQ(x.boundary_us, y.boundary_us);
  ASSERT_EQ(x.slowdowns.size(), y.slowdowns.size());
  for (size_t i = 0; i < x.slowdowns.size(); ++i) {
    EXPECT_EQ(x.slowdowns[i].run_pu, y.slowdowns[i].run_pu);
    EXPECT_EQ(x.slowdowns[i].interfere_pu, y.slowdowns[i].interfere_pu);
    EXPECT_EQ(x.slowdowns[i].factor, y.slowdowns[i].factor);
  }
  ASSERT_EQ(x.coexec.size(), y.coexec.size());
  for (size_t i = 0; i < x.coexec.size(); ++i) {
    EXPECT_EQ(x.coexec[i].op_a, y.coexec[i].op_a);
    EXPECT_EQ(x.coexec[i].pu_a, y.coexec[i].pu_a);
    EXPECT_EQ(x.coexec[i].op_b, y.coexec[i].op_b);
    EXPECT_EQ(x.coexec[i].pu_b, y.coexec[i].pu_b);
    EXPECT_EQ(x.coexec[i].makespan_us, y.coexec[i].makespan_us);
  }
  EXPECT_EQ(x.model_median_us, y.model_median_us);
  EXPECT_EQ(x.model_p10_us, y.model_p10_us);
  EXPECT_EQ(x.model_p90_us, y.model_p90_us);
}

TEST(CostTable, CsvRoundTripIsExact) {
  CostTable t = Sample();
  std::string csv = CostTableToCsv(t);
  EXPECT_NE(csv.find("# source=measured\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("kind,op_id,op_name,pu,exec_us"), std::string::npos) << csv;
  auto back = ParseCostTableCsv(csv, "t.csv");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << csv;
  ExpectSame(t, *back);
  EXPECT_EQ(CostTableToCsv(*back), csv);
}

TEST(CostTable, JsonRoundTripIsExact) {
  CostTable t = Sample();
  nlohmann::json j = CostTableToJson(t);
  EXPECT_EQ(j["format"], "hetplan-cost-table");
  // Through text too, as a file would go.
  auto back = CostTableFromJson(nlohmann::json::parse(j.dump(1)), "t.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSame(t, *back);
  // CSV → JSON → CSV is the identity as well.
  auto again = CostTableFromJson(CostTableToJson(*back), "t.json");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(CostTableToCsv(*again), CostTableToCsv(t));
}

TEST(CostTable, ColumnsByNameInAnyOrderOptionalOnesMayBeMissing) {
  std::string csv =
      "# source=user\n"
      "#   model_sha256 = ff00  \n"
      "# a comment without an equals sign\n"
      "\n"
      "pu,exec_us,op_name,kind\r\n"
      "cpu,10,/conv1/Conv,op\r\n"
      "cpu,  2.5 ,/relu/Relu,op\r\n"
      "# a comment between rows\n"
      "\n"
      "npu,+1e3,/fc/Gemm,op\n";
  auto t = ParseCostTableCsv(csv, "u.csv");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->meta.at("source"), "user");
  EXPECT_EQ(t->meta.at("model_sha256"), "ff00");
  ASSERT_EQ(t->ops.size(), 3u);
  EXPECT_EQ(t->ops[1].exec_us, 2.5);
  EXPECT_EQ(t->ops[2].exec_us, 1000);
  EXPECT_EQ(t->ops[0].op_id, -1);
  EXPECT_FALSE(t->ops[0].p10_us.has_value());
  EXPECT_EQ(t->ops[0].dispatch_us, 0);
  EXPECT_FALSE(t->model_median_us.has_value());
  EXPECT_TRUE(CheckCostTable(*t, ThreeOps(), "u.csv").ok());
  ASSERT_NE(t->Find("/fc/Gemm", "npu"), nullptr);
  EXPECT_EQ(t->Find("/fc/Gemm", "cpu"), nullptr);
}

// The error for `csv`, which must fail.
std::string CsvError(const std::string& csv) {
  auto t = ParseCostTableCsv(csv, "t.csv");
  EXPECT_FALSE(t.ok()) << csv;
  if (t.ok()) return "";
  EXPECT_EQ(t.status().message().find('\n'), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("; "), std::string::npos) << "no fix: " << t.status().message();
  return t.status().message();
}

TEST(CostTable, CsvErrorsNameLineColumnAndFix) {
  const std::string head = "# source=user\nkind,op_name,pu,exec_us,p10_us\n";  // header on line 2
  // Missing required column.
  EXPECT_EQ(CsvError("kind,op_name,pu\nop,a,cpu\n").rfind("t.csv:2: exec_us: column missing from the "
                                                          "header, needed by op rows; add a exec_us column", 0), 0u)
      << CsvError("kind,op_name,pu\nop,a,cpu\n");
  EXPECT_EQ(CsvError("op_name,pu,exec_us\na,cpu,1\n").rfind("t.csv:1: kind: column missing", 0), 0u);
  EXPECT_EQ(CsvError("kind,pu\npu,cpu\n").rfind("t.csv:2: power_w: column missing", 0), 0u);
  // Non-numeric, NaN, inf, negative, empty required.
  EXPECT_EQ(CsvError(head + "op,a,cpu,abc,\n").rfind("t.csv:3: exec_us: 'abc' is not a number;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,a,cpu,12ms,\n").rfind("t.csv:3: exec_us: '12ms' is not a number;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,a,cpu,nan,\n").rfind("t.csv:3: exec_us: 'nan' is not finite;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,a,cpu,1,inf\n").rfind("t.csv:3: p10_us: 'inf' is not finite;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,a,cpu,-1,\n").rfind("t.csv:3: exec_us: '-1' is negative;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,a,cpu,1e999,\n").rfind("t.csv:3: exec_us: '1e999' is out of range;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,a,cpu,,\n").rfind("t.csv:3: exec_us: empty, but op rows need it;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,,cpu,1,\n").rfind("t.csv:3: op_name: empty", 0), 0u);
  // Duplicate (op, pu), naming the first row.
  std::string dup = CsvError(head + "op,a,cpu,1,\nop,b,cpu,1,\nop,a,cpu,2,\n");
  EXPECT_EQ(dup.rfind("t.csv:5: op_name: second row for operator 'a' on PU 'cpu' (first at t.csv:3)", 0), 0u)
      << dup;
  // The same operator on two PUs is fine.
  EXPECT_TRUE(ParseCostTableCsv(head + "op,a,cpu,1,\nop,a,npu,2,\n", "t.csv").ok());
  // Unknown kind.
  EXPECT_EQ(CsvError(head + "opp,a,cpu,1,\n").rfind("t.csv:3: kind: unknown kind 'opp'; use op, pu,", 0), 0u);
  // Wrong cell count, both ways.
  EXPECT_EQ(CsvError(head + "op,a,cpu,1\n").rfind("t.csv:3: row: 4 cells, but the header has 5 columns;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,a,cpu,1,,\n").rfind("t.csv:3: row: 6 cells", 0), 0u);
  // Header problems and quoting.
  EXPECT_EQ(CsvError("kind,pu,pu\n").rfind("t.csv:1: pu: the column appears twice", 0), 0u);
  EXPECT_EQ(CsvError("# only=meta\n").rfind("t.csv:2: kind: no header row;", 0), 0u);
  EXPECT_EQ(CsvError(head + "op,\"a,cpu,1,\n").rfind("t.csv:3: row: a quoted cell is never closed", 0), 0u);
  // Bad op_id, zero slowdown, second model row.
  EXPECT_EQ(CsvError("kind,op_id,op_name,pu,exec_us\nop,x,a,cpu,1\n").rfind("t.csv:2: op_id: 'x' is not", 0), 0u);
  EXPECT_EQ(CsvError("kind,op_name,pu,exec_us,crossbars\nop,a,cim,1,2.5\n")
                .rfind("t.csv:2: crossbars: '2.5' is not a whole number of crossbars", 0),
            0u);
  EXPECT_EQ(CsvError("kind,pu,other_pu,slowdown\nslowdown,cpu,npu,0\n").rfind("t.csv:2: slowdown: '0' is zero;", 0), 0u);
  EXPECT_EQ(CsvError("kind,exec_us\nmodel,1\nmodel,2\n").rfind("t.csv:3: kind: second model row (first at t.csv:2)", 0), 0u);
  // Boundary rows: one per PU, a time >= 0 (0 is a measured "no cost").
  EXPECT_EQ(CsvError("kind,pu,exec_us\nboundary,cpu,1\nboundary,cpu,2\n")
                .rfind("t.csv:3: pu: second boundary row for 'cpu' (first at t.csv:2)", 0), 0u);
  EXPECT_EQ(CsvError("kind,pu,exec_us\nboundary,cpu,-3\n").rfind("t.csv:2: exec_us: '-3' is negative;", 0), 0u);
  EXPECT_EQ(CsvError("kind,pu,exec_us\nboundary,cpu,\n").rfind("t.csv:2: exec_us: empty, but boundary rows need it", 0),
            0u);
  auto boundary = ParseCostTableCsv("kind,pu,exec_us\nboundary,cpu,0\nboundary,cpu1,37.5\n", "t.csv");
  ASSERT_TRUE(boundary.ok()) << boundary.status().message();
  EXPECT_EQ(boundary->boundary_us, (std::map<std::string, double>{{"cpu", 0.0}, {"cpu1", 37.5}}));
}

TEST(CostTable, JsonErrorsNameTheRow) {
  auto bad = [](const std::string& text) {
    auto t = CostTableFromJson(nlohmann::json::parse(text), "t.json");
    EXPECT_FALSE(t.ok()) << text;
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_EQ(bad(R"({"rows": [{"kind": "op", "op_name": "a", "pu": "cpu"}]})")
                .rfind("t.json:/rows/0: exec_us: missing, needed by op rows;", 0), 0u);
  EXPECT_EQ(bad(R"({"rows": [{"kind": "op", "op_name": "a", "pu": "cpu", "exec_us": "fast"}]})")
                .rfind("t.json:/rows/0: exec_us: 'fast' is not a number;", 0), 0u);
  EXPECT_EQ(bad(R"({"rows": [{"kind": "op", "op_name": "a", "pu": "cpu", "exec_us": -2}]})")
                .rfind("t.json:/rows/0: exec_us: '-2' is negative;", 0), 0u);
  EXPECT_EQ(bad(R"({"rows": [{"kind": "op", "op_name": "a", "pu": "cpu", "exec_us": [1]}]})")
                .rfind("t.json:/rows/0: exec_us: [1] is neither", 0), 0u);
  EXPECT_EQ(bad(R"({"rows": [{"kind": "x"}]})").rfind("t.json:/rows/0: kind: unknown kind 'x'", 0), 0u);
  EXPECT_EQ(bad(R"({"rows": [{"kind": "op", "op_name": "a", "pu": "cpu", "exec_us": 1},
                             {"kind": "op", "op_name": "a", "pu": "cpu", "exec_us": 1}]})")
                .rfind("t.json:/rows/1: op_name: second row for operator 'a' on PU 'cpu' (first at t.json:/rows/0)", 0),
            0u);
  EXPECT_EQ(bad(R"({"meta": {}})").rfind("t.json: /rows: missing", 0), 0u);
  EXPECT_EQ(bad(R"({"format": "other", "rows": []})").rfind("t.json: /format:", 0), 0u);
  EXPECT_EQ(bad(R"([1, 2])").rfind("t.json: /: not a JSON object", 0), 0u);
}

TEST(CostTable, SaveAndLoadByExtension) {
  fs::path dir = fs::temp_directory_path() / ("hetplan_cost_table_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  CostTable t = Sample();
  std::string csv = (dir / "t.csv").string(), json = (dir / "t.json").string();
  ASSERT_TRUE(SaveCostTable(t, csv, json).ok());
  auto from_csv = LoadCostTable(csv);
  ASSERT_TRUE(from_csv.ok()) << from_csv.status().message();
  ExpectSame(t, *from_csv);
  auto from_json = LoadCostTable(json);
  ASSERT_TRUE(from_json.ok()) << from_json.status().message();
  ExpectSame(t, *from_json);

  ASSERT_TRUE(WriteFileAtomic((dir / "broken.json").string(), "{\"rows\": [").ok());
  auto broken = LoadCostTable((dir / "broken.json").string());
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("not valid JSON"), std::string::npos);
  auto txt = LoadCostTable((dir / "t.txt").string());
  ASSERT_FALSE(txt.ok());
  EXPECT_NE(txt.status().message().find("name the file .csv or .json"), std::string::npos);
  auto missing = LoadCostTable((dir / "missing.csv").string());
  EXPECT_FALSE(missing.ok());
  fs::remove_all(dir);
}

CostTable Covering() {
  CostTable t;
  for (const char* name : {"/conv1/Conv", "/relu/Relu", "/fc/Gemm"}) {
    OpCost c;
    c.op_name = name;
    c.pu = "cpu";
    c.exec_us = 1;
    t.ops.push_back(c);
  }
  return t;
}

TEST(CostTable, CheckAgainstGraph) {
  OpGraph g = ThreeOps();
  EXPECT_TRUE(CheckCostTable(Covering(), g, "t.csv").ok());
  EXPECT_TRUE(CheckCostTable(Sample(), g, "t.csv").ok() == false);  // Sample() names a foreign op

  CostTable unknown = Covering();
  unknown.ops[1].op_name = "/relu/Relu_99";
  Status st = CheckCostTable(unknown, g, "t.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("t.csv: op row '/relu/Relu_99' on 'cpu': the graph 'three' has no operator"),
            std::string::npos) << st.message();

  CostTable nan = Covering();
  nan.ops[0].exec_us = std::numeric_limits<double>::quiet_NaN();
  st = CheckCostTable(nan, g, "t.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("exec_us is not finite"), std::string::npos) << st.message();
  CostTable negative = Covering();
  negative.ops[0].in_context_us = -1;
  EXPECT_FALSE(CheckCostTable(negative, g, "t.csv").ok());

  CostTable dup = Covering();
  dup.ops.push_back(dup.ops[2]);
  st = CheckCostTable(dup, g, "t.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("op row '/fc/Gemm' on 'cpu': a second row"), std::string::npos) << st.message();

  CostTable gap = Covering();
  gap.ops.erase(gap.ops.begin() + 1);
  st = CheckCostTable(gap, g, "t.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kInfeasible);
  EXPECT_NE(st.message().find("operator '/relu/Relu' (id 1, Op) has no cost on any PU"), std::string::npos)
      << st.message();
  CostTable empty;
  st = CheckCostTable(empty, g, "t.csv");
  EXPECT_NE(st.message().find("(nor have 2 more operators)"), std::string::npos) << st.message();

  CostTable wrong_id = Covering();
  wrong_id.ops[2].op_id = 0;
  st = CheckCostTable(wrong_id, g, "t.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("op_id 0 but the operator's id is 2"), std::string::npos) << st.message();

  CostTable bad_coexec = Covering();
  bad_coexec.coexec.push_back({"/conv1/Conv", "cpu", "nope", "npu", 1});
  EXPECT_FALSE(CheckCostTable(bad_coexec, g, "t.csv").ok());
  CostTable bad_slowdown = Covering();
  bad_slowdown.slowdowns.push_back({"cpu", "npu", 0});
  EXPECT_FALSE(CheckCostTable(bad_slowdown, g, "t.csv").ok());
}

TEST(CostTable, ProvenanceRefusesAnotherModelsTable) {
  CostTable t = Covering();
  EXPECT_TRUE(CheckProvenance(t, "abcd", "t.csv").ok());  // no hash: written by hand
  t.meta["model_sha256"] = "abcd";
  t.meta["model_file"] = "resnet18.onnx";
  EXPECT_TRUE(CheckProvenance(t, "abcd", "t.csv").ok());
  Status st = CheckProvenance(t, "ef01", "t.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("t.csv: the table was measured on another model (model_sha256 abcd, file "
                              "resnet18.onnx)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("re-profile"), std::string::npos);
}

}  // namespace
}  // namespace hetplan
