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

// A node's state, 3 × weights long: [0, nw) each weight resident in both
// phases (kIn), in neither (kOut) or free; then per phase [nw (1 + phase),
// nw (2 + phase)) whether that phase rewrites the weight on its
// reprogramming PU (kIn: it does, kOut: it does not, or free).
using State = std::vector<int8_t>;
size_t RewriteSlot(size_t nw, int phase, size_t i) { return nw * static_cast<size_t>(1 + phase) + i; }

// One phase's costs below a node: excluded weights off their spatial PU (on
// a reprogramming PU, rewritten only: never resident), resident ones free of
// crossbars, each spatial PU's capacity less what the resident ones reserve;
// rewrites the node decides for this phase fixed (forced: on that PU,
// rewritten; forbidden: never rewritten); a reprogramming PU's lifetime
// counted in this phase's runs (`runs[phase]` per request) beside the writes
// the node forces on the other phase; nullopt when that leaves no plan.
std::optional<CostModel> NodeCosts(const CostModel& c, const std::vector<Weight>& w, const State& state, int phase,
                                   const double runs[2]) {
  CostModel out = c;
  const size_t nw = w.size();
  std::vector<int64_t> reserved(static_cast<size_t>(c.num_pus()), 0), forced_other(reserved.size(), 0);
  for (size_t i = 0; i < nw; ++i) {
    const Weight& x = w[i];
    const bool reprogram = c.pu(x.p).reprogram && c.crossbars(x.v, x.p) > 0;
    const int8_t rewrite = state[RewriteSlot(nw, phase, i)];
    if (state[RewriteSlot(nw, 1 - phase, i)] == kIn) forced_other[static_cast<size_t>(x.p)] += x.xb;
    if (state[i] == kIn) {
      if (rewrite == kIn) return std::nullopt;  // resident for both and rewritten: dominated by resident alone
      reserved[static_cast<size_t>(x.p)] += x.xb;
      out.set_crossbars(x.v, x.p, 0);
    } else if (rewrite == kIn) {
      out.set_rewrite_only(x.v, x.p);
      for (int q = 0; q < c.num_pus(); ++q) {
        if (q != x.p) out.set_unsupported(x.v, q);
      }
    } else if (state[i] == kOut && reprogram && rewrite != kOut) {
      out.set_rewrite_only(x.v, x.p);
    } else if (state[i] == kOut) {
      out.set_unsupported(x.v, x.p);  // nowhere else to run: the check below cuts the node
    } else if (rewrite == kOut) {
      out.set_no_rewrite(x.v, x.p);
    }
  }
  for (int p = 0; p < c.num_pus(); ++p) {
    if (!c.pu(p).spatial) continue;
    const int64_t cap = c.pu(p).capacity - reserved[static_cast<size_t>(p)];
    if (cap < 0) return std::nullopt;
    PuInfo& pu = out.mutable_pu(p);
    pu.capacity = cap;
    pu.other_lifetime_writes =
        c.pu(p).lifetime_inferences * runs[1 - phase] * static_cast<double>(forced_other[static_cast<size_t>(p)]);
    pu.lifetime_inferences *= runs[phase];
  }
  // Every operator still has a PU whose crossbars it fits.
  for (int v = 0; v < out.num_ops(); ++v) {
    bool somewhere = false;
    for (int q = 0; q < out.num_pus() && !somewhere; ++q) {
      somewhere = out.supported(v, q) && (!out.pu(q).spatial || out.crossbars(v, q) <= out.pu(q).capacity);
    }
    if (!somewhere) return std::nullopt;
  }
  return out;
}

}  // namespace

Rewrites RewritesOn(const Schedule& s, const CostModel& c, int p) {
  Rewrites r;
  std::vector<std::pair<double, int64_t>> events;  // (time, ±crossbars); ends before starts at one time
  for (size_t v = 0; v < s.ops.size(); ++v) {
    const ScheduledOp& op = s.ops[v];
    if (op.device != p || !op.rewritten) continue;
    const int64_t xb = c.crossbars(static_cast<int>(v), p);
    ++r.operators;
    r.written += xb;
    events.emplace_back(op.start_us, xb);
    events.emplace_back(op.finish_us, -xb);
  }
  std::sort(events.begin(), events.end());
  int64_t now = 0;
  for (const auto& [t, d] : events) r.peak = std::max(r.peak, now += d);
  return r;
}

Status CheckTwoPhaseMethod(const CostModel& c, const std::string& method) {
  if (method == "exact") return Status::Ok();
  for (const PuInfo& pu : c.pus()) {
    if (!pu.reprogram) continue;
    return Error(ErrorCode::kUnsupported,
                 "two phases: PU {} rewrites its crossbars (reprogram), which only solver 'exact' plans for two phases "
                 "(a weight resident in neither phase is rewrite-only); use --solver exact, or set {}.reprogram=false",
                 pu.name, pu.name);
  }
  return Status::Ok();
}

namespace {

struct Evaluated {
  bool infeasible = false;
  bool solved = false;  // both phases have a schedule
  double lb = 0;        // bound of every request below the node
  SolveResult first, second;
  bool fits = false;  // the free weights both keep fit what is left, with both phases' rewrites
  // When they do not fit: the state slot to branch on (kIn, kOut): a free
  // weight one phase keeps resident, or, when both keep the same and their
  // writes together exceed the endurance budget, a free rewrite of one phase.
  int branch = -1;
  double second_over_cap = 0;  // infeasible for the cap: the second phase's bound
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
  Result<Evaluated> Evaluate(const State& state, double parent_lb, bool root = false) {
    Evaluated e;
    e.lb = parent_lb;
    if (!root && Remaining() <= 0) return e;
    const double runs[2] = {1.0, p_.weight};
    auto cf = NodeCosts(*p_.first, weights_, state, 0, runs);
    auto cs = NodeCosts(*p_.second, weights_, state, 1, runs);
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
    // A second phase that cannot meet the cap here: nothing below the node can.
    if (p_.second_cap_us && b2 > *p_.second_cap_us * (1 + 1e-9) + 1e-9) {
      e.infeasible = true;
      e.second_over_cap = b2;
      return e;
    }
    e.lb = std::max(parent_lb, p_.first_coef * b1 + p_.SecondCoef() * b2);
    e.solved = e.first.schedule && e.second.schedule &&
               !(p_.second_cap_us && e.second.schedule->makespan_us > *p_.second_cap_us * (1 + 1e-9) + 1e-9);
    if (!e.solved) return e;
    Fit(*cf, state, &e);
    return e;
  }

