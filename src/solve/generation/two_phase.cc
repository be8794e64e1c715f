// Two phases with shared crossbars, by branch and bound over the shared
// weights (hetplan/solve/two_phase.h).
#include "hetplan/solve/two_phase.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>
#include <vector>

#include "hetplan/util/clock.h"
#include "hetplan/util/limits.h"

namespace hetplan {
namespace {

constexpr int64_t kNodeLimit = 2000;
constexpr double kRootFloorS = 0.1;

// A weight: operator v on spatial PU p, with its crossbars.
struct Weight {
  int v = 0, p = 0;
  int64_t xb = 0;
};
enum : int8_t { kOut = -1, kFree = 0, kIn = 1 };

// One phase's costs below a node: excluded weights off their spatial PU,
// resident ones free of crossbars, each spatial PU's capacity less what the
// resident ones reserve; nullopt when that leaves no plan.
std::optional<CostModel> NodeCosts(const CostModel& c, const std::vector<Weight>& w, const std::vector<int8_t>& state) {
  CostModel out = c;
  std::vector<int64_t> reserved(static_cast<size_t>(c.num_pus()), 0);
  for (size_t i = 0; i < w.size(); ++i) {
    if (state[i] == kIn) {
      reserved[static_cast<size_t>(w[i].p)] += w[i].xb;
      out.set_crossbars(w[i].v, w[i].p, 0);
    } else if (state[i] == kOut) {
      bool elsewhere = false;
      for (int q = 0; q < c.num_pus(); ++q) elsewhere |= q != w[i].p && c.supported(w[i].v, q);
      if (!elsewhere) return std::nullopt;
      out.set_unsupported(w[i].v, w[i].p);
    }
  }
  for (int p = 0; p < c.num_pus(); ++p) {
    if (!c.pu(p).spatial) continue;
    const int64_t cap = c.pu(p).capacity - reserved[static_cast<size_t>(p)];
    if (cap < 0) return std::nullopt;
    out.mutable_pu(p).capacity = cap;
  }
  return out;
}

struct Evaluated {
  bool infeasible = false;
  bool solved = false;  // both phases have a schedule
  double lb = 0;        // bound of every request below the node
  SolveResult first, second;
  bool fits = false;  // the free weights both keep fit what is left
  int branch = -1;    // a free weight one phase keeps (when they do not fit)
};

class Search {
 public:
  Search(const TwoPhaseProblem& p, std::string method, const SolveOptions& o)
      : p_(p), method_(std::move(method)), options_(o), start_(Clock::now()) {
    const CostModel& c = *p.first;
    for (int v = 0; v < c.num_ops(); ++v) {
      for (int q = 0; q < c.num_pus(); ++q) {
        const int64_t xb = std::max(c.crossbars(v, q), p.second->crossbars(v, q));
        if (c.pu(q).spatial && xb > 0 && (c.supported(v, q) || p.second->supported(v, q))) weights_.push_back({v, q, xb});
      }
    }
  }

  // `root`: solved however little time is left (a phase needs a schedule);
  // any other node is left unsolved once the time is spent.
  Result<Evaluated> Evaluate(const std::vector<int8_t>& state, double parent_lb, bool root = false) {
    Evaluated e;
    e.lb = parent_lb;
    if (!root && Remaining() <= 0) return e;
    auto cf = NodeCosts(*p_.first, weights_, state);
    auto cs = NodeCosts(*p_.second, weights_, state);
    if (!cf || !cs) {
      e.infeasible = true;
      return e;
    }
    HETPLAN_ASSIGN_OR_RETURN(e.first, SolvePhase(*cf, root));
    // The first phase may have spent the rest: the node stays unsolved
    // (a limit of 0 or less is no limit a method takes).
    if (!root && Remaining() <= 0) {
      Evaluated unsolved;
      unsolved.lb = parent_lb;
      return unsolved;
    }
    HETPLAN_ASSIGN_OR_RETURN(e.second, SolvePhase(*cs, root));
    if (e.first.status == SolveStatus::kInfeasible || e.second.status == SolveStatus::kInfeasible) {
      e.infeasible = true;
      return e;
    }
    const double b1 = std::isfinite(e.first.bound) ? e.first.bound : 0.0;
    const double b2 = std::isfinite(e.second.bound) ? e.second.bound : 0.0;
    e.lb = std::max(parent_lb, b1 + p_.weight * b2);
    e.solved = e.first.schedule && e.second.schedule;
    if (!e.solved) return e;
    Fit(*cf, state, &e);
    return e;
  }

