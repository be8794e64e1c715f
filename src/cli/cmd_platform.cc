// `hetplan platform show NAME [--set PU.KEY=V ...] [--json]`: a platform as
// hetplan reads it, every PU with the quantities derived from its keys (for a
// CIM PU: the cells a weight takes, where they go, the crossbar budget and
// the MVM latency and where it comes from), and its links.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "hetplan/cost/cim_model.h"
#include "hetplan/platform/platform.h"

namespace hetplan::cli {
namespace {

// Where T_mvm comes from, in words.
std::string MvmLatencySource(const CimParams& c) {
  const CimCircuit& k = c.circuit;
  const std::string circuit =
      k.given() ? fmt::format("{} input cycles ({}-bit inputs, {}-bit DACs) x {:g} ns (the longer of the array read, "
                              "{:g} ns, and {} conversions of {:g} ns) + {:g} ns",
                              k.InputCycles(), k.input_bits, k.dac_bits, k.CycleNs(), k.array_read_ns,
                              k.columns_per_adc, k.adc_conversion_ns, k.mvm_overhead_ns)
                : std::string();
  if (c.mvm_latency_ns) {
    return k.given() ? fmt::format("mvm_latency_ns (fixed; the circuit would give {:g} ns: {})", k.MvmLatencyNs(),
                                   circuit)
                     : std::string("mvm_latency_ns (fixed, the paper's mode)");
  }
  return k.given() ? "the circuit: " + circuit : fmt::format("the default {:g} ns (fixed)", kDefaultMvmLatencyNs);
}

// The energy of one MVM through one whole crossbar (every row and column
// used), by component, in pJ; null without the circuit's energies.
nlohmann::json CrossbarMvmEnergy(const CimParams& c) {
  if (!c.circuit.given() || !c.circuit.HasEnergy()) return nullptr;
  Operator op;  // a weight matrix that fills one crossbar exactly, one MVM, no loads
  op.has_weight = true;
  op.n_mvm = 1;
  op.weight_rows = c.crossbar_rows;
  op.weight_cols = std::max<int64_t>(c.crossbar_cols / c.CellsPerWeight(), 1);
  CimParams one = c;
  one.slice_mapping = SliceMapping::kColumns;
  const CimEnergy e = CimOperatorEnergy(op, one);
  return {{"adc", e.adc_pj}, {"dac", e.dac_pj}, {"array", e.array_pj}, {"shift_add", e.shift_add_pj},
          {"total", e.total_pj()}};
}

// What a CIM PU's keys come to.
nlohmann::json CimDerived(const CimParams& c) {
  return {{"cells_per_weight", c.CellsPerWeight()},
          {"weight_layout", c.bits_per_cell ? fmt::format("{}-bit weights in {}-bit cells{}, {} in {}", c.weight_bits,
                                                          *c.bits_per_cell,
                                                          c.signed_weights == SignedWeights::kDifferential
                                                              ? ", differential pairs"
                                                              : "",
                                                          c.CellsPerWeight() == 1 ? "one cell" : "the cells",
                                                          c.slice_mapping == SliceMapping::kColumns
                                                              ? "adjacent columns"
                                                              : "crossbars of their own")
                                            : std::string("one cell holds a whole weight (the CIM paper's eq. 1)")},
          {"crossbar_cells", c.crossbar_rows * c.crossbar_cols},
          {"budget_cells", c.crossbars * c.crossbar_rows * c.crossbar_cols},
          {"mvm_latency_ns", c.MvmLatencyNs()},
          {"mvm_latency_source", MvmLatencySource(c)},
          {"crossbar_mvm_energy_pj", CrossbarMvmEnergy(c)},
          {"shared_adcs", c.shared_adcs ? nlohmann::json(*c.shared_adcs) : nlohmann::json(nullptr)},
          {"adcs_per_crossbar", (c.crossbar_cols + c.circuit.columns_per_adc - 1) / c.circuit.columns_per_adc}};
}

void PrintPu(const ProcessingUnit& pu) {
  std::printf("pu        %-6s kind %s, %s, cost %s%s\n", pu.name.c_str(), ToString(pu.kind).c_str(),
              ToString(pu.execution).c_str(), ToString(pu.cost_source).c_str(),
              pu.power_w ? fmt::format(", {:g} W", *pu.power_w).c_str() : "");
  if (pu.kind == PuKind::kCim) {
    const CimParams& c = pu.cim;
    const nlohmann::json d = CimDerived(c);
    std::printf("          crossbars %lld of %lldx%lld (%lld cells in all); %s (%lld cell%s a weight)\n",
                static_cast<long long>(c.crossbars), static_cast<long long>(c.crossbar_rows),
                static_cast<long long>(c.crossbar_cols), static_cast<long long>(d["budget_cells"].get<int64_t>()),
                d["weight_layout"].get<std::string>().c_str(), static_cast<long long>(c.CellsPerWeight()),
                c.CellsPerWeight() == 1 ? "" : "s");
    std::printf("          T_mvm %g ns: %s; internal bandwidth %g GB/s\n", c.MvmLatencyNs(),
                MvmLatencySource(c).c_str(), c.bandwidth_gbps);
    if (c.shared_adcs) {
      std::printf("          ADCs: a pool of %lld shared by the operators running at once; a crossbar's columns "
                  "take %lld of them\n",
                  static_cast<long long>(*c.shared_adcs), static_cast<long long>(d["adcs_per_crossbar"].get<int64_t>()));
    }
    if (c.reprogram) {
      std::printf("          reprograms: %g ns a row%s; %g writes a cell over %g inferences (%g writes a cell an "
                  "inference)\n",
                  c.write_ns_per_row,
                  c.write_energy_pj_per_row ? fmt::format(", {:g} pJ a row", *c.write_energy_pj_per_row).c_str() : "",
                  c.endurance_writes, c.lifetime_inferences, c.endurance_writes / c.lifetime_inferences);
    }
    if (const nlohmann::json& e = d["crossbar_mvm_energy_pj"]; !e.is_null()) {
      std::printf("          one MVM through a full crossbar: %g pJ (ADC %g, DAC %g, array %g, shift-add %g)\n",
                  e["total"].get<double>(), e["adc"].get<double>(), e["dac"].get<double>(), e["array"].get<double>(),
                  e["shift_add"].get<double>());
    }
  }
  if (pu.cost_source == CostSource::kRoofline) {
    std::string peaks;
    for (const auto& [dtype, gflops] : pu.roofline.peak_gflops) peaks += fmt::format(" {} {:g}", dtype, gflops);
    std::printf("          peak GFLOP/s%s; memory %g GB/s; dispatch %g µs\n", peaks.c_str(),
                pu.roofline.memory_bandwidth_gbps, pu.roofline.dispatch_us);
  }
  if (pu.cost_source == CostSource::kTable) std::printf("          table %s\n", pu.table.c_str());
}

void PrintLayers(const nlohmann::json& pus) {
  for (const auto& [name, u] : pus.items()) {
    std::printf("%s: T_mvm %g ns; operators it can run, as it holds them\n", name.c_str(),
                u["mvm_latency_ns"].get<double>());
    std::printf("  %4s  %-28s %-8s %15s %16s %9s %9s %11s %12s\n", "id", "operator", "type", "rows x cols",
                "tiles r x c x k", "crossbars", "MVMs", "T_acc µs", "energy µJ");
    for (const auto& r : u["operators"]) {
      const std::string energy =
          r.contains("energy_pj") ? fmt::format("{:.4g}", r["energy_pj"]["total"].get<double>() * 1e-6) : "-";
      // A shared pool's ADCs and a reprogramming PU's write, where the PU has them.
      std::string extra;
      if (r.contains("adcs")) extra += fmt::format("  adcs {}", r["adcs"].get<int64_t>());
      if (r.contains("write")) extra += fmt::format("  write {:.2f} µs", r["write"]["write_us"].get<double>());
      std::printf("  %4d  %-28.28s %-8.8s %15s %16s %9lld %9lld %11.2f %12s%s\n", r["id"].get<int>(),
                  r["name"].get<std::string>().c_str(), r["type"].get<std::string>().c_str(),
                  fmt::format("{} x {}", r["rows"].get<int64_t>(), r["cols"].get<int64_t>()).c_str(),
                  fmt::format("{} x {} x {}", r["row_tiles"].get<int64_t>(), r["col_tiles"].get<int64_t>(),
                              r["copies"].get<int64_t>())
                      .c_str(),
                  static_cast<long long>(r["crossbars"].get<int64_t>()),
                  static_cast<long long>(r["mvms"].get<int64_t>()), r["latency_us"].get<double>(), energy.c_str(),
                  extra.c_str());
    }
    std::printf("  total %lld crossbars (budget %lld), T_acc %.2f µs", static_cast<long long>(u["crossbars"].get<int64_t>()),
                static_cast<long long>(u["budget"].get<int64_t>()), u["latency_us"].get<double>());
    if (!u["energy_pj"].is_null()) {
      std::printf(", energy %.4g µJ (ADC %.1f %%)", u["energy_pj"].get<double>() * 1e-6,
                  100 * u["adc_share"].get<double>());
    }
    std::printf("\n");
  }
}

void RegisterLayers(CLI::App* platform) {
  auto* sub = platform->add_subcommand(
      "layers", "Each operator of a model as every CIM PU holds and runs it: cells, crossbars, MVMs, time, energy");
  struct Opts {
    std::string name;
    ModelOptions model;
    std::vector<std::string> sets;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("platform", o->name, "Preset name or YAML file")->required();
  AddModelOptions(sub, &o->model);
  sub->add_option("--set", o->sets, "Override a platform field, PU.KEY=VALUE (repeatable)");
  sub->add_flag("--json", o->json, "Print the rows and totals as JSON");
  Register(sub, [o]() -> int {
    auto p = LoadPlatform(o->name, o->sets);
    if (!p.ok()) return ReportError(p.status());
    if (std::none_of(p->pus.begin(), p->pus.end(), [](const ProcessingUnit& pu) { return pu.kind == PuKind::kCim; })) {
      return ReportError(Error(ErrorCode::kInvalidArgument, "{}: no PU of kind cim, so no layer to lay out; name a "
                                                            "platform with a CIM PU (klein-arm, puma, isaac, neurosim-rram)",
                               p->source));
    }
    auto model = LoadModel(o->model);
    if (!model.ok()) return ReportError(model.status());
    const nlohmann::json pus = CimLayersJson(*p, model->graph);
    if (o->json) {
      std::printf("%s\n", nlohmann::json{{"platform", p->name}, {"model", o->model.path}, {"pus", pus}}.dump(1).c_str());
      return 0;
    }
    std::printf("platform  %s (%s)\nmodel     %s (%d operators)\n", p->name.c_str(), p->source.c_str(),
                o->model.path.c_str(), model->graph.size());
    PrintLayers(pus);
    return 0;
  });
}

}  // namespace

void RegisterPlatform(CLI::App& app) {
  auto* platform = app.add_subcommand("platform", "Show a platform as hetplan reads it");
  platform->require_subcommand(1);
  RegisterLayers(platform);
  auto* sub = platform->add_subcommand(
      "show", "Print every PU of a platform (preset or YAML) with the quantities its keys derive");
  struct Opts {
    std::string name;
    std::vector<std::string> sets;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("platform", o->name, "Preset name or YAML file")->required();
  sub->add_option("--set", o->sets, "Override a platform field, PU.KEY=VALUE (repeatable)");
  sub->add_flag("--json", o->json, "Print the platform and its derived quantities as JSON");
  Register(sub, [o]() -> int {
    auto p = LoadPlatform(o->name, o->sets);
    if (!p.ok()) return ReportError(p.status());
    if (o->json) {
      nlohmann::json j = PlatformToJson(*p);
      for (const ProcessingUnit& pu : p->pus) {
        if (pu.kind == PuKind::kCim) j[pu.name]["derived"] = CimDerived(pu.cim);
      }
      std::printf("%s\n", j.dump(1).c_str());
      return 0;
    }
    std::printf("platform  %s (%s)%s\n", p->name.c_str(), p->source.c_str(),
                p->description.empty() ? "" : (": " + p->description).c_str());
    for (const ProcessingUnit& pu : p->pus) PrintPu(pu);
    for (const Link& l : p->links) {
      std::printf("link      %s <-> %s: %g GB/s, %g µs\n", l.a.c_str(), l.b.c_str(), l.bandwidth_gbps, l.latency_us);
    }
    return 0;
  });
}

}  // namespace hetplan::cli