  double Objective(const Evaluated& e) const {
    return p_.first_coef * e.first.schedule->makespan_us + p_.SecondCoef() * e.second.schedule->makespan_us;
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

  // Whether the free weights the two phases keep fit what the node leaves,
  // with each phase's rewrites at once and both phases' writes within the
  // endurance budget; otherwise the largest free weight only one of them
  // keeps resident.
  void Fit(const CostModel& node_costs, const State& state, Evaluated* e) const {
    std::vector<int64_t> used(static_cast<size_t>(node_costs.num_pus()), 0);
    int64_t best = -1;
    const auto resident = [](const SolveResult& r, const Weight& w) {
      const ScheduledOp& op = r.schedule->ops[static_cast<size_t>(w.v)];
      return op.device == w.p && !op.rewritten;
    };
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (state[i] != kFree) continue;
      const Weight& w = weights_[i];
      const bool a = resident(e->first, w), b = resident(e->second, w);
      if (a || b) used[static_cast<size_t>(w.p)] += w.xb;
      if (a != b && w.xb > best) {
        best = w.xb;
        e->branch = static_cast<int>(i);
      }
    }
    e->fits = true;
    bool endurance = true;
    for (int q = 0; q < node_costs.num_pus(); ++q) {
      const PuInfo& pu = node_costs.pu(q);
      if (!pu.spatial) continue;
      const int64_t free = pu.capacity - used[static_cast<size_t>(q)];
      e->fits &= free >= 0;
      if (!pu.reprogram) continue;
      const Rewrites x = RewritesOn(*e->first.schedule, *p_.first, q);
      const Rewrites y = RewritesOn(*e->second.schedule, *p_.second, q);
      e->fits &= x.peak <= free && y.peak <= free;
      const PuInfo& base = p_.first->pu(q);
      endurance &= base.lifetime_inferences * (static_cast<double>(x.written) + p_.weight * static_cast<double>(y.written)) <=
                   base.endurance_writes * static_cast<double>(std::max<int64_t>(free, 0));
    }
    if (e->fits && !endurance) {
      if (e->branch < 0) e->branch = RewriteBranch(state, *e);
      // Every rewrite fixed: each phase met the budget beside the other's
      // writes, so only rounding separates the two sums.
      e->fits = e->branch < 0;
    }
  }

  // The free rewrite (a phase, a weight it rewrites) with the most writes a
  // request; -1 when the node fixes every rewrite of both (then each phase
  // was solved beside the other's writes, which cannot exceed the budget).
  int RewriteBranch(const State& state, const Evaluated& e) const {
    const size_t nw = weights_.size();
    double most = 0;
    int slot = -1;
    for (int phase = 0; phase < 2; ++phase) {
      const Schedule& s = *(phase == 0 ? e.first : e.second).schedule;
      for (size_t i = 0; i < nw; ++i) {
        const ScheduledOp& op = s.ops[static_cast<size_t>(weights_[i].v)];
        const size_t at = RewriteSlot(nw, phase, i);
        const double writes = static_cast<double>(weights_[i].xb) * (phase == 0 ? 1.0 : p_.weight);
        if (state[at] == kFree && op.device == weights_[i].p && op.rewritten && writes > most) {
          most = writes;
          slot = static_cast<int>(at);
        }
      }
    }
    return slot;
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
State KeepOnly(const std::vector<Weight>& w, const SolveResult& r) {
  State s(3 * w.size(), kFree);
  std::fill(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(w.size()), kOut);
  for (size_t i = 0; i < w.size(); ++i) {
    const ScheduledOp& op = r.schedule->ops[static_cast<size_t>(w[i].v)];
    if (op.device == w[i].p && !op.rewritten) s[i] = kIn;
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
  HETPLAN_RETURN_IF_ERROR(CheckTwoPhaseMethod(a, method));
  Search search(problem, method, options);
  const size_t nw = search.weights().size();
  HETPLAN_ASSIGN_OR_RETURN(Evaluated root, search.Evaluate(State(3 * nw, kFree), 0.0, /*root=*/true));
  if (root.infeasible && root.second_over_cap > 0) {
    return Error(ErrorCode::kInfeasible,
                 "two phases: the second phase takes at least {:.6g} µs, over its cap of {:.6g} µs; raise the cap",
                 root.second_over_cap, *problem.second_cap_us);
  }
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
  using Open = std::pair<double, State>;
  auto worse = [](const Open& x, const Open& y) { return x.first > y.first; };
  std::priority_queue<Open, std::vector<Open>, decltype(worse)> open(worse);
  int64_t nodes = 1;
  Termination termination = Termination::kProved;
  const auto push_children = [&](const Evaluated& e, const State& state) {
    for (int8_t value : {kIn, kOut}) {
      State child = state;
      child[static_cast<size_t>(e.branch)] = value;
      open.emplace(e.lb, std::move(child));
    }
  };
  if (!root.fits && root.branch >= 0) push_children(root, State(3 * nw, kFree));
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
