// Options of a planning call: the fields every method reads, and one
// sub-struct per method family, so that a caller sets only what applies and a
// method reads only its own (OR-Tools math_opt's SolveParameters, HiGHS's
// HighsOptions). Plain structs with defaults; enums, never strings.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hetplan/util/status.h"

namespace hetplan {

// How BIDENT's mapping charges host↔device copies (docs/mapping.md).
//  kConservative: every operator on an accelerator is charged its full H2D
//    and D2H inside its node, whatever its neighbours do (BIDENT's reported
//    setting; upper-bounds transitions). Edges carry nothing.
//  kNeighbour: s→v_{1,j} carries P_j's H2D, v_{N,j}→t its D2H, and between
//    consecutive operators a PU switch adds D2H when leaving an accelerator
//    and H2D when entering one; staying on a PU is free.
enum class TransferAccounting { kConservative, kNeighbour };
Result<TransferAccounting> ParseTransferAccounting(std::string_view text);
std::string ToString(TransferAccounting a);

// The sequential mapping's shortest-path algorithm (same optimum).
enum class ChainAlgorithm { kDp, kDijkstra };
Result<ChainAlgorithm> ParseChainAlgorithm(std::string_view text);
std::string ToString(ChainAlgorithm a);

// The two-request search's state space: kAligned (ℓ, d0, d1), both requests
// of one model in lockstep; kJoint (i, j), completed operators of each.
enum class ConcurrentSpace { kAligned, kJoint };
std::string ToString(ConcurrentSpace s);

// The MIP solver behind the paper's MIP, the throughput MIPs and the exact
// search's fallback (docs/planners.md#mip-backends): COIN-OR CBC 2.10
// (Debian's) or HiGHS (built from PyPI's highspy source distribution by
// scripts/setup_highs.sh; absent from a build without it). kAuto, the
// default: HiGHS where the build has it (it proved ResNet-50's and
// GoogLeNet's MIPs 1.4-3.6x sooner than CBC and more often ended a 10 s limit
// with the stronger bound, docs/planners.md#mip-backends), else CBC.
enum class MipBackend { kAuto, kCbc, kHighs };
Result<MipBackend> ParseMipBackend(std::string_view text);
std::string ToString(MipBackend b);

// The exact search ("exact").
struct ExactOptions {
  // Branch-and-bound nodes the search may spend before the paper's MIP (for
  // the throughput objective, the throughput MIP) is tried on the instance
  // too (0: no limit, search only). A node count, not a
  // time, so that where it stops is repeatable.
  int64_t node_limit = 100000;
};

// The CIM paper's MIP ("mip", and the exact search's fallback).
struct MipOptions {
  MipBackend backend = MipBackend::kAuto;
  std::string write_lp;   // export the model (for Gurobi, HiGHS, SCIP)
  std::string write_mps;
};

// BIDENT's one-request mapping ("map", "map_parallel").
struct MappingOptions {
  TransferAccounting accounting = TransferAccounting::kConservative;
  ChainAlgorithm algorithm = ChainAlgorithm::kDp;
};

// BIDENT's two-request search ("map_concurrent").
struct ConcurrentMappingOptions {
  ConcurrentSpace space = ConcurrentSpace::kJoint;
  ChainAlgorithm algorithm = ChainAlgorithm::kDijkstra;
  // Joint space only. false: BIDENT's literal transitions, both requests
  // advance together until one finishes, then the other runs alone. true:
  // also a step where one request runs an operator alone while the other
  // waits, which lets the search stagger the requests (docs/mapping.md).
  bool solo_steps = true;
};

// The baselines of docs/baselines.md.
struct BaselineOptions {
  int axonn_max_switches = 2;  // AxoNN: block boundaries between the two PUs
  int hetero_max_pus = 7;      // HETERO tries K! orderings; refuse larger K
};

struct SolveOptions {
  // Read by every method that can stop early (MethodInfo::time_limit).
  double time_limit_s = 600;   // the CIM paper's limit
  double relative_gap = 1e-4;  // stop when (z_inc − z_bound)/|z_inc| ≤ this
  int threads = 0;             // MIP solver threads; 0 = all cores
  bool warm_start = true;      // start from the best heuristic schedule
  bool log = false;            // solver log on stderr
  // When set, another thread may store true to stop the solve early: the
  // method returns its best schedule so far (status feasible, termination
  // interrupted). Not owned; must outlive the call.
  const std::atomic<bool>* interrupt = nullptr;

  ExactOptions exact;
  MipOptions mip;
  MappingOptions mapping;
  ConcurrentMappingOptions concurrent;
  BaselineOptions baseline;

  // The options the caller set on purpose, by their SolveOptionTable() name
  // ("time_limit_s", "exact.node_limit", ...): what tells a value given from
  // the default. Solve() refuses one that the method does not read. Left
  // empty by callers that share one SolveOptions among methods (dse).
  std::vector<std::string> given;
};

// Checks the common fields and every sub-struct; errors name the option.
Status ValidateSolveOptions(const SolveOptions& o);

// The threads options.threads asks for: itself, or one per core when 0.
int ThreadCount(const SolveOptions& o);

// One row of the options reference (docs/planners.md is generated from
// these rows and a test fails when the two drift, as HiGHS writes its options
// reference from code). Defaults are read from a default SolveOptions.
struct OptionInfo {
  std::string name;         // as in code: "time_limit_s", "exact.node_limit", ...
  std::string type;         // "double", "int", "bool", "enum", "string"
  std::string default_text;
  std::string cli;          // the command-line flag, or "" when none
  std::string description;
  std::vector<std::string> methods;  // the methods that read it, by canonical name (empty: every method)
  std::string python;                // the keyword of hetplan.plan(), or "" when none
};
std::vector<OptionInfo> SolveOptionTable();
// Every option in `options.given` is a row of the table that `method` (a
// canonical name) reads; else kInvalidArgument, one line naming the option,
// its flag, the method and the methods that read it.
Status CheckOptionsApply(const std::string& method, const SolveOptions& options);
// Where the options surface outside the table: the CLI's help texts, the
// keywords of Python's hetplan.plan() and of its stub, and docs/planners.md.
struct OptionSurfaces {
  std::string cli_help;
  std::vector<std::string> python_keywords, python_stub_keywords;
  std::string docs;
};
// One line per place a row of `table` is missing from: its flag from the
// CLI's help, its keyword from Python or the stub, its row from the docs.
// Empty when every surface has every option (a test holds the real ones to it).
std::vector<std::string> OptionTableDrift(const std::vector<OptionInfo>& table, const OptionSurfaces& surfaces);
// The table as Markdown, one row per option.
std::string SolveOptionTableMarkdown();

}  // namespace hetplan
