// Option enums' names and the validation of SolveOptions.
#include "hetplan/plan/options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <thread>

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

Result<MipBackend> ParseMipBackend(std::string_view text) {
  const std::string t = LowerAscii(text);
  if (t == "auto") return MipBackend::kAuto;
  if (t == "cbc") return MipBackend::kCbc;
  if (t == "highs") return MipBackend::kHighs;
  return Error(ErrorCode::kInvalidArgument, "MIP backend '{}': unknown; use 'auto', 'cbc' or 'highs'", text);
}

std::string ToString(MipBackend b) {
  return b == MipBackend::kAuto ? "auto" : b == MipBackend::kCbc ? "cbc" : "highs";
}

std::string ToString(ConcurrentSpace s) { return s == ConcurrentSpace::kAligned ? "aligned" : "joint"; }

int ThreadCount(const SolveOptions& o) {
  return o.threads > 0 ? o.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

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
  using Methods = std::vector<std::string>;
  return {
      {"time_limit_s", "double", num(d.time_limit_s), "--time-limit",
       "wall-clock limit of the solve; at the limit the best schedule so far, status feasible",
       Methods{"exact", "mip"}, "time_limit"},
      {"relative_gap", "double", num(d.relative_gap), "--gap",
       "stop when (objective − bound) / objective ≤ this; status optimal means within it",
       Methods{"exact", "mip"}, "gap"},
      {"threads", "int", std::to_string(d.threads), "--threads",
       "the MIP solver's threads (CBC, HiGHS), and the exact search's segment searches side by side; 0 = all cores (the search's result "
       "does not depend on the count)",
       Methods{"exact", "mip"}, "threads"},
      {"warm_start", "bool", yes(d.warm_start), "--no-warm-start",
       "start from the best list-scheduled heuristic", Methods{"exact", "mip"}, "warm_start"},
      {"log", "bool", yes(d.log), "--solver-log", "the solver's log on stderr", Methods{"exact", "mip"}, "log"},
      {"interrupt", "atomic flag", "none", "(Ctrl-C in the bindings)",
       "set from another thread to stop early with the best schedule so far, termination interrupted",
       Methods{"exact", "mip"}, ""},
      {"exact.node_limit", "int", std::to_string(d.exact.node_limit), "--search-nodes",
       "branch-and-bound nodes before the paper's MIP (a stream's: the throughput MIP) is tried too (0 = search only)",
       Methods{"exact"}, "search_nodes"},
      {"mip.backend", "enum", ToString(d.mip.backend), "--mip-backend",
       "the MIP solver: auto (HiGHS where built, else CBC) | cbc | highs; for exact: of its fallback", Methods{"exact", "mip"}, "mip_backend"},
      {"mip.write_lp", "string", "\"\"", "--write-lp", "write the paper's MIP of the instance (LP)",
       Methods{"exact", "mip"}, "write_lp"},
      {"mip.write_mps", "string", "\"\"", "--write-mps", "write the paper's MIP of the instance (MPS)",
       Methods{"exact", "mip"}, "write_mps"},
      {"mapping.accounting", "enum", ToString(d.mapping.accounting), "--accounting",
       "how host↔device copies are charged: conservative | neighbour", Methods{"map", "map_parallel"}, "accounting"},
      {"mapping.algorithm", "enum", ToString(d.mapping.algorithm), "--algorithm",
       "shortest path by dp | dijkstra (same optimum)", Methods{"map", "map_parallel"}, "algorithm"},
      {"concurrent.space", "enum", ToString(d.concurrent.space), "--joint",
       "state space: joint (i, j) | aligned (ℓ, d0, d1), one model twice", Methods{"map_concurrent"}, "space"},
      {"concurrent.algorithm", "enum", ToString(d.concurrent.algorithm), "--algorithm",
       "dijkstra | dp", Methods{"map_concurrent"}, "algorithm"},
      {"concurrent.solo_steps", "bool", yes(d.concurrent.solo_steps), "--lockstep (false)",
       "joint space: a step may run one request alone while the other waits", Methods{"map_concurrent"}, "solo_steps"},
      {"baseline.axonn_max_switches", "int", std::to_string(d.baseline.axonn_max_switches), "",
       "block boundaries between the two PUs (0, 1 or 2)", Methods{"axonn"}, "axonn_max_switches"},
      {"baseline.hetero_max_pus", "int", std::to_string(d.baseline.hetero_max_pus), "",
       "HETERO tries K! priority orders; refused above this K", Methods{"hetero"}, "hetero_max_pus"},
  };
}

Status CheckOptionsApply(const std::string& method, const SolveOptions& options) {
  if (options.given.empty()) return Status::Ok();
  const std::vector<OptionInfo> table = SolveOptionTable();
  for (const std::string& name : options.given) {
    const auto row = std::find_if(table.begin(), table.end(), [&](const OptionInfo& o) { return o.name == name; });
    if (row == table.end()) {
      return Error(ErrorCode::kInvalidArgument, "option '{}' is not a planning option (hetplan solvers --options lists "
                   "them)", name);
    }
    if (row->methods.empty() ||
        std::find(row->methods.begin(), row->methods.end(), method) != row->methods.end()) {
      continue;
    }
    return Error(ErrorCode::kInvalidArgument,
                 "{}{} does not apply to solver '{}', which ignores it (it is read by {}); remove it or choose one of "
                 "those solvers",
                 row->cli.empty() || row->cli.front() != '-' ? "option " + row->name : row->cli,
                 row->cli.empty() || row->cli.front() != '-' ? std::string() : " (" + row->name + ")", method,
                 fmt::format("{}", fmt::join(row->methods, ", ")));
  }
  return Status::Ok();
}

std::vector<std::string> OptionTableDrift(const std::vector<OptionInfo>& table, const OptionSurfaces& surfaces) {
  std::vector<std::string> drift;
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (const OptionInfo& o : table) {
    // The flag is the first word of `cli` when it is one ("--lockstep (false)": --lockstep).
    const std::string flag = o.cli.rfind("--", 0) == 0 ? o.cli.substr(0, o.cli.find(' ')) : std::string();
    if (!flag.empty() && surfaces.cli_help.find(flag) == std::string::npos) {
      drift.push_back(fmt::format("{}: the flag {} is in no command's help", o.name, flag));
    }
    if (!o.python.empty() && !has(surfaces.python_keywords, o.python)) {
      drift.push_back(fmt::format("{}: hetplan.plan() has no keyword {}", o.name, o.python));
    }
    if (!o.python.empty() && !has(surfaces.python_stub_keywords, o.python)) {
      drift.push_back(fmt::format("{}: the stub of hetplan.plan() has no keyword {}", o.name, o.python));
    }
    if (surfaces.docs.find(fmt::format("| `{}` |", o.name)) == std::string::npos) {
      drift.push_back(fmt::format("{}: docs/planners.md has no row for it", o.name));
    }
  }
  return drift;
}

std::string SolveOptionTableMarkdown() {
  std::string out = "| option | type | default | read by | flag | meaning |\n|---|---|---|---|---|---|\n";
  for (const OptionInfo& o : SolveOptionTable()) {
    // The "read by" column is the methods list itself, so the two cannot drift.
    const std::string read_by = o.methods.empty() ? "every method" : fmt::format("{}", fmt::join(o.methods, ", "));
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", o.name, o.type, o.default_text, read_by,
                       o.cli.empty() ? "—" : "`" + o.cli + "`", o.description);
  }
  return out;
}

}  // namespace hetplan
