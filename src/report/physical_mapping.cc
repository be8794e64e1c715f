// The CIM paper's grid with the weights as cells store them (issue 44):
// the same plans with PUMA's cell layout (2-bit cells, each bit slice in
// crossbars of its own) beside the paper's idealisation of one cell a weight.
#include <fmt/format.h>

#include "hetplan/report/plots.h"
#include "report/paper_tables.h"

namespace hetplan::report_internal {
namespace {

// `solver`'s row of the grid (crossbars × T_mvm), with or without a cell layout.
bool GridRow(const nlohmann::json& r, const std::string& solver) {
  return RowString(r, "solver") == solver && IsGridRow(r);
}

std::string CimField(const nlohmann::json& r, const char* field) {
  const auto d = r.find("devices");
  if (d == r.end() || !d->is_object()) return "—";
  for (const auto& [name, dev] : d->items()) {
    if (dev.value("kind", "") == "cim" && dev.contains(field) && dev[field].is_number()) {
      return fmt::format("{}", dev[field].get<int64_t>());
    }
  }
  return "—";
}

std::string Speedup(const nlohmann::json& r) {
  const double s = RowNumber(r, "speedup");
  return std::isfinite(s) ? fmt::format("{:.2f}×", s) : std::string("—");
}

}  // namespace

bool IsCellLayoutRow(const nlohmann::json& r) { return !RowParam(r, kBitsPerCellKey).empty(); }

Status AddPhysicalMappingSection(const std::vector<nlohmann::json>& idealised,
                                 const std::vector<nlohmann::json>& physical, const std::string& solver,
                                 ReportDraft& draft) {
  std::vector<std::vector<std::string>> table;
  for (const nlohmann::json& p : physical) {
    if (!GridRow(p, solver) || RowParam(p, kMvmLatencyKey) != "50") continue;
    const nlohmann::json* twin = nullptr;
    for (const nlohmann::json& r : idealised) {
      if (GridRow(r, solver) && RowString(r, "model") == RowString(p, "model") &&
          RowString(r, "platform") == RowString(p, "platform") &&
          RowParam(r, kCrossbarsKey) == RowParam(p, kCrossbarsKey) && RowParam(r, kMvmLatencyKey) == "50") {
        twin = &r;
      }
    }
    if (twin == nullptr) continue;
    const double a = RowNumber(*twin, "speedup"), b = RowNumber(p, "speedup");
    table.push_back({RowString(p, "model"), RowString(p, "platform"), RowParam(p, kCrossbarsKey),
                     CimField(*twin, "crossbars_for_all"), CimField(*twin, "crossbars"), Speedup(*twin),
                     CimField(p, "crossbars_for_all"), CimField(p, "crossbars"), Speedup(p),
                     std::isfinite(a) && std::isfinite(b) && b > 0 ? fmt::format("{:.2f}", a / b) : "—"});
  }
  if (table.empty()) {
    if (!physical.empty()) draft.skipped.push_back("physical mapping table: no grid row has an idealised twin");
    return Status::Ok();
  }
  draft.blocks.push_back(Heading("The grid with weights as cells store them (PUMA's cell layout)"));
  draft.blocks.push_back(Table(
      fmt::format("The CIM paper's grid at T_mvm = 50 ns planned twice by `{}`: with one cell a weight (the paper's "
                  "eq. 1) and with PUMA's layout (8-bit weights in 2-bit cells, each slice in crossbars of its own: "
                  "4 crossbars where eq. 1 counts one). \"all\": crossbars that holding every CIM-capable operator "
                  "takes; \"used\": the plan's. Measured here; the host is measured, the CIM analytical.",
                  solver),
      {"model", "platform", "crossbars C", "all (idealised)", "used (idealised)", "speedup (idealised)",
       "all (PUMA cells)", "used (PUMA cells)", "speedup (PUMA cells)", "idealised / PUMA cells"},
      table));
  return Status::Ok();
}

}  // namespace hetplan::report_internal
