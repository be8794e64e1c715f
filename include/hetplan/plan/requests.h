// Two requests as one problem (BIDENT's concurrent mode): both graphs in one,
// request 1's operators after request 0's, every operator priced with its
// host↔device copies folded in (w + H2D + D2H: the concurrent search charges
// no separate transfers, so edges carry none).
#pragma once

#include <optional>
#include <vector>

#include "hetplan/cost/cost_model.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/plan/problem.h"

namespace hetplan {

struct CombinedRequests {
  OpGraph graph;      // request 0's operators keep their ids; request 1's follow
  CostModel costs;    // the PUs of request 0's cost model
  RequestSet requests;

  Problem problem(Objective objective, std::optional<double> latency_cap_us = std::nullopt) const {
    return Problem{&graph, &costs, objective, latency_cap_us, &requests};
  }
};

// Combines two requests (the same model twice, or two models) priced on one
// platform: both cost models must list the same PUs. Co-execution rows: both
// cost models' and `extra_coexec`, each once.
Result<CombinedRequests> CombineRequests(const OpGraph& g0, const CostModel& c0, const OpGraph& g1,
                                         const CostModel& c1, const std::vector<CoExecution>& extra_coexec = {});

}  // namespace hetplan
