// Streams of inputs: the initiation interval (II) a plan sustains when
// successive inputs overlap, the cyclic schedule that realises it, and the
// exact search for the smallest II (the throughput objective; docs/throughput.md
// states the model). In steady state every resource serves each input once
// per II: a serial PU its operators one after another, a link the transfers
// between its two PUs one after another, and each operator on a spatial PU its
// own crossbars (held `replicas` times, CostModel::replicated_latency_us).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/plan/problem.h"

namespace hetplan {

// What one input keeps each resource busy for under a plan.
struct StreamLoads {
  std::vector<double> serial_us;  // per PU: Σ its operators' time (0 for spatial PUs)
  std::vector<double> link_us;    // per PU pair p < q at p × k + q: Σ the transfers between them
  double spatial_us = 0;          // the longest operator on a spatial PU, after replication
  int spatial_op = -1;            // which operator that is
  std::vector<int64_t> crossbars; // per PU: Σ replicas × crossbars
  // max of all the above: the smallest II the plan can run at.
  double interval_us() const;
  // Which resource sets it: "pu cpu", "link cpu-cim", "operator 12 on cim".
  std::string Bottleneck(const CostModel& c) const;
};

// `replicas` null: one copy of every operator.
StreamLoads ComputeStreamLoads(const Problem& p, const std::vector<int>& assignment,
                               const std::vector<int64_t>* replicas = nullptr);

// A cyclic schedule of `assignment` at interval `ii` (≥ the plan's
// StreamLoads::interval_us()): operators and transfers are placed in the
// order of the assignment's list schedule, each as early as its inputs and a
// free slot of its resource modulo `ii` allow (a modulo list scheduler); if
// a resource's free time is too fragmented, every resource's slots are laid
// end to end instead. The result has initiation_interval_us, each operator's
// replicas and stage, and transfer_start_us. `improve` false: without the
// local search over slot orders (quicker, for trying many intervals).
Schedule CyclicSchedule(const Problem& p, const std::vector<int>& assignment, const std::vector<int64_t>& replicas,
                        double ii, bool improve = true);

// Two of a stream's tasks on the same serial resource (operator v is task v;
// edge e's transfer is task n + e): j's slot is m IIs from i's within the
// cycle, s_i + d_i ≤ s_j + m × II and s_j + m × II + d_j ≤ s_i + II, so no
// copy of one overlaps a copy of the other.
struct ModuloPair {
  int i = 0, j = 0;
  int64_t m = 0;
};

// The earliest starts of `assignment`'s operators and transfers at interval
// `ii` that keep every precedence and every pair (a longest path by
// Bellman–Ford over the difference constraints): the cyclic schedule with
// the shortest latency those pairs allow. nullopt when they contradict each
// other at this II (a positive cycle).
std::optional<Schedule> ScheduleWithPairs(const Problem& p, const std::vector<int>& assignment,
                                          const std::vector<int64_t>& replicas, double ii,
                                          const std::vector<ModuloPair>& pairs);

struct ThroughputSearchResult {
  std::vector<int> assignment;      // empty when none was found
  std::vector<int64_t> replicas;
  double interval_us = 0;           // its II
  double bound_us = 0;              // proven: no plan runs at a smaller II
  bool complete = false;            // the search proved interval_us optimal
  bool infeasible = false;          // proven: no plan fits
  int thresholds = 0;               // spatial-time thresholds tried
  int64_t nodes = 0;                // branch-and-bound nodes over all of them
  bool interrupted = false;
  bool node_limit_reached = false;  // it stopped on `node_limit`
};

// The smallest II over every assignment and replication that fits the
// crossbar budgets: a search over the spatial operators' time threshold T
// (each operator on a spatial PU takes the fewest copies that bring it
// within T), each step a branch-and-bound over the assignment minimising the
// largest serial PU's and link's load with a fractional-knapsack bound.
// Stops at `deadline`, or after about `node_limit` nodes (0: no limit), with
// what it proved; `relative_gap` as SolveOptions'.
ThroughputSearchResult SolveThroughputBySearch(const Problem& p, std::chrono::steady_clock::time_point deadline,
                                               double relative_gap, const std::atomic<bool>* interrupt,
                                               int64_t node_limit = 0);

}  // namespace hetplan
