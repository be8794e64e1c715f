// Option enums' names and the validation of SolveOptions.
#include "hetplan/plan/options.h"

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

}  // namespace hetplan
