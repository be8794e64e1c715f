// Builds the solver-facing CostModel from a graph, a platform and the cost
// sources each PU names: measured tables (ONNX Runtime), the analytical CIM
// model, user tables, or the analytical roofline.
#pragma once

#include <map>
#include <string>

#include "hetplan/cost/cost_model.h"
#include "hetplan/cost/cost_table.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/platform/platform.h"

namespace hetplan {

struct CostSources {
  // Per PU name: a table (measured by the profiler for `profile` PUs, or a
  // user table given with --costs / the PU's `table:` key).
  std::map<std::string, CostTable> tables;
  // Charge each measured or table PU's fitted boundary cost (its table's
  // boundary row; CostModel::ChargeBoundary). A PU whose table has none is
  // an error; cim and roofline PUs have none (0: they are modelled).
  bool charge_boundary = false;
};

// Whether p's costs come from a cost table: profiled on this machine
// (`cost: profile`) or given (`cost: table`). These PUs carry a fitted
// boundary cost and are what --refine recalibrates; cim and roofline PUs are
// modelled.
inline bool TableCosted(const ProcessingUnit& pu) {
  return pu.cost_source == CostSource::kProfile || pu.cost_source == CostSource::kTable;
}

// Transfer on edge e between PUs p ≠ q:
//  - a link between them: latency_us + bytes / bandwidth, the bytes being
//    the edge's tensors at their own element sizes (b_elem of eq. 4: 1 for
//    the int8/uint8 tensors of a quantized model), unless the link or the
//    CIM end sets element_bytes for every element;
//  - no link: the table's d2h of the producer (when p is an accelerator) plus
//    h2d of the consumer (when q is an accelerator): BIDENT's shared-memory SoC.
Result<CostModel> BuildCostModel(const OpGraph& g, const Platform& platform, const CostSources& sources);

// The element type an operator's arithmetic runs in: the 8-bit (4-, 16-bit)
// input type of an integer matrix operator (ConvInteger, MatMulInteger,
// QLinearConv, ...: int32 or uint8 out), its output type for floating and
// quantized outputs, else its first input's floating or quantized type
// (ArgMax, Equal), else its output type (index and shape arithmetic).
std::string RooflineComputeDtype(const Operator& op);

// The roofline cost of `op` on `pu` (cost: roofline): dispatch +
// max(flops / peak, bytes / bandwidth) / efficiency, the peak of
// RooflineComputeDtype (uint8 → int8's when uint8 has none), the efficiency of
// the op type, else of its float matrix operator (Conv for ConvInteger), else
// `default`. nullopt when the PU has no peak for a floating or quantized
// compute type: it does not run the operator. Index and shape arithmetic
// (int64, int32, bool) without a peak of its own is priced at float32's.
std::optional<double> RooflineLatencyUs(const Operator& op, const RooflineParams& r);

}  // namespace hetplan
