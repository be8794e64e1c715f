// The planner interface and its registry (OR-Tools math_opt style): every
// planning method — the exact search, the CIM paper's MIP, BIDENT's
// sequential, parallel and two-request mapping, every baseline — is a Solver
// registered by name, described by a MethodInfo, and called through Solve(),
// which validates the problem and the options before any backend sees them.
// Backends are stateless: one instance serves any number of threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/plan/deadline.h"
#include "hetplan/plan/options.h"
#include "hetplan/plan/problem.h"
#include "hetplan/plan/result.h"
#include "hetplan/util/status.h"

namespace hetplan {

enum class MethodFamily { kExact, kMip, kMapping, kBaseline };
std::string ToString(MethodFamily f);

// What a method supports and promises; `hetplan solvers` prints it.
struct MethodInfo {
  std::string name;     // canonical; for a parametric method "single:<pu>"
  std::string summary;  // one line
  MethodFamily family = MethodFamily::kBaseline;
  std::vector<Objective> objectives;  // the objectives it plans for
  int requests = 1;                   // 1: one request; 2: two requests at once
  bool spatial_pus = true;            // accepts spatial (crossbar-budget) PUs
  bool shared_adcs = false;           // accepts a spatial PU whose operators share an ADC pool
  bool reprogram = false;             // accepts a reprogramming PU (rewrites operators, or never does so)
  bool proves_optimality = false;     // can return status optimal with a proof
  bool time_limit = false;            // honours SolveOptions::time_limit_s and relative_gap
  // The mode written to the schedule file (docs/schedule-format.md).
  std::string schedule_mode = "partition";
  std::string docs;  // where it is described, e.g. "docs/ilp.md"
  // Listed by ListSolvers (and so by `hetplan solvers`, the docs and the
  // conformance suite); false for a method a test registers for itself,
  // which stays reachable by its name.
  bool listed = true;
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual const MethodInfo& info() const = 0;
  // Whether solving with `objective` and `options` may go through CBC, whose
  // driver keeps process-wide state: such solves take turns (dse runs them
  // in one lane).
  virtual bool UsesCbc(Objective /*objective*/, const SolveOptions& /*options*/) const { return false; }
  // `problem` has passed ValidateProblem and the checks of Solve() against
  // info(); `options` has passed ValidateSolveOptions. `deadline` is the
  // call's clock (options.time_limit_s from when Solve() began): a method
  // with a time limit stops by it and asks it for the time left.
  virtual Result<SolveResult> SolveValidated(const Problem& problem, const SolveOptions& options,
                                             const Deadline& deadline) const = 0;
};

// A parametric method ("single:<pu>"): makes the solver for one argument.
using SolverFactory = std::unique_ptr<Solver> (*)(const std::string& argument);

// Registers a backend under info().name (the first registration of a name
// wins). Thread-safe.
void RegisterSolver(std::unique_ptr<Solver> solver);
// Registers a parametric method: names "<prefix>:<argument>" are made by
// `factory`; `info` describes the family (name "<prefix>:<...>").
void RegisterSolverFamily(const std::string& prefix, MethodInfo info, SolverFactory factory);
// An older spelling that keeps working: FindSolver(alias) finds `canonical`,
// and ResolveSolverName says so.
void RegisterSolverAlias(const std::string& alias, const std::string& canonical, const std::string& notice);

struct ResolvedName {
  std::string canonical;
  std::optional<std::string> notice;  // one line, for an old spelling
};
// Resolves aliases; an unknown name is kNotFound with the list of methods.
Result<ResolvedName> ResolveSolverName(const std::string& name);

// The backend for `name` (canonical, alias or "<prefix>:<argument>");
// nullptr when unknown. Pointers stay valid for the life of the process.
const Solver* FindSolver(const std::string& name);
// Every method in registration order (the exact search, the MIP, BIDENT's
// mapping, the baselines); parametric families as "<prefix>:<...>".
std::vector<MethodInfo> ListSolvers();
std::vector<std::string> SolverNames();

// The MIP solvers of this build (--mip-backend), each with its name and
// version ("CBC 2.10.8", "HiGHS 1.16.0"): CBC always, HiGHS when the build
// found it (scripts/setup_highs.sh).
struct MipBackendInfo {
  MipBackend backend;
  std::string version;
};
std::vector<MipBackendInfo> ListMipBackends();
// The backend `backend` runs on in this build: kAuto is HiGHS where the build
// has it, else CBC; the others are themselves.
MipBackend ResolveMipBackend(MipBackend backend);
// The plain (non-parametric) methods of one family planning `requests` at
// once, e.g. every one-request baseline.
std::vector<std::string> SolverNames(MethodFamily family, int requests);

// The facade: resolves `solver`, validates the options and the problem,
// checks the method supports its objective, request count and PUs (each a
// kUnsupported error naming the method and what it supports), then solves.
// result.solver is the canonical name; result.seconds the wall time if the
// backend did not set it.
Result<SolveResult> Solve(const std::string& solver, const Problem& problem, const SolveOptions& options);

}  // namespace hetplan
