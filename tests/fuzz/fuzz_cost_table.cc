// libFuzzer target: the cost-table readers. The bytes are read as CSV and,
// when they are JSON, as a JSON table. A table either reader accepts must
// survive the round trip through its writer (write → read → write gives the
// same text) and CheckCostTable against a small graph.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/op_graph.h"

namespace {

const hetplan::OpGraph& SmallGraph() {
  static const hetplan::OpGraph g = [] {
    std::vector<hetplan::Operator> ops(3);
    const char* names[] = {"conv0", "relu1", "gemm2"};
    const char* types[] = {"Conv", "Relu", "Gemm"};
    for (int i = 0; i < 3; ++i) {
      ops[i].id = i;
      ops[i].name = names[i];
      ops[i].type = types[i];
    }
    std::vector<hetplan::Edge> edges = {{0, 1, {"t0"}, 8, 32}, {1, 2, {"t1"}, 8, 32}};
    auto r = hetplan::OpGraph::Create("small", std::move(ops), std::move(edges));
    if (!r.ok()) std::abort();
    return std::move(r).value();
  }();
  return g;
}

void Exercise(const hetplan::CostTable& t) {
  (void)hetplan::CheckCostTable(t, SmallGraph(), "fuzz");
  (void)hetplan::CheckProvenance(t, "0123", "fuzz");
  std::string csv = hetplan::CostTableToCsv(t);
  auto again = hetplan::ParseCostTableCsv(csv, "roundtrip.csv");
  if (!again.ok()) std::abort();  // the writer wrote something its reader refuses
  if (hetplan::CostTableToCsv(*again) != csv) std::abort();
  auto from_json = hetplan::CostTableFromJson(hetplan::CostTableToJson(t), "roundtrip.json");
  if (!from_json.ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto csv = hetplan::ParseCostTableCsv(text, "fuzz.csv");
  if (csv.ok()) {
    Exercise(*csv);
  } else if (csv.status().message().rfind("fuzz.csv", 0) != 0) {
    std::abort();
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    auto t = hetplan::CostTableFromJson(j, "fuzz.json");
    if (t.ok()) {
      Exercise(*t);
    } else if (t.status().message().rfind("fuzz.json", 0) != 0) {
      std::abort();
    }
  }
  return 0;
}
