#include "hetplan/cost/build.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "hetplan/cost/cim_model.h"
#include "hetplan/graph/dtype.h"

namespace hetplan {
namespace {

// Bytes of `tensors` over a link: the link's element size when it fixes one,
// else each tensor's own.
double LinkBytes(const std::vector<TensorInfo>& tensors, const Link& link) {
  double bytes = 0;
  for (const TensorInfo& t : tensors) {
    bytes += link.element_bytes ? static_cast<double>(t.elements) * static_cast<double>(*link.element_bytes)
                                : static_cast<double>(t.bytes());
  }
  return bytes;
}

bool IsFloating(const std::string& d) { return IsFloatingDtype(DtypeFromName(d)); }
// The integer types of quantized arithmetic (8, 4 and 16 bits).
bool IsQuantizedInteger(const std::string& d) {
  return d == "int8" || d == "uint8" || d == "int4" || d == "uint4" || d == "int16" || d == "uint16";
}

}  // namespace

std::string RooflineComputeDtype(const Operator& op) {
  const std::string in = op.inputs.empty() ? std::string() : op.inputs[0].dtype;
  // ConvInteger, MatMulInteger, QLinearConv, ...: int32 out, 8-bit arithmetic.
  if (!op.matrix_op.empty() && IsQuantizedInteger(in)) return in;
  if (IsFloating(op.dtype) || IsQuantizedInteger(op.dtype)) return op.dtype;
  // ArgMax, Equal, ...: an index or boolean out of their inputs' arithmetic.
  if (IsFloating(in) || IsQuantizedInteger(in)) return in;
  return op.dtype;
}

std::optional<double> RooflineLatencyUs(const Operator& op, const RooflineParams& r) {
  const std::string dtype = RooflineComputeDtype(op);
  auto peak = r.peak_gflops.find(dtype);
  // Unsigned 8/4-bit activations (torch's and ONNX Runtime's quantizers) run the signed kernels' peak.
  if (peak == r.peak_gflops.end() && (dtype == "uint8" || dtype == "uint4" || dtype == "uint16")) {
    peak = r.peak_gflops.find(dtype.substr(1));
  }
  // Index and shape arithmetic (int64, int32, bool) is priced as float32 work;
  // a floating or quantized type without a peak is one the PU does not run.
  if (peak == r.peak_gflops.end() && !IsFloating(dtype) && !IsQuantizedInteger(dtype)) {
    peak = r.peak_gflops.find("float32");
  }
  if (peak == r.peak_gflops.end() || peak->second <= 0) return std::nullopt;
  // Matrix operators: 2 flops per MAC; elementwise and the rest: one per output element.
  double flops = op.macs > 0 ? 2.0 * static_cast<double>(op.macs) : static_cast<double>(op.output_elements);
  double bytes = static_cast<double>(op.param_bytes);
  for (const auto& t : op.inputs) bytes += static_cast<double>(t.bytes());
  for (const auto& t : op.outputs) bytes += static_cast<double>(t.bytes());
  double compute_us = flops / (peak->second * 1e3);  // GFLOP/s = 1e3 flop/µs
  double memory_us = r.memory_bandwidth_gbps > 0 ? bytes / (r.memory_bandwidth_gbps * 1e3) : 0.0;
  double eff = 1.0;
  if (auto it = r.efficiency.find(op.type); it != r.efficiency.end()) eff = it->second;
  else if (auto m = r.efficiency.find(op.matrix_op); !op.matrix_op.empty() && m != r.efficiency.end()) eff = m->second;
  else if (auto d = r.efficiency.find("default"); d != r.efficiency.end()) eff = d->second;
  return r.dispatch_us + std::max(compute_us, memory_us) / eff;
}

namespace {

// What the cost tables give beyond the latencies, gathered while they are
// read and used when the copies and transfers are priced.
struct TableCosts {
  TableCosts(int n, int k)
      : h2d(static_cast<size_t>(n) * k, 0.0), d2h(static_cast<size_t>(n) * k, 0.0),
        from_table(static_cast<size_t>(n) * k, 0) {}
  // h2d/d2h per (op, PU) from tables, for links that do not exist.
  std::vector<double> h2d, d2h;
  std::vector<char> from_table;
  // Co-execution rows of every table, each once (one table may serve several PUs).
  std::vector<CoExecution> coexec;
  std::set<std::tuple<std::string, std::string, std::string, std::string, double>> seen_coexec;
  // Measured hand-offs between PUs (the co-run profiler's transfer rows), each once.
  CostTable handoffs;
  std::set<std::tuple<std::string, std::string, double>> seen_handoffs;
};

// The planner's view of each PU: its kind, capacity, power and where its costs come from.
std::vector<PuInfo> MakePuInfos(const Platform& platform) {
  std::vector<PuInfo> pus;
  for (const ProcessingUnit& pu : platform.pus) {
    PuInfo info;
    info.name = pu.name;
    info.kind = pu.kind;
    info.spatial = pu.execution == Execution::kSpatial;
    info.capacity = info.spatial ? pu.cim.crossbars : -1;
    // A serial CIM runs one operator at a time: nothing to share.
    if (info.spatial && pu.cim.shared_adcs) info.adc_pool = *pu.cim.shared_adcs;
    if (pu.kind == PuKind::kCim && pu.cim.reprogram) {
      info.reprogram = true;
      info.write_ns_per_row = pu.cim.write_ns_per_row;
      info.write_energy_pj_per_row = pu.cim.write_energy_pj_per_row;
      info.endurance_writes = pu.cim.endurance_writes;
      info.lifetime_inferences = pu.cim.lifetime_inferences;
    }
    info.power_w = pu.power_w;
    // A CIM whose circuit prices each MVM: its power_w is what it draws
    // beyond those energies while busy (absent: nothing).
    if (pu.kind == PuKind::kCim && pu.cim.circuit.given() && pu.cim.circuit.HasEnergy() && !info.power_w) {
      info.power_w = 0.0;
    }
    switch (pu.cost_source) {
      case CostSource::kProfile: info.cost_label = "measured"; break;
      case CostSource::kCim:
      case CostSource::kRoofline: info.cost_label = "analytical"; break;
      case CostSource::kTable: info.cost_label = "table"; break;
    }
    pus.push_back(std::move(info));
  }
  return pus;
}

// Sets the latencies (and crossbars) of PU `p` when its costs are analytical
// (CIM, roofline); false when they come from a cost table.
bool SetAnalyticalCosts(const OpGraph& g, const ProcessingUnit& pu, int p, CostModel* c) {
  if (pu.cost_source == CostSource::kCim) {
    for (const Operator& op : g.operators()) {
      if (!CimSupports(op, pu.cim)) continue;
      c->set_latency(op.id, p, CimLatencyUs(op, pu.cim));
      c->set_crossbars(op.id, p, CimCrossbars(op, pu.cim));
      const int64_t mvms = CimMvmCount(op, pu.cim);
      c->set_mvms(op.id, p, mvms, static_cast<double>(mvms) * pu.cim.MvmLatencyNs(CimCrossbars(op, pu.cim)) * 1e-3);
      if (c->pu(p).adc_pool > 0) c->set_adcs(op.id, p, pu.cim.AdcDemand(CimCrossbars(op, pu.cim)));
      if (pu.cim.reprogram) {
        const CimWrite w = CimOperatorWrite(op, pu.cim);
        c->set_write(op.id, p, {w.rows, w.rows_written, w.write_us, w.energy_pj * 1e-6});
      }
      if (pu.cim.circuit.given() && pu.cim.circuit.HasEnergy()) {
        c->set_op_energy(op.id, p, CimOperatorEnergy(op, pu.cim).total_pj() * 1e-6);
      }
    }
    return true;
  }
  if (pu.cost_source == CostSource::kRoofline) {
    for (const Operator& op : g.operators()) {
      if (auto us = RooflineLatencyUs(op, pu.roofline)) c->set_latency(op.id, p, *us);
    }
    return true;
  }
  return false;
}

// Reads the cost table of table-costed PU `p`: its latencies, crossbars,
// label and power into `c`, its copies, co-execution rows and hand-offs into
// `tables`, its slowdowns into `c`.
Status AddTableCosts(const OpGraph& g, const Platform& platform, const CostSources& sources,
                     const std::map<std::string, int>& op_by_name, int p, CostModel* c, TableCosts* tables) {
  const int k = static_cast<int>(platform.pus.size());
  const ProcessingUnit& pu = platform.pus[p];
  auto it = sources.tables.find(pu.name);
  if (it == sources.tables.end()) {
    return Error(ErrorCode::kInvalidArgument,
                 "{}: PU '{}' takes its costs from {} but no cost table was given for it; {}", platform.source,
                 pu.name, ToString(pu.cost_source),
                 pu.cost_source == CostSource::kProfile ? "run `hetplan profile` or let the command profile it"
                                                        : "pass --costs TABLE.csv");
  }
  const CostTable& t = it->second;
  if (pu.cost_source == CostSource::kTable && t.meta.count("source")) {
    c->mutable_pu(p).cost_label = t.meta.at("source");
  }
  if (!c->pu(p).power_w) {
    if (auto pw = t.power_w.find(pu.name); pw != t.power_w.end()) c->mutable_pu(p).power_w = pw->second;
  }
  for (const OpCost& row : t.ops) {
    if (row.pu != pu.name) continue;
    auto op = op_by_name.find(row.op_name);
    if (op == op_by_name.end()) continue;  // CheckCostTable reports unknown operators
    c->set_latency(op->second, p, row.PlannedUs());
    if (row.energy_uj) {
      c->set_op_energy(op->second, p, *row.energy_uj);
      // A PU priced by its operators' energies draws nothing more unless its power says so.
      if (!c->pu(p).power_w) c->mutable_pu(p).power_w = 0.0;
    }
    // A CIM PU's table (a simulator's per-layer results) keeps the crossbar
    // budget (eq. 14): the table's crossbars, else eq. 1 from the PU's
    // crossbar geometry; never 0 for an operator with weights.
    if (c->pu(p).spatial) {
      const Operator& o = g.op(op->second);
      c->set_crossbars(op->second, p, row.crossbars.value_or(o.has_weight ? CimCrossbars(o, pu.cim) : 0));
    }
    tables->h2d[static_cast<size_t>(op->second) * k + p] = row.h2d_us;
    tables->d2h[static_cast<size_t>(op->second) * k + p] = row.d2h_us;
    tables->from_table[static_cast<size_t>(op->second) * k + p] = 1;
  }
  for (const CoExecution& row : t.coexec) {
    if (tables->seen_coexec.emplace(row.op_a, row.pu_a, row.op_b, row.pu_b, row.makespan_us).second) {
      tables->coexec.push_back(row);
    }
  }
  for (const TransferCost& x : t.transfers) {
    if (tables->seen_handoffs.emplace(x.from_pu, x.to_pu, x.bytes).second) tables->handoffs.transfers.push_back(x);
  }
  for (const Slowdown& s : t.slowdowns) {
    int run = platform.FindPu(s.run_pu), other = platform.FindPu(s.interfere_pu);
    if (run >= 0 && other >= 0) c->set_slowdown(run, other, s.factor);
  }
  return Status::Ok();
}

// BIDENT's per-operator copies on each accelerator: the table's columns,
// else the link to the host (the first CPU) applied to the operator's input
// and output bytes; 0 when neither exists.
void SetAcceleratorCopies(const OpGraph& g, const Platform& platform, const std::vector<PuInfo>& pus,
                          const TableCosts& tables, CostModel* c) {
  const int n = g.size();
  const int k = static_cast<int>(pus.size());
  auto is_accelerator = [&](int p) { return c->pu(p).accelerator(); };
  int host = -1;
  for (int p = 0; p < k && host < 0; ++p) {
    if (!is_accelerator(p)) host = p;
  }
  for (int p = 0; p < k; ++p) {
    if (!is_accelerator(p)) continue;
    const Link* link = host >= 0 ? platform.FindLink(pus[p].name, pus[host].name) : nullptr;
    const bool by_link = link != nullptr && link->bandwidth_gbps > 0;
    for (int v = 0; v < n; ++v) {
      const size_t i = static_cast<size_t>(v) * k + p;
      if (tables.from_table[i]) {
        c->set_h2d(v, p, tables.h2d[i]);
        c->set_d2h(v, p, tables.d2h[i]);
      } else if (by_link) {
        c->set_h2d(v, p, TransferUs(LinkBytes(g.op(v).inputs, *link), *link));
        c->set_d2h(v, p, TransferUs(LinkBytes(g.op(v).outputs, *link), *link));
      }
    }
  }
}

// The time of every edge between every two PUs: over their link, else a
// measured hand-off, else the per-operator copies of the accelerator ends.
void SetEdgeTransfers(const OpGraph& g, const Platform& platform, const TableCosts& tables, CostModel* c) {
  const int k = static_cast<int>(platform.pus.size());
  auto is_accelerator = [&](int p) { return c->pu(p).accelerator(); };
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const Edge& edge = g.edges()[e];
    for (int p = 0; p < k; ++p) {
      for (int q = 0; q < k; ++q) {
        if (p == q) continue;
        const Link* link = platform.FindLink(platform.pus[p].name, platform.pus[q].name);
        double us = 0;
        if (link) {
          // The tensors' own bytes (edge.bytes counts each at its dtype)
          // unless the link or a CIM end fixes the element size.
          std::optional<int64_t> b = link->element_bytes;
          if (!b && platform.pus[p].kind == PuKind::kCim) b = platform.pus[p].cim.element_bytes;
          if (!b && platform.pus[q].kind == PuKind::kCim) b = platform.pus[q].cim.element_bytes;
          const double bytes = b ? static_cast<double>(edge.elements) * static_cast<double>(*b)
                                 : static_cast<double>(edge.bytes);
          us = TransferUs(bytes, *link);
        } else if (auto measured = InterpolateTransferUs(tables.handoffs, platform.pus[p].name,
                                                         platform.pus[q].name, static_cast<double>(edge.bytes))) {
          us = *measured;  // a measured hand-off between the two PUs replaces per-operator copies
        } else {
          if (is_accelerator(p)) us += tables.d2h[static_cast<size_t>(edge.from) * k + p];
          if (is_accelerator(q)) us += tables.h2d[static_cast<size_t>(edge.to) * k + q];
        }
        c->set_transfer(e, p, q, us);
      }
    }
  }
}

// --boundary-cost fitted: charges every table-costed PU the boundary its
// table measured; a table without one is an error.
Status ChargeBoundaries(const Platform& platform, const CostSources& sources, CostModel* c) {
  const int k = static_cast<int>(platform.pus.size());
  for (int p = 0; p < k; ++p) {
    const ProcessingUnit& pu = platform.pus[p];
    if (!TableCosted(pu)) continue;
    const CostTable& t = sources.tables.at(pu.name);  // present: checked by AddTableCosts
    auto b = t.boundary_us.find(pu.name);
    if (b == t.boundary_us.end()) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: PU '{}': --boundary-cost fitted, but its cost table has no boundary row for it; profile "
                   "it again with --boundary-runs > 0 (or --no-cache), add a row kind=boundary "
                   "(docs/cost-table-format.md), or plan with --boundary-cost none",
                   platform.source, pu.name);
    }
    c->ChargeBoundary(p, b->second);
  }
  return Status::Ok();
}

}  // namespace

Result<CostModel> BuildCostModel(const OpGraph& g, const Platform& platform, const CostSources& sources) {
  std::vector<PuInfo> pus = MakePuInfos(platform);
  const int n = g.size();
  const int k = static_cast<int>(pus.size());
  CostModel c(n, pus, static_cast<int>(g.edges().size()));
  std::map<std::string, int> op_by_name;
  for (const Operator& op : g.operators()) op_by_name[op.name] = op.id;
  TableCosts tables(n, k);
  for (int p = 0; p < k; ++p) {
    if (SetAnalyticalCosts(g, platform.pus[p], p, &c)) continue;
    HETPLAN_RETURN_IF_ERROR(AddTableCosts(g, platform, sources, op_by_name, p, &c, &tables));
  }
  SetAcceleratorCopies(g, platform, pus, tables, &c);
  c.set_coexec(std::move(tables.coexec));
  SetEdgeTransfers(g, platform, tables, &c);
  if (sources.charge_boundary) HETPLAN_RETURN_IF_ERROR(ChargeBoundaries(platform, sources, &c));
  return c;
}

}  // namespace hetplan
