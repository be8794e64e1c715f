// The tables of the papers' evaluations in the sweep report (paper_tables.h):
// the papers' published numbers, copied from their text and marked "paper",
// and the sections that set the results' rows beside them.
#include "report/paper_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>

namespace hetplan::report_internal {
namespace {

// ---------------------------------------------------------------------------
// The papers' published numbers, copied from their text (marked "paper").

// Klein et al., Fig. 3 (ResNet-18, all MVM latencies) and Fig. 4 (every model
// at 50 ns): speedup over CPU-only for 25, 50, 100, 200 crossbars.
struct PaperCurve {
  const char* host;   // "arm" (Cortex-A72, 10.24 GB/s) or "x86" (Ryzen 9 3900X, 20.48 GB/s)
  const char* model;  // zoo name
  int mvm_ns;
  double speedup[4];
};
constexpr int kPaperCrossbars[4] = {25, 50, 100, 200};
constexpr PaperCurve kPaperCurves[] = {
    {"arm", "resnet18", 50, {8.7, 8.8, 30.9, 30.9}},  {"arm", "resnet18", 100, {7.8, 7.9, 21.1, 21.1}},
    {"arm", "resnet18", 500, {4.2, 4.3, 6.0, 6.0}},   {"arm", "resnet18", 1000, {2.7, 2.7, 3.1, 3.1}},
    {"x86", "resnet18", 50, {4.7, 4.8, 7.3, 7.3}},    {"x86", "resnet18", 100, {3.2, 3.2, 4.0, 4.0}},
    {"x86", "resnet18", 500, {1.0, 1.0, 1.0, 1.0}},   {"x86", "resnet18", 1000, {1.0, 1.0, 1.0, 1.0}},
    {"arm", "resnet50", 50, {2.2, 6.4, 14.6, 14.9}},  {"arm", "mobilenetv2", 50, {2.1, 3.5, 3.9, 3.9}},
    {"arm", "yolov5n", 50, {1.4, 1.9, 3.1, 3.1}},     {"x86", "resnet50", 50, {2.0, 2.8, 3.1, 3.1}},
    {"x86", "mobilenetv2", 50, {1.2, 1.2, 1.2, 1.2}}, {"x86", "yolov5n", 50, {1.4, 1.7, 1.9, 1.9}},
};

// Klein et al., Table I (ARM setup): operators, decision variables,
// constraints, mean solving time (s; "<0.01" printed as such), mean MIP gap (%).
struct PaperIlp {
  const char* model;
  int operators, variables, constraints;
  const char* solve_s;
  double gap_pct;
};
constexpr PaperIlp kPaperTable1[] = {
    {"resnet18", 38, 44, 204, "<0.01", 0.02},
    {"resnet50", 79, 91, 412, "0.24", 0.37},
    {"mobilenetv2", 71, 71, 331, "<0.01", 0.07},
    {"yolov5n", 251, 3041, 7035, "503", 6.97},
};

// Klein et al., §V-B (YOLOv5n), the values its text states.
struct PaperSplit {
  const char* host;
  int crossbars, mvm_ns;
  const char* fact;
};
constexpr PaperSplit kPaperFig5[] = {
    {"arm", 25, 50, "16 of 251 operators on CIM; total latency 270 (ms by context: the unit is lost in our copy)"},
    {"arm", 100, 50, "59 operators on CIM; total latency 127 (ms by context)"},
    {"arm", 200, 50, "same allocation as 100 crossbars (59 on CIM)"},
    {"arm", 100, 1000, "33 operators on CIM"},
    {"x86", 100, 50, "48 operators on CIM"},
    {"x86", 25, 1000, "6 operators on CIM (all crossbar counts)"},
    {"x86", 50, 1000, "6 operators on CIM (all crossbar counts)"},
    {"x86", 100, 1000, "6 operators on CIM (all crossbar counts)"},
    {"x86", 200, 1000, "6 operators on CIM (all crossbar counts)"},
};

std::string PaperHost(const std::string& platform_name) {
  if (platform_name.find("arm") != std::string::npos) return "arm";
  if (platform_name.find("x86") != std::string::npos) return "x86";
  return "";
}

std::optional<double> PaperSpeedup(const std::string& host, const std::string& model, int mvm_ns, int crossbars) {
  for (const PaperCurve& c : kPaperCurves) {
    if (host != c.host || ZooModel(model) != c.model || mvm_ns != c.mvm_ns) continue;
    for (int i = 0; i < 4; ++i) {
      if (kPaperCrossbars[i] == crossbars) return c.speedup[i];
    }
  }
  return std::nullopt;
}

std::optional<double> PaperBest(const std::string& host, const std::string& model) {
  std::optional<double> best;
  for (const PaperCurve& c : kPaperCurves) {
    if (host != c.host || ZooModel(model) != c.model) continue;
    for (double v : c.speedup) best = std::max(best.value_or(0.0), v);
  }
  return best;
}

// BIDENT's published results per solver, as its text states them: speedup
// and energy saving.
struct PaperSolver {
  const char* solver;
  const char* speedup;
  const char* energy_saving;
};
// BIDENT Table II, §IV-B to §IV-D (Intel Core Ultra, 19 model configurations).
constexpr PaperSolver kPaperTable2[] = {
    {"map", "1.09× (geo-mean, 19 configs; 1.01–1.58×)", "9.2 % (mean, energy-optimal sequential)"},
    {"map_parallel", "1.02–1.60× (FP16 configs)", "7.6 % (mean)"},
    {"hetero", "matches the best single PU", "increases energy"},
    {"haxconn", "1.02×", "—"},
    {"axonn", "sacrifices latency (below 1×)", "3.3 %"},
    {"best_single", "1.00× (by definition)", "0 % (by definition)"},
};
// BIDENT §IV-C, Table II "Concurrent" (190 model pairs).
constexpr PaperSolver kPaperConcurrent[] = {
    {"map_concurrent", "3.42× (geo-mean, 190 pairs; 0.86–22.4×)", "48.2 % (mean)"},
    {"pair:map", "3.42× (geo-mean, 190 pairs; 0.86–22.4×)", "48.2 % (mean)"},  // results files before the rename
    {"pair_naive_multi_pu", "1.50×", "—"},
    {"pair_serial", "1.00× (by definition)", "0 % (by definition)"},
};

// The paper's row for `solver` in `table`, nullptr if it has none.
template <size_t N>
const PaperSolver* FindPaper(const PaperSolver (&table)[N], const std::string& solver) {
  for (const PaperSolver& p : table) {
    if (solver == p.solver) return &p;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Row helpers.

int ToInt(const std::string& s) {
  try {
    return std::stoi(s);
  } catch (...) {
    return -1;
  }
}

std::string Fixed(double v, int digits = 2) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : std::string("—");
}
std::string Times(double v) { return std::isfinite(v) ? fmt::format("{:.2f}×", v) : std::string("—"); }
// Rounding noise (|v| below 0.005 %) prints as 0, not "-0.0 %".
std::string Percent(double v) {
  if (!std::isfinite(v)) return "—";
  return fmt::format("{:.1f} %", std::fabs(v) < 5e-5 ? 0.0 : 100 * v);
}

std::string Seconds(double s) {
  if (!std::isfinite(s)) return "—";
  if (s < 0.01) return "<0.01";
  return fmt::format("{:.2f}", s);
}

double GeoMean(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  double sum = 0;
  for (double x : v) {
    if (!(x > 0)) return std::nan("");
    sum += std::log(x);
  }
  return std::exp(sum / static_cast<double>(v.size()));
}

// Rows of the Klein grid: solver, latency objective, both sweep keys.
std::vector<const nlohmann::json*> GridRows(const std::vector<nlohmann::json>& rows, const std::string& solver) {
  std::vector<const nlohmann::json*> out;
  for (const nlohmann::json* r : SolvedRows(rows, solver)) {
    if (IsGridRow(*r)) out.push_back(r);
  }
  return out;
}

// The models and the platforms of `rows`, each in order of first appearance.
std::pair<std::vector<std::string>, std::vector<std::string>> ModelsAndPlatforms(
    const std::vector<const nlohmann::json*>& rows) {
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  for (const nlohmann::json* r : rows) {
    AddUnique(out.first, RowString(*r, "model"));
    AddUnique(out.second, RowString(*r, "platform"));
  }
  return out;
}

// How the numbers of `platform`'s rows were obtained: "measured here" when a
// PU's costs were measured on this machine (the host; a CIM beside it is
// analytical, as in the CIM paper), else "computed here, analytical costs".
std::string BasisLabel(const std::vector<nlohmann::json>& rows, const std::string& platform) {
  for (const nlohmann::json& r : rows) {
    if (RowString(r, "platform") != platform || !r.contains("cost_basis") || !r["cost_basis"].is_object()) continue;
    for (const auto& [pu, basis] : r["cost_basis"].items()) {
      if (basis == "measured") return "measured here";
    }
  }
  return "computed here, analytical costs";
}

// A row of two requests (dse's pair:map, pair_serial, pair_naive_multi_pu).
bool IsPairRow(const nlohmann::json& r) { return r.value("requests", 1) == 2; }

std::string ModelLabel(const std::string& m) {
  static const std::map<std::string, std::string> kNames = {{"resnet18", "ResNet-18"},
                                                            {"resnet50", "ResNet-50"},
                                                            {"mobilenetv2", "MobileNetV2"},
                                                            {"yolov5n", "YOLOv5n"},
                                                            {"vit_b_16", "ViT-B/16"}};
  const std::string zoo = ZooModel(m);
  const auto it = kNames.find(zoo);
  if (it == kNames.end()) return m;
  if (zoo == m) return it->second;
  return it->second + (m.compare(m.size() - 4, 4, "_qop") == 0 ? " (INT8, QOperator)" : " (INT8)");
}

// BIDENT's two-request comparison (§IV-C, Table II "Concurrent"): every
// model paired with itself, speedup over homogeneous serial execution.
void ConcurrentSection(const std::vector<nlohmann::json>& rows, const std::vector<std::string>& models,
                       const std::vector<std::string>& platforms, std::vector<Block>& blocks) {
  bool any = false;
  for (const std::string& p : platforms) {
    std::vector<std::string> ss;
    for (const nlohmann::json& r : rows) {
      if (RowString(r, "platform") == p && IsPairRow(r) && !r.contains("second_model") &&
          std::isfinite(RowNumber(r, "makespan_us"))) {
        AddUnique(ss, RowString(r, "solver"));
      }
    }
    if (ss.empty()) continue;
    any = true;
    std::vector<std::vector<std::string>> summary, per_model;
    for (const std::string& s : ss) {
      std::vector<double> speedups, savings;
      for (const std::string& m : models) {
        double sp = std::nan(""), sv = std::nan("");
        for (const nlohmann::json& r : rows) {
          if (RowString(r, "platform") != p || RowString(r, "model") != m || RowString(r, "solver") != s ||
              !IsPairRow(r) || r.contains("second_model")) {
            continue;
          }
          (RowString(r, "objective") == "energy" ? sv : sp) =
              RowNumber(r, RowString(r, "objective") == "energy" ? "energy_saving_vs_serial" : "speedup_vs_serial");
        }
        if (!std::isfinite(sp) && !std::isfinite(sv)) continue;
        if (std::isfinite(sp)) speedups.push_back(sp);
        if (std::isfinite(sv)) savings.push_back(sv);
        per_model.push_back({s, ModelLabel(m) + " + " + ModelLabel(m), Times(sp), Percent(sv)});
      }
      double mean_saving = std::nan("");
      if (!savings.empty()) {
        mean_saving = 0;
        for (double v : savings) mean_saving += v / static_cast<double>(savings.size());
      }
      const PaperSolver* pp = FindPaper(kPaperConcurrent, s);
      summary.push_back({s, Times(GeoMean(speedups)), Percent(mean_saving), pp == nullptr ? "—" : pp->speedup,
                         pp == nullptr ? "—" : pp->energy_saving});
    }
    const std::string basis = BasisLabel(rows, p);
    blocks.push_back(Table(
        fmt::format("{}: two requests at once, each model paired with itself (BIDENT's 190 pairs mix different "
                    "models). Geometric-mean speedup over homogeneous serial execution (both requests back to back "
                    "on the best single PU) with the latency objective, and mean energy saving over serial execution "
                    "on the lowest-energy PU with the energy objective. pair:map is BIDENT's concurrent state-space "
                    "search (joint space), pair_naive_multi_pu its whole-model-per-PU baseline, priced with "
                    "the same co-execution cost model as the plans. BIDENT's HaX-CoNN concurrent value (1.33×, paper) has no "
                    "counterpart here.",
                    p),
        {"solver", fmt::format("speedup vs homogeneous serial ({})", basis), fmt::format("energy saving ({})", basis),
         "speedup (paper)", "energy saving (paper)"},
        summary));
    blocks.push_back(Table(fmt::format("{}: two requests, per model pair ({}).", p, basis),
                           {"solver", "requests", "speedup vs homogeneous serial (latency objective)",
                            "energy saving vs serial on the lowest-energy PU (energy objective)"},
                           per_model));
  }
  if (!any) {
    blocks.push_back(Para(
        "BIDENT's concurrent results (3.42× geo-mean over homogeneous serial, naive multi-PU 1.50×, HaX-CoNN 1.33×, "
        "190 model pairs; paper) have no rows in these results: sweep with `--solvers pair:map,pair_serial,"
        "pair_naive_multi_pu` (or `hetplan map --mode concurrent`)."));
  }
}


// BIDENT's pair study (§IV-C, Fig. 7): every pair of models planned as two
// requests at once (`dse --pairs all`), per platform and two-request method.
Status PairStudySection(const std::vector<nlohmann::json>& rows, ReportDraft& draft) {
  std::vector<std::string> platforms;
  for (const nlohmann::json& r : rows) {
    if (r.contains("second_model") && IsPairRow(r)) AddUnique(platforms, RowString(r, "platform"));
  }
  if (platforms.empty()) return Status::Ok();
  draft.blocks.push_back(Heading("BIDENT's pair study: two requests over every model pair (BIDENT §IV-C, Fig. 7)"));
  for (const std::string& p : platforms) {
    std::vector<std::string> ss;
    for (const nlohmann::json& r : rows) {
      if (RowString(r, "platform") == p && IsPairRow(r) && RowString(r, "objective") == "latency" &&
          std::isfinite(RowNumber(r, "makespan_us"))) {
        AddUnique(ss, RowString(r, "solver"));
      }
    }
    std::vector<std::vector<std::string>> table;
    for (const std::string& s : ss) {
      std::vector<double> vs_serial, vs_naive;
      int regress = 0;
      for (const nlohmann::json* r : SolvedRows(rows, s)) {
        if (RowString(*r, "platform") != p || !IsPairRow(*r)) continue;
        const double sp = RowNumber(*r, "speedup_vs_serial"), makespan = RowNumber(*r, "makespan_us");
        const double naive = RowNumber(*r, "naive_multi_pu_us");
        if (!std::isfinite(sp)) continue;
        vs_serial.push_back(sp);
        regress += sp < 1 - 1e-9;
        if (std::isfinite(naive) && makespan > 0) vs_naive.push_back(naive / makespan);
      }
      if (vs_serial.empty()) continue;
      const auto [lo, hi] = std::minmax_element(vs_serial.begin(), vs_serial.end());
      const PaperSolver* pp = FindPaper(kPaperConcurrent, s);
      table.push_back({s, std::to_string(vs_serial.size()), Times(GeoMean(vs_serial)),
                       fmt::format("{}–{}", Times(*lo), Times(*hi)), Times(GeoMean(vs_naive)),
                       std::to_string(regress), pp == nullptr ? "—" : pp->speedup,
                       s == "map_concurrent" || s == "pair:map" ? "2.28× (paper)" : "—"});
    }
    const std::string basis = BasisLabel(rows, p);
    draft.blocks.push_back(Table(
        fmt::format("{}: every unordered pair of the results' models (each with itself included, as BIDENT's 190 "
                    "pairs of 19 configurations), latency objective ({}). Speedups are over homogeneous serial "
                    "execution (both requests back to back on the best single PU) and over naive multi-PU "
                    "placement (each whole model on its own PU, priced with the plans' co-execution cost model); "
                    "\"slower\" counts pairs below 1× over serial. The paper's numbers were measured on an Intel "
                    "Core Ultra SoC over its own ten model families.",
                    p, basis),
        {"method", "pairs", fmt::format("geo-mean vs serial ({})", basis), "range vs serial",
         "geo-mean vs naive multi-PU", "slower than serial", "vs serial (paper)", "vs naive multi-PU (paper)"},
        table));
    for (const std::string& s : ss) {
      if (s == "pair_serial") continue;  // 1× by definition
      HETPLAN_RETURN_IF_ERROR(draft.AddFigure(PlotPairStudy(rows, p, s, draft.out_dir), "Fig. 7 " + p + " " + s));
    }
  }
  return Status::Ok();
}

// Headline: best point per model and platform (ILP).
Status HeadlineSection(const std::vector<const nlohmann::json*>& ilp, ReportDraft& draft) {
  if (ilp.empty()) return Status::Ok();
  draft.blocks.push_back(Heading("Headline: best speedup over CPU-only per model and host setting (ILP)"));
  std::vector<std::vector<std::string>> table;
  const auto [ms, ps] = ModelsAndPlatforms(ilp);
  for (const std::string& m : ms) {
    for (const std::string& p : ps) {
      const nlohmann::json* best = nullptr;
      double sum_s = 0, max_s = 0;
      int n = 0, limited = 0;
      for (const nlohmann::json* r : ilp) {
        if (RowString(*r, "model") != m || RowString(*r, "platform") != p) continue;
        if (!best || RowNumber(*r, "speedup") > RowNumber(*best, "speedup")) best = r;
        sum_s += RowNumber(*r, "seconds");
        max_s = std::max(max_s, RowNumber(*r, "seconds"));
        ++n;
        limited += r->value("time_limited", false) ? 1 : 0;
      }
      if (!best) continue;
      const auto paper = PaperBest(PaperHost(RowString(*best, "platform_name")), m);
      std::string hold_all = "—";
      if (best->contains("devices")) {
        for (const auto& [name, d] : (*best)["devices"].items()) {
          if (d.contains("crossbars_for_all")) hold_all = std::to_string(d["crossbars_for_all"].get<int64_t>());
        }
      }
      table.push_back({ModelLabel(m), p, Times(RowNumber(*best, "speedup")),
                       fmt::format("{} xb, {} ns", RowParam(*best, kCrossbarsKey), RowParam(*best, kMvmLatencyKey)),
                       paper ? Times(*paper) : "—", Fixed(RowNumber(*best, "cpu_only_us") / 1000, 1),
                       Seconds(sum_s / n) + " / " + Seconds(max_s), fmt::format("{} of {}", limited, n),
                       hold_all});
    }
  }
  draft.blocks.push_back(Table(
      "Best point of the grid for each model and platform. Paper values: the maximum over Fig. 3/4 (always at 50 "
      "ns). Solve times are the ILP's wall seconds on this machine (exact search or CBC: see the formulation in "
      "Table I); 'time-limited' counts points where the ILP stopped on "
      "its time limit with a feasible schedule (see gap in Table I). The last column sums eq. 1 over every operator "
      "the CIM supports: below that budget the ILP must leave some of them on the host.",
      {"model", "platform", "speedup (measured here)", "at", "best speedup (paper)", "CPU-only ms (measured here)",
       "ILP solve s mean / max (measured here)", "time-limited", "crossbars to hold every CIM operator (eq. 1)"},
      table));
  return Status::Ok();
}

// Fig. 3: ResNet-18.
Status Fig3Section(const std::vector<nlohmann::json>& rows, const std::vector<const nlohmann::json*>& ilp,
                   ReportDraft& draft) {
  if (ilp.empty()) return Status::Ok();
  draft.blocks.push_back(Heading("Speedup vs crossbars and MVM latency, ResNet-18 (CIM paper Fig. 3)"));
  if (draft.draw_figures)
    HETPLAN_RETURN_IF_ERROR(draft.AddFigure(PlotSpeedupVsCrossbars(rows, ModelFor(ilp, "resnet18"), draft.partition_method, draft.out_dir), "Fig. 3"));
  std::vector<std::vector<std::string>> table;
  for (const nlohmann::json* r : ilp) {
    if (ZooModel(RowString(*r, "model")) != "resnet18") continue;
    const int xb = ToInt(RowParam(*r, kCrossbarsKey)), ns = ToInt(RowParam(*r, kMvmLatencyKey));
    const auto paper = PaperSpeedup(PaperHost(RowString(*r, "platform_name")), "resnet18", ns, xb);
    table.push_back({RowString(*r, "platform"), std::to_string(xb), std::to_string(ns), Times(RowNumber(*r, "speedup")),
                     paper ? Times(*paper) : "—", RowString(*r, "status")});
  }
  // Results files list points as they finish (dse runs them in parallel):
  // sort by platform, crossbars, then MVM latency.
  std::sort(table.begin(), table.end(), [](const auto& a, const auto& b) {
    return std::tuple(a[0], std::stoll(a[1]), std::stoll(a[2])) < std::tuple(b[0], std::stoll(b[1]), std::stoll(b[2]));
  });
  if (!table.empty()) {
    draft.blocks.push_back(Table(
        "ResNet-18 speedup over CPU-only, ours beside the paper's Fig. 3 values.",
        {"platform", "crossbars", "T_mvm ns", "speedup (measured here)", "speedup (paper)", "ILP status"}, table));
  }
  return Status::Ok();
}

// Fig. 4: every model at 50 ns.
Status Fig4Section(const std::vector<nlohmann::json>& rows, const std::vector<const nlohmann::json*>& ilp,
                   ReportDraft& draft) {
  if (ilp.empty()) return Status::Ok();
  draft.blocks.push_back(Heading("Speedup per model at 50 ns MVM latency (CIM paper Fig. 4)"));
  if (draft.draw_figures)
    HETPLAN_RETURN_IF_ERROR(draft.AddFigure(PlotSpeedupPerModel(rows, "50", draft.partition_method, draft.out_dir), "Fig. 4"));
  std::vector<std::vector<std::string>> table;
  for (const nlohmann::json* r : ilp) {
    if (RowParam(*r, kMvmLatencyKey) != "50") continue;
    const int xb = ToInt(RowParam(*r, kCrossbarsKey));
    const auto paper = PaperSpeedup(PaperHost(RowString(*r, "platform_name")), RowString(*r, "model"), 50, xb);
    table.push_back({ModelLabel(RowString(*r, "model")), RowString(*r, "platform"), std::to_string(xb),
                     Times(RowNumber(*r, "speedup")), paper ? Times(*paper) : "—"});
  }
  if (!table.empty()) {
    draft.blocks.push_back(Table("Speedup over CPU-only at T_mvm = 50 ns, ours beside the paper's Fig. 4 values.",
                                 {"model", "platform", "crossbars", "speedup (measured here)", "speedup (paper)"},
                                 table));
  }
  return Status::Ok();
}

// Fig. 5: YOLOv5n latency split.
Status Fig5Section(const std::vector<nlohmann::json>& rows, const std::vector<const nlohmann::json*>& ilp,
                   ReportDraft& draft) {
  std::vector<const nlohmann::json*> yolo;
  for (const nlohmann::json* r : ilp) {
    if (ZooModel(RowString(*r, "model")) == "yolov5n") yolo.push_back(r);
  }
  const std::string split_model =
      !yolo.empty() ? RowString(*yolo.front(), "model") : (ilp.empty() ? "" : RowString(*ilp.front(), "model"));
  if (!split_model.empty()) {
    draft.blocks.push_back(
        Heading(fmt::format("Latency split between CPU and CIM, {} (CIM paper Fig. 5)", ModelLabel(split_model))));
    if (draft.draw_figures)
      HETPLAN_RETURN_IF_ERROR(draft.AddFigure(PlotLatencySplit(rows, split_model, draft.partition_method, draft.out_dir), "Fig. 5"));
    std::vector<std::vector<std::string>> table;
    for (const nlohmann::json* r : ilp) {
      if (RowString(*r, "model") != split_model) continue;
      const int xb = ToInt(RowParam(*r, kCrossbarsKey)), ns = ToInt(RowParam(*r, kMvmLatencyKey));
      int host_ops = 0, cim_ops = 0;
      double host_ms = 0, cim_ms = 0;
      if (r->contains("devices")) {
        for (const auto& [name, d] : (*r)["devices"].items()) {
          const bool is_host = d.value("kind", "") == "cpu";
          (is_host ? host_ops : cim_ops) += d.value("operators", 0);
          (is_host ? host_ms : cim_ms) += d.value("busy_us", 0.0) / 1000;
        }
      }
      std::string paper = "—";
      if (split_model == "yolov5n") {
        for (const PaperSplit& s : kPaperFig5) {
          if (PaperHost(RowString(*r, "platform_name")) == s.host && s.crossbars == xb && s.mvm_ns == ns) {
            paper = s.fact;
          }
        }
      }
      table.push_back(
          {RowString(*r, "platform"), std::to_string(xb), std::to_string(ns), fmt::format("{} / {}", host_ops, cim_ops),
           Fixed(host_ms, 1), Fixed(cim_ms, 1), Fixed(RowNumber(*r, "makespan_us") / 1000, 1),
           fmt::format("{} / {}", r->value("crossbars_used", 0), r->value("crossbar_capacity", 0)), paper});
    }
    draft.blocks.push_back(Table(
        fmt::format(
            "Operators per device, busy time per device and makespan (all measured here, host costs measured, CIM "
            "analytical). 'paper' quotes the values the CIM paper's text states for YOLOv5n (251 operators there, "
            "{} here).",
            OperatorsOf(rows, "yolov5n")),
        {"platform", "crossbars", "T_mvm ns", "operators CPU / CIM (measured here)", "CPU busy ms", "CIM busy ms",
         "makespan ms", "crossbars used", "paper"},
        table));
  }
  return Status::Ok();
}

// Table I: ILP statistics.
Status TableISection(const std::vector<const nlohmann::json*>& ilp, ReportDraft& draft) {
  if (ilp.empty()) return Status::Ok();
  draft.blocks.push_back(Heading("ILP statistics per model (CIM paper Table I)"));
  std::vector<std::vector<std::string>> table;
  const auto [ms, ps] = ModelsAndPlatforms(ilp);
  for (const std::string& p : ps) {
    for (const std::string& m : ms) {
      double sum_s = 0, sum_gap = 0, vars = 0, cons = 0, ops = 0;
      int n = 0, limited = 0;
      std::string formulation;
      for (const nlohmann::json* r : ilp) {
        if (RowString(*r, "model") != m || RowString(*r, "platform") != p) continue;
        sum_s += RowNumber(*r, "seconds");
        const double gap = RowNumber(*r, "gap");
        sum_gap += std::isfinite(gap) ? std::max(0.0, gap) : 0;
        vars = std::max(vars, RowNumber(*r, "variables"));
        cons = std::max(cons, RowNumber(*r, "constraints"));
        ops = RowNumber(*r, "operators");
        limited += r->value("time_limited", false) ? 1 : 0;
        formulation = RowString(*r, "formulation");
        ++n;
      }
      if (n == 0) continue;
      const PaperIlp* paper = nullptr;
      for (const PaperIlp& t : kPaperTable1) {
        if (ZooModel(m) == t.model && PaperHost(p) == "arm") paper = &t;
      }
      // The exact search builds no MIP: no variables or constraints to show.
      const bool model_built = vars > 0 || cons > 0;
      table.push_back(
          {ModelLabel(m), p, fmt::format("{:.0f}", ops), model_built ? fmt::format("{:.0f}", vars) : "—",
           model_built ? fmt::format("{:.0f}", cons) : "—",
           Seconds(sum_s / n), fmt::format("{:.2f}", 100 * sum_gap / n), fmt::format("{} of {}", limited, n),
           formulation.empty() ? "—" : formulation,
           paper ? fmt::format("{} / {} / {}", paper->operators, paper->variables, paper->constraints) : "—",
           paper ? std::string(paper->solve_s) : "—", paper ? fmt::format("{:.2f}", paper->gap_pct) : "—"});
    }
  }
  draft.blocks.push_back(Table(
      "Operators, ILP variables and constraints (largest over the grid: the crossbar budget changes which pairs "
      "need ordering variables; — for the exact search, which builds no MIP), mean solve time and mean relative "
      "gap over the grid's points, measured here; the paper's Table I (ARM setup, Gurobi, 600 s limit) beside it.",
      {"model", "platform", "operators", "variables", "constraints", "mean solve s (measured here)",
       "mean gap % (measured here)", "time-limited", "formulation", "operators / variables / constraints (paper)",
       "mean solve s (paper)", "mean gap % (paper)"},
      table));
  return Status::Ok();
}

}  // namespace

bool IsGridRow(const nlohmann::json& r) {
  return !RowParam(r, kCrossbarsKey).empty() && !RowParam(r, kMvmLatencyKey).empty();
}

// The operator count of `model` in the rows ("?" when absent).
std::string ZooModel(const std::string& model) {
  for (const char* suffix : {"_int8_qop", "_int8"}) {
    const std::string s = suffix;
    if (model.size() > s.size() && model.compare(model.size() - s.size(), s.size(), s) == 0) {
      return model.substr(0, model.size() - s.size());
    }
  }
  return model;
}

std::string ModelFor(const std::vector<const nlohmann::json*>& rows, const std::string& zoo) {
  for (const nlohmann::json* r : rows) {
    if (ZooModel(RowString(*r, "model")) == zoo) return RowString(*r, "model");
  }
  return "";
}

std::string OperatorsOf(const std::vector<nlohmann::json>& rows, const std::string& model) {
  for (const nlohmann::json& r : rows) {
    if (ZooModel(RowString(r, "model")) == model && r.contains("operators") && r["operators"].is_number_integer()) {
      return std::to_string(r["operators"].get<int64_t>());
    }
  }
  return "?";
}

Status AddKleinSections(const std::vector<nlohmann::json>& rows, ReportDraft& draft) {
  // The exact search, else the paper's MIP, else "ilp" (results files
  // written before the two had their own names).
  for (const char* m : {"exact", "mip", "ilp"}) {
    if (!GridRows(rows, m).empty()) {
      draft.partition_method = m;
      break;
    }
  }
  const std::vector<const nlohmann::json*> ilp = GridRows(rows, draft.partition_method);
  HETPLAN_RETURN_IF_ERROR(HeadlineSection(ilp, draft));
  HETPLAN_RETURN_IF_ERROR(Fig3Section(rows, ilp, draft));
  HETPLAN_RETURN_IF_ERROR(Fig4Section(rows, ilp, draft));
  HETPLAN_RETURN_IF_ERROR(Fig5Section(rows, ilp, draft));
  return TableISection(ilp, draft);
}

// Baselines side by side on the Klein platforms.
Status AddBaselineSection(const std::vector<nlohmann::json>& rows, const std::vector<std::string>& models,
                          const std::vector<std::string>& solvers, ReportDraft& draft) {
  std::vector<std::string> klein_platforms;
  std::vector<std::string> base_solvers;
  for (const nlohmann::json& r : rows) {
    if (RowString(r, "objective") != "latency" || RowParam(r, kCrossbarsKey).empty()) continue;
    AddUnique(klein_platforms, RowString(r, "platform"));
  }
  for (const std::string& s : solvers) {
    bool any = false;
    for (const nlohmann::json& r : rows) {
      any = any || (RowString(r, "solver") == s && !RowParam(r, kCrossbarsKey).empty() &&
                    std::isfinite(RowNumber(r, "speedup")));
    }
    if (any) base_solvers.push_back(s);
  }
  if (base_solvers.size() > 1) {
    draft.blocks.push_back(Heading("Baselines side by side on the CIM platforms"));
    draft.blocks.push_back(Para(
        "Every baseline of docs/baselines.md, priced with the same costs, list-scheduled and validated, beside the "
        "exact ILP, at the paper's default point (100 crossbars, 50 ns) when present. The ILP is never worse than "
        "any of them (it is exact; a time-limited ILP still starts from the best heuristic)."));
    for (const std::string& p : klein_platforms) {
      std::vector<std::string> params = {std::string(kCrossbarsKey) + "=100", std::string(kMvmLatencyKey) + "=50"};
      bool has_default = false;
      for (const nlohmann::json& r : rows) {
        has_default = has_default || (RowString(r, "platform") == p && RowParam(r, kCrossbarsKey) == "100" &&
                                      RowParam(r, kMvmLatencyKey) == "50");
      }
      if (!has_default) params.clear();
      if (draft.draw_figures) {
        HETPLAN_RETURN_IF_ERROR(draft.AddFigure(
            PlotSolversSideBySide(rows, p, "latency", params, base_solvers, "speedup", "Speedup over CPU-only",
                                  "baselines_" + std::filesystem::path(p).stem().string(), draft.out_dir),
            "baselines " + p));
      }
      std::vector<std::vector<std::string>> table;
      for (const std::string& m : models) {
        std::vector<std::string> row = {ModelLabel(m)};
        bool any = false;
        for (const std::string& s : base_solvers) {
          std::string cell = "—";
          for (const nlohmann::json& r : rows) {
            if (RowString(r, "platform") != p || RowString(r, "model") != m || RowString(r, "solver") != s ||
                RowString(r, "objective") != "latency") {
              continue;
            }
            if (!params.empty() && (RowParam(r, kCrossbarsKey) != "100" || RowParam(r, kMvmLatencyKey) != "50")) {
              continue;
            }
            if (RowString(r, "status") == "not_applicable") {
              cell = "n/a";
            } else if (std::isfinite(RowNumber(r, "speedup"))) {
              cell = Times(RowNumber(r, "speedup"));
              any = true;
            }
          }
          row.push_back(cell);
        }
        if (any) table.push_back(row);
      }
      std::vector<std::string> header = {"model"};
      for (const std::string& s : base_solvers) header.push_back(s + " (measured here)");
      draft.blocks.push_back(
          Table(fmt::format("Speedup over CPU-only on {}{}; n/a: the rule does not apply (reason in the "
                            "results file).",
                            p, params.empty() ? "" : " at 100 crossbars, 50 ns"),
                header, table));
    }
  }
  return Status::Ok();
}

// BIDENT-style Table II: platforms with energy rows.
Status AddBidentSections(const std::vector<nlohmann::json>& rows, const std::vector<std::string>& models,
                         ReportDraft& draft) {
  std::vector<std::string> soc_platforms;
  for (const nlohmann::json& r : rows) {
    if (RowString(r, "objective") == "energy" && std::isfinite(RowNumber(r, "energy_uj"))) {
      AddUnique(soc_platforms, RowString(r, "platform"));
    }
  }
  if (!soc_platforms.empty()) {
    draft.blocks.push_back(
        Heading("BIDENT-style comparison: speedup and energy over the best single PU (BIDENT Table II)"));
    for (const std::string& p : soc_platforms) {
      std::vector<std::string> ss;
      for (const nlohmann::json& r : rows) {
        if (RowString(r, "platform") == p && std::isfinite(RowNumber(r, "makespan_us")) && !IsPairRow(r)) {
          AddUnique(ss, RowString(r, "solver"));
        }
      }
      std::vector<std::vector<std::string>> table;
      std::map<std::string, std::vector<double>> speedups;
      std::map<std::string, std::vector<double>> savings;
      for (const std::string& s : ss) {
        for (const std::string& m : models) {
          const nlohmann::json* lat = nullptr;
          const nlohmann::json* en = nullptr;
          for (const nlohmann::json& r : rows) {
            if (RowString(r, "platform") != p || RowString(r, "model") != m || RowString(r, "solver") != s) continue;
            if (!std::isfinite(RowNumber(r, "makespan_us"))) continue;
            (RowString(r, "objective") == "energy" ? en : lat) = &r;
          }
          if (!lat && !en) continue;
          const double sp = lat ? RowNumber(*lat, "speedup_vs_best_single") : std::nan("");
          const double sv = en ? RowNumber(*en, "energy_saving_vs_best_single") : std::nan("");
          if (std::isfinite(sp)) speedups[s].push_back(sp);
          if (std::isfinite(sv)) savings[s].push_back(sv);
          table.push_back(
              {s, ModelLabel(m), Times(sp), Percent(sv), lat ? RowString(*lat, "status") : std::string("—")});
        }
      }
      std::vector<std::vector<std::string>> summary;
      for (const std::string& s : ss) {
        double mean_saving = std::nan("");
        if (!savings[s].empty()) {
          mean_saving = 0;
          for (double v : savings[s]) mean_saving += v;
          mean_saving /= static_cast<double>(savings[s].size());
        }
        const PaperSolver* pp = FindPaper(kPaperTable2, s);
        summary.push_back({s, Times(GeoMean(speedups[s])), Percent(mean_saving),
                           pp == nullptr ? "—" : pp->speedup,
                           pp == nullptr ? "—" : pp->energy_saving});
      }
      const std::string basis = BasisLabel(rows, p);
      draft.blocks.push_back(Table(
          fmt::format("{}: geometric-mean speedup over the fastest single PU (latency objective) and mean energy "
                      "saving over the lowest-energy single PU (energy objective), over this report's models; "
                      "BIDENT's published values (Intel Core Ultra, 19 model configurations, §IV-B to §IV-D) beside "
                      "them. 'map' is BIDENT's sequential mapper, 'map_parallel' its phase-wise parallel heuristic.{}",
                      p,
                      basis == "measured here"
                          ? std::string()
                          : " Every PU of this platform has analytical costs (no measurement): these numbers show "
                            "what the methods do on the platform's stated figures, not how a real SoC behaves."),
          {"solver", fmt::format("speedup vs best single PU ({})", basis), fmt::format("energy saving ({})", basis),
           "speedup (paper)", "energy saving (paper)"},
          summary));
      draft.blocks.push_back(Table(fmt::format("{}: per model ({}).", p, basis),
                                   {"solver", "model", "speedup vs best single PU (latency objective)",
                                    "energy saving vs lowest-energy single PU (energy objective)", "status"},
                                   table));
      if (draft.draw_figures) {
        std::vector<std::string> fig_solvers;
        for (const std::string& s : ss) {
          if (s.rfind("single:", 0) != 0) fig_solvers.push_back(s);
        }
        HETPLAN_RETURN_IF_ERROR(draft.AddFigure(
            PlotSolversSideBySide(rows, p, "latency", {}, fig_solvers, "speedup_vs_best_single",
                                  "Speedup over the best single PU",
                                  "bident_speedup_" + std::filesystem::path(p).stem().string(), draft.out_dir),
            "BIDENT speedup " + p));
        HETPLAN_RETURN_IF_ERROR(draft.AddFigure(
            PlotSolversSideBySide(rows, p, "energy", {}, fig_solvers, "energy_saving_vs_best_single",
                                  "Energy saving over the lowest-energy single PU",
                                  "bident_energy_" + std::filesystem::path(p).stem().string(), draft.out_dir),
            "BIDENT energy " + p));
      }
    }
    ConcurrentSection(rows, models, soc_platforms, draft.blocks);
  } else {
    draft.skipped.push_back("BIDENT-style table: no rows with the energy objective and a platform with power_w");
  }
  return PairStudySection(rows, draft);
}

}  // namespace hetplan::report_internal
