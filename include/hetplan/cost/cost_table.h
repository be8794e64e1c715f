// Cost tables: what each operator costs on each processing unit, measured or
// given by a user. Written and read as CSV (docs/cost-table-format.md) and
// JSON. A table carries its provenance so that a cached table is never
// applied to another model, host or thread count.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/graph/op_graph.h"
#include "hetplan/util/status.h"

namespace hetplan {

struct OpCost {
  int op_id = -1;
  std::string op_name;   // the operator's main ONNX node name: the key
  std::string pu;        // PU name as in the platform
  double exec_us = 0;    // median execution time
  double dispatch_us = 0;
  double h2d_us = 0;     // host → device copy of the operator's inputs (accelerators)
  double d2h_us = 0;     // device → host copy of its outputs
  std::optional<double> p10_us, p90_us;
  std::optional<double> in_context_us;  // ORT profiler, kernel time inside the whole model
  // ORT's executor time around the operator's kernels inside the whole model
  // (the run's time outside kernels, an equal share per kernel).
  std::optional<double> framework_us;
  // CIM PUs: the crossbars the operator's weights occupy, as a simulator
  // maps them (NeuroSim, MNSIM, PUMA's per-layer results); unset: eq. 1 from
  // the PU's crossbar geometry. The crossbar budget counts them.
  std::optional<int64_t> crossbars;
  // The energy the operator spends on the PU beyond its power × time (µJ), as
  // a simulator reports it per layer (a CIM's conversions, reads, buffers);
  // every planner's energy, the schedule's op_energy_uj and its validator
  // count it.
  std::optional<double> energy_uj;
  // The time the planners charge for the operator: in context (kernels plus
  // their executor share) when the profiler measured it there, else exec_us;
  // dispatch_us on top. docs/cost-table-format.md, "Which time the planners use".
  double PlannedUs() const { return (in_context_us ? *in_context_us + framework_us.value_or(0) : exec_us) + dispatch_us; }
};

// SF(run, interfere): slowdown of `run` while `interfere` is busy (BIDENT).
struct Slowdown {
  std::string run_pu, interfere_pu;
  double factor = 1.0;
};

// Measured makespan of running two operators together (BIDENT co-execution).
struct CoExecution {
  std::string op_a, pu_a, op_b, pu_b;
  double makespan_us = 0;
};

// A measured hand-off between two PUs: a tensor of `bytes` written by an
// operator on `from_pu` and read by one on `to_pu`, in shared memory (zero
// copy): `us` is what the consumer pays beyond reading the tensor where it
// was written (waking on the other PU, reading another core's cache).
struct TransferCost {
  std::string from_pu, to_pu;
  double bytes = 0;
  double us = 0;  // median
  std::optional<double> p10_us, p90_us;
};

struct CostTable {
  // Provenance: source ("measured" | "synthetic" | "analytical" | "user"),
  // model_sha256, fusion, host, cpu, threads, runtime, created, …
  std::map<std::string, std::string> meta;
  std::vector<OpCost> ops;
  std::map<std::string, double> power_w;  // per PU
  // Per PU: what one more segment costs on it (Session::Run invocation, its
  // bindings, lost locality), fitted from split executions of the model.
  std::map<std::string, double> boundary_us;
  std::vector<Slowdown> slowdowns;
  std::vector<CoExecution> coexec;
  std::vector<TransferCost> transfers;
  // Whole-model measurement, when the profiler made one.
  std::optional<double> model_median_us, model_p10_us, model_p90_us;

  const OpCost* Find(const std::string& op_name, const std::string& pu) const;
};

// The hand-off time of a tensor of `bytes` from `from_pu` to `to_pu` from
// the table's transfer rows: linear between the measured sizes, the smallest
// size's time below it, the last two sizes' slope beyond the largest (never
// less than the largest size's time); nullopt without rows for the pair.
std::optional<double> InterpolateTransferUs(const CostTable& t, const std::string& from_pu, const std::string& to_pu,
                                            double bytes);

// CSV with a `kind` column (op | pu | slowdown | coexec); metadata in
// leading "# key=value" lines. Columns are read by header name.
std::string CostTableToCsv(const CostTable& t);
Result<CostTable> ParseCostTableCsv(std::string_view text, const std::string& label);
nlohmann::json CostTableToJson(const CostTable& t);
Result<CostTable> CostTableFromJson(const nlohmann::json& j, const std::string& label);
// Reads .csv or .json by extension.
Result<CostTable> LoadCostTable(const std::string& path);
Status SaveCostTable(const CostTable& t, const std::string& csv_path, const std::string& json_path);

// Checks a table against a graph: every op row names an operator of the
// graph (by name; op_id must agree when given), costs are finite and ≥ 0, no
// duplicate (op, pu) rows, every operator has a cost on at least one of
// `pus` (when given). Unsupported (op, PU) pairs are absent, never zero rows.
Status CheckCostTable(const CostTable& t, const OpGraph& g, const std::string& label);

// Checks that a table was made for the model whose file hash is
// `model_sha256`: a table whose meta model_sha256 names another model is
// refused (its operators may share names with this one's and still cost
// something else). A table without model_sha256 (written by hand) passes.
Status CheckProvenance(const CostTable& t, const std::string& model_sha256, const std::string& label);

}  // namespace hetplan