  double Objective(const Evaluated& e) const {
    return e.first.schedule->makespan_us + p_.weight * e.second.schedule->makespan_us;
  }
  double Remaining() const { return options_.time_limit_s - SecondsSince(start_); }
  const std::vector<Weight>& weights() const { return weights_; }
  int64_t solves() const { return solves_; }
  bool stopped_by_limit() const { return stopped_by_limit_; }
  Clock::time_point start() const { return start_; }

 private:
  // At the root each phase gets at least kRootFloorS, or half the time left
  // for the first phase, so that the second has some.
  Result<SolveResult> SolvePhase(const CostModel& costs, bool root) {
    SolveOptions o = options_;
    o.time_limit_s = root ? std::max(kRootFloorS, solves_ == 0 ? Remaining() / 2 : Remaining()) : Remaining();
    ++solves_;
    auto r = Solve(method_, Problem{p_.graph, &costs, Objective::kLatency, std::nullopt}, o);
    if (r.ok()) stopped_by_limit_ |= r->termination == Termination::kTimeLimit;
    return r;
  }

  // Whether the free weights the two phases keep fit what the node leaves;
  // otherwise the largest free weight only one of them keeps.
  void Fit(const CostModel& node_costs, const std::vector<int8_t>& state, Evaluated* e) const {
    std::vector<int64_t> used(static_cast<size_t>(node_costs.num_pus()), 0);
    int64_t best = -1;
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (state[i] != kFree) continue;
      const Weight& w = weights_[i];
      const bool a = e->first.schedule->ops[static_cast<size_t>(w.v)].device == w.p;
      const bool b = e->second.schedule->ops[static_cast<size_t>(w.v)].device == w.p;
      if (a || b) used[static_cast<size_t>(w.p)] += w.xb;
      if (a != b && w.xb > best) {
        best = w.xb;
        e->branch = static_cast<int>(i);
      }
    }
    e->fits = true;
    for (int q = 0; q < node_costs.num_pus(); ++q) {
      if (node_costs.pu(q).spatial) e->fits &= used[static_cast<size_t>(q)] <= node_costs.pu(q).capacity;
    }
  }

  const TwoPhaseProblem& p_;
  std::string method_;
  SolveOptions options_;
  Clock::time_point start_;
  std::vector<Weight> weights_;
  int64_t solves_ = 0;
  bool stopped_by_limit_ = false;  // a phase's solve ran into the time limit
};

// The state that keeps exactly the weights `r`'s schedule holds (resident)
// and excludes every other: the other phase planned on them.
std::vector<int8_t> KeepOnly(const std::vector<Weight>& w, const SolveResult& r) {
  std::vector<int8_t> s(w.size(), kOut);
  for (size_t i = 0; i < w.size(); ++i) {
    if (r.schedule->ops[static_cast<size_t>(w[i].v)].device == w[i].p) s[i] = kIn;
  }
  return s;
}

// A phase's result as the phase alone: optimal only where its makespan meets
// the phase's own root bound.
SolveResult AsPhaseAlone(SolveResult r, const SolveResult& root) {
  const double obj = r.schedule->makespan_us;
  const bool proven = root.status == SolveStatus::kOptimal && obj <= root.bound + 1e-9 * std::max(1.0, obj);
  r.objective = obj;
  r.bound = root.bound;
  r.gap = std::isfinite(root.bound) && obj > 0 ? std::max(0.0, (obj - root.bound) / obj) : kNaN;
  r.status = proven ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  r.termination = proven ? Termination::kProved
                         : (r.termination == Termination::kProved ? Termination::kCompleted : r.termination);
  r.notes.push_back("one phase of a two-phase plan sharing its crossbars with the other: the pair's status, bound and "
                    "gap are the generation file's");
  return r;
}

}  // namespace

