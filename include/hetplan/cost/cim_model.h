// The analytical CIM accelerator and transfer models of Klein et al.,
// section IV-A (eqs. 1-4). Pure functions of an Operator's matrix view and
// the platform parameters; docs/platform-format.md ("Analytical models")
// states every convention. Units: bandwidths in GB/s = 10^9 bytes/s, latencies
// in µs, T_mvm in ns.
#pragma once

#include <cstdint>

#include "hetplan/graph/op_graph.h"
#include "hetplan/platform/platform.h"

namespace hetplan {

// True when the accelerator can run `op`: its type is in supported_ops and it
// has a constant weight matrix with positive dimensions (a MatMul of two
// activations is not supported: there is nothing to program into crossbars).
bool CimSupports(const Operator& op, const CimParams& p);

// Eq. 1: crossbars the operator's weights occupy,
// ceil(rows / crossbar_rows) * ceil(cols / crossbar_cols), where for
// groups <= 1 rows = N_v = op.weight_rows and cols = M_v = op.weight_cols.
// Grouped conv (groups > 1), op.weight_rows being one group's input length:
//  - kBlockDiagonal: the block-diagonal matrix, rows = weight_rows * groups,
//    cols = weight_cols, tiled once;
//  - kPerGroup: one group's matrix, rows = weight_rows,
//    cols = ceil(weight_cols / groups), tiled once and reused group after
//    group (see CimMvmCount).
// 0 for an operator without a weight. Saturates at INT64_MAX.
int64_t CimCrossbars(const Operator& op, const CimParams& p);

// N_mvm: op.n_mvm input vectors; kPerGroup runs them once per group, so
// n_mvm * groups. Saturates at INT64_MAX.
int64_t CimMvmCount(const Operator& op, const CimParams& p);

// N_in of eq. 3: op.input_elements, or with im2col_load the im2col'd input,
// op.n_mvm * op.weight_rows * max(op.groups, 1) (every input vector loaded,
// overlapping windows counted again), independent of the mapping.
int64_t CimLoadElements(const Operator& op, const CimParams& p);

// Eqs. 2-3: T_acc = b_elem*N_in/B_cim + N_mvm*T_mvm + b_elem*N_out/B_cim in
// µs, with N_out = op.output_elements. Independent of the crossbar count
// (the crossbars of one operator work in parallel).
double CimLatencyUs(const Operator& op, const CimParams& p);

// Eq. 4 plus a fixed latency: latency_us + elements*element_bytes/bandwidth.
// The caller picks element_bytes (cost/build.h: the link's when set, else
// the CIM end's, else the tensor's own). 0 for elements <= 0.
double TransferUs(int64_t elements, int64_t element_bytes, const Link& link);

}  // namespace hetplan
