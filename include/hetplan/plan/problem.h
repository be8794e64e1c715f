// What a planner is given: the Problem (graph + costs + objective, one or two
// requests) and what every planner returns, the timed Schedule. The bottom of
// the planning modules: solvers, the writers and the application layer all
// speak these types, and none of them depends on how a plan was found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hetplan/cost/cost_model.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/util/status.h"

namespace hetplan {

// kThroughput: the initiation interval of a stream of inputs (docs/throughput.md).
enum class Objective { kLatency, kEnergy, kThroughput };
Result<Objective> ParseObjective(std::string_view text);
std::string ToString(Objective o);

// Two requests planned together (BIDENT's concurrent mode) in one graph:
// request 0's operators are ids [0, split), request 1's [split, n). `chain0`
// and `chain1` are each request's topological order (ids in the combined
// graph), the order in which BIDENT's concurrent search advances them.
struct RequestSet {
  int split = 0;
  std::vector<int> chain0, chain1;
};

struct Problem {
  const OpGraph* graph = nullptr;
  const CostModel* costs = nullptr;
  Objective objective = Objective::kLatency;
  // With the energy objective: makespan ≤ cap; with throughput, one input's
  // latency ≤ cap (--max-latency).
  std::optional<double> latency_cap_us;
  // Null: one request. Otherwise the graph holds two (see RequestSet).
  const RequestSet* requests = nullptr;

  int num_requests() const { return requests == nullptr ? 1 : 2; }
};

// Checks sizes agree, every operator is supported somewhere (the error names
// the operator), costs are finite and ≥ 0, capacities ≥ 0, and for two
// requests that the split and chains cover the graph.
Status ValidateProblem(const Problem& p);

struct ScheduledOp {
  int device = -1;
  double start_us = 0;
  double finish_us = 0;
  double slowdown = 1.0;  // finish − start = cost × slowdown
  int request = 0;        // two requests: which request the operator belongs to
  // On a reprogramming PU: its weights are written at start_us (write_us of
  // them), then it runs; it holds its crossbars until finish_us only.
  bool rewritten = false;
  // A stream's schedule (Schedule::initiation_interval_us): the copies of its
  // weights on a spatial PU (CostModel::replicated_latency_us), and its stage,
  // floor(start_us / II).
  int64_t replicas = 1;
  int stage = 0;
};

// finish − start of a scheduled operator: its cost × slowdown, after its
// write when it is rewritten.
double ScheduledDuration(const CostModel& c, int v, const ScheduledOp& op);

struct Schedule {
  std::vector<ScheduledOp> ops;
  double makespan_us = 0;           // one input's latency: the latest finish
  std::optional<double> energy_uj;  // null when a used PU has no power
  // A cyclic schedule of a stream: input i runs every operator (and transfer)
  // at its time + i × II. Null for one inference.
  std::optional<double> initiation_interval_us;
  // With an II: per edge, when its transfer starts on the link between its
  // ends' PUs (NaN when both ends share a PU).
  std::vector<double> transfer_start_us;
};

// One scheduled operator's energy: its ScheduledDuration × power plus its own
// energy on its device (CostModel::op_energy_uj) and its write's when it is
// rewritten; nullopt when the device has no power_w.
std::optional<double> OperatorEnergy(const CostModel& c, int v, const ScheduledOp& op);

// Which physical crossbars of spatial PU `q` each operator on it holds, as
// ranges [first, last] (empty for the others): the resident operators hold
// consecutive crossbars from 0 in id order for every inference; each
// rewritten operator, taken in start order, the lowest crossbars above them
// that no rewritten operator running then holds. Where the plan does not fit
// (it always does for a planner's schedule) the ids run past the capacity,
// for the validator to report.
using CrossbarRanges = std::vector<std::pair<int64_t, int64_t>>;
std::vector<CrossbarRanges> PhysicalCrossbars(const Problem& p, const Schedule& s, int q);

// Σ OperatorEnergy over operators; nullopt when any used PU lacks power_w.
std::optional<double> ScheduleEnergy(const Problem& p, const Schedule& s);

}  // namespace hetplan