Result<TwoPhaseResult> SolveTwoPhase(const TwoPhaseProblem& problem, const std::string& method,
                                     const SolveOptions& options) {
  const CostModel& a = *problem.first;
  const CostModel& b = *problem.second;
  if (a.num_ops() != b.num_ops() || a.num_pus() != b.num_pus() || a.num_edges() != b.num_edges()) {
    return Error(ErrorCode::kInvalidArgument, "two phases: the cost models differ in operators, PUs or edges");
  }
  Search search(problem, method, options);
  const size_t nw = search.weights().size();
  HETPLAN_ASSIGN_OR_RETURN(Evaluated root, search.Evaluate(std::vector<int8_t>(nw, kFree), 0.0, /*root=*/true));
  if (root.infeasible || !root.solved) {
    return Error(ErrorCode::kLimitExceeded, "two phases: {} found no schedule for a phase alone ({}, {})", method,
                 ToString(root.first.status), ToString(root.second.status));
  }
  std::optional<Evaluated> best;
  const auto offer = [&](Evaluated e) {
    if (e.solved && e.fits && (!best || search.Objective(e) < search.Objective(*best))) best = std::move(e);
  };
  double unresolved = kInf;  // bounds of solved nodes whose phases the method did not prove
  const auto unproven = [&](const Evaluated& e) {
    return !e.solved || (e.fits && e.lb < search.Objective(e) - 1e-9 * std::max(1.0, e.lb));
  };
  if (unproven(root)) unresolved = root.lb;
  if (root.fits) {
    offer(root);
  } else {  // incumbents: each phase planned on the other's weights
    for (const SolveResult* keep : {&root.second, &root.first}) {
      HETPLAN_ASSIGN_OR_RETURN(Evaluated e, search.Evaluate(KeepOnly(search.weights(), *keep), root.lb, true));
      offer(std::move(e));
    }
  }
  using Open = std::pair<double, std::vector<int8_t>>;
  auto worse = [](const Open& x, const Open& y) { return x.first > y.first; };
  std::priority_queue<Open, std::vector<Open>, decltype(worse)> open(worse);
  int64_t nodes = 1;
  Termination termination = Termination::kProved;
  const auto push_children = [&](const Evaluated& e, const std::vector<int8_t>& state) {
    for (int8_t value : {kIn, kOut}) {
      std::vector<int8_t> child = state;
      child[static_cast<size_t>(e.branch)] = value;
      open.emplace(e.lb, std::move(child));
    }
  };
  if (!root.fits) push_children(root, std::vector<int8_t>(nw, kFree));
  while (!open.empty()) {
    const double incumbent = best ? search.Objective(*best) : kInf;
    if (open.top().first >= incumbent - 1e-9 * std::max(1.0, incumbent)) break;  // every open node is dominated
    if (search.Remaining() <= 0 || nodes >= kNodeLimit) {
      termination = search.Remaining() <= 0 ? Termination::kTimeLimit : Termination::kNodeLimit;
      break;
    }
    auto [lb, state] = open.top();
    open.pop();
    ++nodes;
    HETPLAN_ASSIGN_OR_RETURN(Evaluated e, search.Evaluate(state, lb));
    if (e.infeasible) continue;
    if (unproven(e)) unresolved = std::min(unresolved, e.lb);
    if (!e.solved) continue;
    if (e.fits) {
      offer(std::move(e));
    } else if (e.branch >= 0) {
      push_children(e, state);
    }
  }
  if (!best) return Error(ErrorCode::kLimitExceeded, "two phases: no pair of schedules that share the crossbars found");
  TwoPhaseResult out;
  out.objective = search.Objective(*best);
  double bound = std::min({out.objective, unresolved, open.empty() ? kInf : open.top().first});
  out.bound = std::max(bound, root.lb);
  out.gap = out.objective > 0 ? std::max(0.0, (out.objective - out.bound) / out.objective) : 0.0;
  const bool proven = out.gap <= 1e-9;
  out.status = proven ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  // Unproven with the nodes all taken: a phase's method stopped short (its limit, or a heuristic).
  if (!proven && termination == Termination::kProved) {
    termination = search.stopped_by_limit() ? Termination::kTimeLimit : Termination::kCompleted;
  }
  out.termination = proven ? Termination::kProved : termination;
  out.first = AsPhaseAlone(std::move(best->first), root.first);
  out.second = AsPhaseAlone(std::move(best->second), root.second);
  out.nodes = nodes;
  out.solves = search.solves();
  out.seconds = SecondsSince(search.start());
  return out;
}

}  // namespace hetplan
