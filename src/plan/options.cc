// Option enums' names and the validation of SolveOptions.
#include "hetplan/plan/options.h"

#include <fmt/format.h>

#include <cmath>

#include "hetplan/util/text.h"

namespace hetplan {

Result<TransferAccounting> ParseTransferAccounting(std::string_view text) {
  const std::string t = LowerAscii(text);
  if (t == "conservative") return TransferAccounting::kConservative;
  if (t == "neighbour" || t == "neighbor") return TransferAccounting::kNeighbour;
  return Error(ErrorCode::kInvalidArgument, "accounting '{}': unknown; use 'conservative' or 'neighbour'", text);
}

std::string ToString(TransferAccounting a) {
  return a == TransferAccounting::kConservative ? "conservative" : "neighbour";
}

Result<ChainAlgorithm> ParseChainAlgorithm(std::string_view text) {
  const std::string t = LowerAscii(text);
  if (t == "dp") return ChainAlgorithm::kDp;
  if (t == "dijkstra") return ChainAlgorithm::kDijkstra;
  return Error(ErrorCode::kInvalidArgument, "algorithm '{}': unknown; use 'dp' or 'dijkstra'", text);
}

std::string ToString(ChainAlgorithm a) { return a == ChainAlgorithm::kDp ? "dp" : "dijkstra"; }

std::string ToString(ConcurrentSpace s) { return s == ConcurrentSpace::kAligned ? "aligned" : "joint"; }

Status ValidateSolveOptions(const SolveOptions& o) {
  if (std::isnan(o.time_limit_s) || o.time_limit_s <= 0) {
    return Error(ErrorCode::kInvalidArgument, "time limit {} s: must be > 0 (use inf for no limit)", o.time_limit_s);
  }
  if (!std::isfinite(o.relative_gap) || o.relative_gap < 0) {
    return Error(ErrorCode::kInvalidArgument, "relative gap {}: must be a finite number ≥ 0 (e.g. 1e-4)",
                 o.relative_gap);
  }
  if (o.threads < 0) {
    return Error(ErrorCode::kInvalidArgument, "threads {}: must be ≥ 0 (0 = all cores)", o.threads);
  }
  if (o.exact.node_limit < 0) {
    return Error(ErrorCode::kInvalidArgument, "exact search node limit {}: must be ≥ 0 (0 = no limit)",
                 o.exact.node_limit);
  }
  if (o.baseline.hetero_max_pus < 1) {
    return Error(ErrorCode::kInvalidArgument, "hetero max PUs {}: must be ≥ 1", o.baseline.hetero_max_pus);
  }
  return Status::Ok();
}

std::vector<OptionInfo> SolveOptionTable() {
  const SolveOptions d;
  auto num = [](double x) { return fmt::format("{:g}", x); };
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  return {
      {"time_limit_s", "double", num(d.time_limit_s), "methods with a time limit (exact, mip)", "--time-limit",
       "wall-clock limit of the solve; at the limit the best schedule so far, status feasible"},
      {"relative_gap", "double", num(d.relative_gap), "exact, mip", "--gap",
       "stop when (objective − bound) / objective ≤ this; status optimal means within it"},
      {"threads", "int", std::to_string(d.threads), "mip (and the exact search's MIP fallback)", "--threads",
       "CBC threads, 0 = all cores; the search itself is repeatable for any count"},
      {"warm_start", "bool", yes(d.warm_start), "exact, mip", "--no-warm-start",
       "start from the best list-scheduled heuristic"},
      {"log", "bool", yes(d.log), "mip", "--solver-log", "the solver's log on stderr"},
      {"interrupt", "atomic flag", "none", "exact", "(Ctrl-C in the bindings)",
       "set from another thread to stop early with the best schedule so far, termination interrupted"},
      {"exact.node_limit", "int", std::to_string(d.exact.node_limit), "exact", "--search-nodes",
       "branch-and-bound nodes before the paper's MIP is tried too (0 = search only)"},
      {"mip.write_lp", "string", "\"\"", "exact, mip", "--write-lp", "write the paper's MIP of the instance (LP)"},
      {"mip.write_mps", "string", "\"\"", "exact, mip", "--write-mps", "write the paper's MIP of the instance (MPS)"},
      {"mapping.accounting", "enum", ToString(d.mapping.accounting), "map, map_parallel", "--accounting",
       "how host↔device copies are charged: conservative | neighbour"},
      {"mapping.algorithm", "enum", ToString(d.mapping.algorithm), "map, map_parallel", "--algorithm",
       "shortest path by dp | dijkstra (same optimum)"},
      {"concurrent.space", "enum", ToString(d.concurrent.space), "map_concurrent", "--joint",
       "state space: joint (i, j) | aligned (ℓ, d0, d1), one model twice"},
      {"concurrent.algorithm", "enum", ToString(d.concurrent.algorithm), "map_concurrent", "--algorithm",
       "dijkstra | dp"},
      {"concurrent.solo_steps", "bool", yes(d.concurrent.solo_steps), "map_concurrent", "--lockstep (false)",
       "joint space: a step may run one request alone while the other waits"},
      {"baseline.axonn_max_switches", "int", std::to_string(d.baseline.axonn_max_switches), "axonn", "",
       "block boundaries between the two PUs (0, 1 or 2)"},
      {"baseline.hetero_max_pus", "int", std::to_string(d.baseline.hetero_max_pus), "hetero", "",
       "HETERO tries K! priority orders; refused above this K"},
  };
}

std::string SolveOptionTableMarkdown() {
  std::string out = "| option | type | default | read by | flag | meaning |\n|---|---|---|---|---|---|\n";
  for (const OptionInfo& o : SolveOptionTable()) {
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", o.name, o.type, o.default_text, o.applies_to,
                       o.cli.empty() ? "—" : "`" + o.cli + "`", o.description);
  }
  return out;
}

}  // namespace hetplan
