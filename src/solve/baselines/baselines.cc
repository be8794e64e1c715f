// The papers' baselines (docs/baselines.md). Each rule produces candidate
// assignments; every candidate is list-scheduled with the shared CostModel
// and the best one under the problem's objective is returned.
#include "hetplan/solve/baselines.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/solver.h"
#include "hetplan/util/limits.h"
#include "solve/backends.h"
#include "solve/mapping/internal.h"

namespace hetplan {
namespace {


// The objective-specific price of one operator on one PU: latency (µs) or
// energy (µJ); +inf when unsupported or (energy) the PU has no power.
double ObjectiveCost(const Problem& p, int v, int pu) {
  const CostModel& c = *p.costs;
  if (!c.supported(v, pu)) return kInf;
  if (p.objective == Objective::kLatency) return c.latency_us(v, pu);
  const auto e = c.energy_uj(v, pu);
  return e ? *e : kInf;
}

// v can run on pu on its own: supported and, on a spatial PU, within the
// whole capacity.
bool Fits(const CostModel& c, int v, int pu) {
  if (!c.supported(v, pu)) return false;
  return !c.pu(pu).spatial || c.crossbars(v, pu) <= c.pu(pu).capacity;
}

// The host: the first serial PU of kind "cpu", else the first serial PU,
// else PU 0.
int HostPu(const CostModel& c) {
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.pu(p).kind == PuKind::kCpu && !c.pu(p).spatial) return p;
  }
  for (int p = 0; p < c.num_pus(); ++p) {
    if (!c.pu(p).spatial) return p;
  }
  return 0;
}

using Price = std::function<double(int, int)>;

// The PU with the lowest cost (`price`, else the objective's) among those
// that fit v alone; ties to the lowest index. -1 when none (ValidateProblem
// rules that out).
int BestPu(const Problem& p, int v, int exclude = -1, const Price& price = {}) {
  int best = -1;
  double best_cost = kInf;
  for (int q = 0; q < p.costs->num_pus(); ++q) {
    if (q == exclude || !Fits(*p.costs, v, q)) continue;
    const double cost = price ? price(v, q) : ObjectiveCost(p, v, q);
    if (best < 0 || cost < best_cost) {
      best = q;
      best_cost = cost;
    }
  }
  return best;
}

// Assigns operators in topological order, each to the first PU of its
// preference list that can take it given the crossbars left; then the host;
// then its best PU. Returns false when some operator fits nowhere.
class Placer {
 public:
  explicit Placer(const Problem& p) : p_(p), c_(*p.costs), left_(c_.num_pus(), 0), a_(c_.num_ops(), -1) {
    for (int q = 0; q < c_.num_pus(); ++q) left_[q] = c_.pu(q).spatial ? c_.pu(q).capacity : 0;
    host_ = HostPu(c_);
  }
  bool CanTake(int v, int q) const {
    if (!c_.supported(v, q)) return false;
    return !c_.pu(q).spatial || c_.crossbars(v, q) <= left_[q];
  }
  void Take(int v, int q) {
    a_[v] = q;
    if (c_.pu(q).spatial) left_[q] -= c_.crossbars(v, q);
  }
  // Places v on the first of `prefs` that can take it, else the host, else
  // the cheapest PU with room.
  bool Place(int v, std::initializer_list<int> prefs) {
    for (int q : prefs) {
      if (q >= 0 && CanTake(v, q)) {
        Take(v, q);
        return true;
      }
    }
    if (CanTake(v, host_)) {
      Take(v, host_);
      return true;
    }
    int best = -1;
    for (int q = 0; q < c_.num_pus(); ++q) {
      if (CanTake(v, q) && (best < 0 || ObjectiveCost(p_, v, q) < ObjectiveCost(p_, v, best))) best = q;
    }
    if (best < 0) return false;
    Take(v, best);
    return true;
  }
  bool PlaceList(int v, const std::vector<int>& prefs) {
    for (int q : prefs) {
      if (CanTake(v, q)) {
        Take(v, q);
        return true;
      }
    }
    return Place(v, {});
  }
  int host() const { return host_; }
  std::vector<int>& assignment() { return a_; }

 private:
  const Problem& p_;
  const CostModel& c_;
  std::vector<int64_t> left_;
  std::vector<int> a_;
  int host_ = 0;
};

struct Candidate {
  std::vector<int> assignment;
  Schedule schedule;
  double value = kInf;  // the objective: makespan or energy
  std::string label;
};

// Keeps the best candidate under the objective (ties: lower makespan, then
// the first seen). Candidates over the latency cap are counted and dropped.
class Best {
 public:
  explicit Best(const Problem& p) : p_(p) {}

  // `pricing`: the problem the rule uses to choose (HaX-CoNN's contention-
  // adjusted costs); the kept schedule is always priced with p_.
  // `order`: the dispatch order (a topological order; default the graph's).
  void Offer(const std::vector<int>& a, const std::string& label, const Problem* pricing = nullptr,
             const std::vector<int>* order = nullptr) {
    ++offered_;
    if (!FitsCapacity(p_, a)) return;
    const Problem& q = pricing ? *pricing : p_;
    Schedule s = ListSchedule(q, a, order);
    if (p_.latency_cap_us && s.makespan_us > *p_.latency_cap_us * (1 + 1e-9)) {
      ++over_cap_;
      return;
    }
    double value = s.makespan_us;
    if (p_.objective == Objective::kEnergy) {
      if (!s.energy_uj) return;
      value = *s.energy_uj;
    }
    if (best_ && !(value < best_->value || (value == best_->value && s.makespan_us < best_->schedule.makespan_us))) {
      return;
    }
    if (pricing) s = ListSchedule(p_, a, order);
    best_ = Candidate{a, std::move(s), value, label};
  }
  const std::optional<Candidate>& best() const { return best_; }
  int offered() const { return offered_; }
  int over_cap() const { return over_cap_; }

 private:
  const Problem& p_;
  std::optional<Candidate> best_;
  int offered_ = 0, over_cap_ = 0;
};

std::string PuName(const Problem& p, int q) { return p.costs->pu(q).name; }

Status NeedPower(const Problem& p, const std::string& name) {
  if (p.objective != Objective::kEnergy) return Status::Ok();
  for (int q = 0; q < p.costs->num_pus(); ++q) {
    if (!p.costs->pu(q).power_w) {
      return Error(
          ErrorCode::kUnsupported,
          "{}: the energy objective needs power_w on every PU, and PU '{}' has none; set it (--set {}.power_w=…) "
          "or use the latency objective",
          name, p.costs->pu(q).name, p.costs->pu(q).name);
    }
  }
  return Status::Ok();
}

SolveResult Finish(const std::string& name, const Problem& p, const Best& best, std::vector<std::string> notes) {
  SolveResult r;
  r.solver = name;
  r.formulation = "baseline";
  if (!best.best()) {
    r.status = SolveStatus::kNoSolution;
    notes.push_back(best.over_cap() > 0 ? fmt::format("no candidate meets the latency cap ({} of {} over it)",
                                                      best.over_cap(), best.offered())
                                        : std::string("no candidate fits the capacity"));
    r.notes = std::move(notes);
    return r;
  }
  const Candidate& c = *best.best();
  r.status = SolveStatus::kHeuristic;
  r.schedule = c.schedule;
  r.objective =
      p.objective == Objective::kLatency ? c.schedule.makespan_us : c.schedule.energy_uj.value_or(std::nan(""));
  if (!c.label.empty()) notes.push_back(fmt::format("{}: {}", name, c.label));
  if (best.offered() > 1) notes.push_back(fmt::format("{}: best of {} candidates", name, best.offered()));
  r.notes = std::move(notes);
  return r;
}

// ---------------------------------------------------------------------------
// The rules.

Result<SolveResult> Single(const Problem& p, const std::string& name, const std::string& pu_name) {
  const CostModel& c = *p.costs;
  const int q = c.FindPu(pu_name);
  if (q < 0) {
    std::string names;
    for (const PuInfo& pu : c.pus()) names += (names.empty() ? "" : ", ") + pu.name;
    return Error(ErrorCode::kInvalidArgument, "{}: no PU '{}' on this platform; PUs: {}", name, pu_name, names);
  }
  int unsupported = 0;
  std::string first;
  for (int v = 0; v < c.num_ops(); ++v) {
    if (!c.supported(v, q)) {
      if (unsupported++ == 0) first = p.graph->op(v).name + " (" + p.graph->op(v).type + ")";
    }
  }
  if (unsupported > 0) {
    return Error(ErrorCode::kUnsupported, "{}: PU '{}' cannot run {} of {} operators (first: {})", name, pu_name,
                 unsupported, c.num_ops(), first);
  }
  std::vector<int> a(c.num_ops(), q);
  if (!FitsCapacity(p, a)) {
    int64_t need = 0;
    for (int v = 0; v < c.num_ops(); ++v) need += c.crossbars(v, q);
    return Error(ErrorCode::kUnsupported, "{}: the model needs {} crossbars on '{}', which has {}", name, need, pu_name,
                 c.pu(q).capacity);
  }
  HETPLAN_RETURN_IF_ERROR(NeedPower(p, name));
  Best best(p);
  best.Offer(a, "every operator on " + pu_name);
  return Finish(name, p, best, {});
}

Result<SolveResult> BestSingle(const Problem& p) {
  HETPLAN_RETURN_IF_ERROR(NeedPower(p, "best_single"));
  const CostModel& c = *p.costs;
  Best best(p);
  std::vector<std::string> notes;
  for (int q = 0; q < c.num_pus(); ++q) {
    std::vector<int> a(c.num_ops(), q);
    bool all = true;
    for (int v = 0; v < c.num_ops() && all; ++v) all = c.supported(v, q);
    if (!all || !FitsCapacity(p, a)) {
      notes.push_back(fmt::format("best_single: {} cannot run the whole model", c.pu(q).name));
      continue;
    }
    best.Offer(a, "every operator on " + c.pu(q).name);
  }
  if (!best.best() && best.offered() == 0) {
    return Error(ErrorCode::kUnsupported, "best_single: no PU can run every operator of the model");
  }
  return Finish("best_single", p, best, std::move(notes));
}

Result<SolveResult> Greedy(const Problem& p) {
  HETPLAN_RETURN_IF_ERROR(NeedPower(p, "greedy"));
  const CostModel& c = *p.costs;
  std::vector<int> a(c.num_ops());
  for (int v = 0; v < c.num_ops(); ++v) a[v] = BestPu(p, v);
  std::vector<int> before = a;
  RepairCapacity(p, a);
  int moved = 0;
  for (int v = 0; v < c.num_ops(); ++v) moved += a[v] != before[v];
  Best best(p);
  best.Offer(a, moved ? fmt::format("{} operators moved off a full spatial PU", moved) : "");
  return Finish("greedy", p, best, {});
}

Result<SolveResult> TypePolicy(const Problem& p) {
  HETPLAN_RETURN_IF_ERROR(NeedPower(p, "type_policy"));
  const CostModel& c = *p.costs;
  const OpGraph& g = *p.graph;
  // Per type: the PU whose total cost over the type's operators is lowest,
  // where an operator the PU cannot run is priced on its own best PU (where it
  // would fall back).
  std::vector<std::string> types;
  for (const Operator& op : g.operators()) {
    if (std::find(types.begin(), types.end(), op.type) == types.end()) types.push_back(op.type);
  }
  std::vector<int> a(c.num_ops(), -1);
  std::vector<std::string> policy;
  for (const std::string& t : types) {
    int winner = -1;
    double winner_cost = kInf;
    for (int q = 0; q < c.num_pus(); ++q) {
      double sum = 0;
      bool any = false;
      for (int v = 0; v < g.size(); ++v) {
        if (g.op(v).type != t) continue;
        if (Fits(c, v, q)) {
          sum += ObjectiveCost(p, v, q);
          any = true;
        } else {
          sum += ObjectiveCost(p, v, BestPu(p, v));
        }
      }
      if (any && (winner < 0 || sum < winner_cost)) {
        winner = q;
        winner_cost = sum;
      }
    }
    policy.push_back(fmt::format("{}→{}", t, winner >= 0 ? c.pu(winner).name : "?"));
    for (int v = 0; v < g.size(); ++v) {
      if (g.op(v).type == t) a[v] = winner >= 0 && Fits(c, v, winner) ? winner : BestPu(p, v);
    }
  }
  RepairCapacity(p, a);
  Best best(p);
  best.Offer(a, fmt::format("policy {}", fmt::join(policy, ", ")));
  return Finish("type_policy", p, best, {});
}

Result<SolveResult> Neurosurgeon(const Problem& p) {
  HETPLAN_RETURN_IF_ERROR(NeedPower(p, "neurosurgeon"));
  const CostModel& c = *p.costs;
  const OpGraph& g = *p.graph;
  const std::vector<int>& topo = g.topological_order();
  const int n = g.size();
  const int host = HostPu(c);
  Best best(p);
  for (int q = 0; q < c.num_pus(); ++q) {
    if (q == host && c.num_pus() > 1) continue;
    for (int k = 0; k <= n; ++k) {
      Placer placer(p);
      bool ok = true;
      for (int i = 0; i < n && ok; ++i) ok = i < k ? placer.Place(topo[i], {host}) : placer.Place(topo[i], {q});
      if (!ok) continue;
      const std::string label =
          k == n   ? fmt::format("no split: everything on {}", PuName(p, host))
          : k == 0 ? fmt::format("split before the first operator: everything {} can take on it", PuName(p, q))
                   : fmt::format("split after '{}' ({} of {} operators on {}), the rest offloaded to {}",
                                 g.op(topo[k - 1]).name, k, n, PuName(p, host), PuName(p, q));
      best.Offer(placer.assignment(), label);
    }
  }
  return Finish("neurosurgeon", p, best, {});
}

Result<SolveResult> Hetero(const Problem& p, const BaselineOptions& o) {
  HETPLAN_RETURN_IF_ERROR(NeedPower(p, "hetero"));
  const CostModel& c = *p.costs;
  if (c.num_pus() > o.hetero_max_pus) {
    return Error(ErrorCode::kUnsupported, "hetero: {} PUs means {}! priority orderings; at most {} PUs are tried",
                 c.num_pus(), c.num_pus(), o.hetero_max_pus);
  }
  std::vector<int> order(c.num_pus());
  std::iota(order.begin(), order.end(), 0);
  Best best(p);
  do {
    Placer placer(p);
    bool ok = true;
    for (int v : p.graph->topological_order()) {
      if (!(ok = placer.PlaceList(v, order))) break;
    }
    if (!ok) continue;
    std::vector<std::string> names;
    for (int q : order) names.push_back(PuName(p, q));
    best.Offer(placer.assignment(), fmt::format("priority {}", fmt::join(names, " > ")));
  } while (std::next_permutation(order.begin(), order.end()));
  return Finish("hetero", p, best, {});
}

Result<SolveResult> HaxConn(const Problem& p) {
  HETPLAN_RETURN_IF_ERROR(NeedPower(p, "haxconn"));
  const CostModel& c = *p.costs;
  const OpGraph& g = *p.graph;
  const std::vector<int>& topo = g.topological_order();
  const int n = g.size(), k = c.num_pus();
  Best best(p);
  std::vector<std::string> notes;
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b) {
      if (a == b && k > 1) continue;
      // Model-level contention: while the model uses a and b, every operator
      // on one of them is stretched by the slowdown the other causes, whether
      // or not they overlap (HaX-CoNN's static per-device factors).
      CostModel priced = c;
      bool stretched = false;
      if (a != b) {
        for (int v = 0; v < n; ++v) {
          for (auto [run, other] : {std::pair{a, b}, std::pair{b, a}}) {
            const double f = c.slowdown(run, other);
            if (f != 1.0 && c.supported(v, run)) {
              priced.set_latency(v, run, c.latency_us(v, run) * f);
              stretched = true;
            }
          }
        }
      }
      Problem pricing = p;
      pricing.costs = &priced;
      // Positions [0, split) on a, [split, n) on b; an operator its segment's
      // PU cannot take goes to the other one of the pair, then the host.
      for (int split = 0; split <= n; ++split) {
        Placer placer(p);
        bool ok = true;
        for (int i = 0; i < n && ok; ++i) {
          ok = i < split ? placer.Place(topo[i], {a, b}) : placer.Place(topo[i], {b, a});
        }
        if (!ok) continue;
        std::string label = split == 0   ? fmt::format("no switch: everything on {}", PuName(p, b))
                            : split == n ? fmt::format("no switch: everything on {}", PuName(p, a))
                                         : fmt::format("switch {} → {} after '{}' ({} of {} operators)", PuName(p, a),
                                                       PuName(p, b), g.op(topo[split - 1]).name, split, n);
        best.Offer(placer.assignment(), label, stretched ? &pricing : nullptr);
      }
    }
  }
  bool any_factor = false;
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b) any_factor = any_factor || (a != b && c.slowdown(a, b) != 1.0);
  }
  notes.push_back(any_factor ? "haxconn: chosen under model-level contention factors; makespan re-priced without them"
                             : "haxconn: the cost model has no contention factors (all 1)");
  return Finish("haxconn", p, best, std::move(notes));
}

Result<SolveResult> AxoNN(const Problem& p, const BaselineOptions& o) {
  const CostModel& c = *p.costs;
  const OpGraph& g = *p.graph;
  const int n = g.size(), k = c.num_pus();
  if (k < 2) return Error(ErrorCode::kUnsupported, "axonn: needs two PUs, the platform has {}", k);
  if (o.axonn_max_switches < 0 || o.axonn_max_switches > 2) {
    return Error(ErrorCode::kInvalidArgument, "axonn: max switches {} must be 0, 1 or 2", o.axonn_max_switches);
  }
  // The two fastest PUs: total latency over the model, an operator the PU
  // cannot run priced at its latency on the host (where it would fall back).
  const int host = HostPu(c);
  std::vector<std::pair<double, int>> speed;
  for (int q = 0; q < k; ++q) {
    double sum = 0;
    for (int v = 0; v < n; ++v) sum += Fits(c, v, q) ? c.latency_us(v, q) : c.latency_us(v, host);
    speed.emplace_back(sum, q);
  }
  std::stable_sort(speed.begin(), speed.end());
  const int pu[2] = {speed[0].second, speed[1].second};
  for (int q : pu) {
    if (!c.pu(q).power_w) {
      return Error(ErrorCode::kUnsupported,
                   "axonn: minimises energy, but PU '{}' (one of the two fastest) has no power_w; set it "
                   "(--set {}.power_w=…) to run this baseline",
                   c.pu(q).name, c.pu(q).name);
    }
  }
  // AxoNN always minimises energy, whatever the problem's objective; the
  // latency cap, when given, still applies.
  Problem energy = p;
  energy.objective = Objective::kEnergy;
  const std::vector<int>& topo = g.topological_order();
  // prefix[b][i]: energy of topological positions [0, i) when their block
  // uses pu[b] (an operator pu[b] cannot run falls back to the other PU, then
  // the host), ignoring how the crossbars run out (checked when placing).
  std::vector<double> prefix[2];
  for (int b = 0; b < 2; ++b) {
    prefix[b].assign(n + 1, 0.0);
    for (int i = 0; i < n; ++i) {
      const int v = topo[i];
      int q = Fits(c, v, pu[b]) ? pu[b] : Fits(c, v, pu[1 - b]) ? pu[1 - b] : Fits(c, v, host) ? host : BestPu(p, v);
      const auto e = q >= 0 ? c.energy_uj(v, q) : std::nullopt;
      prefix[b][i + 1] = prefix[b][i] + (e ? *e : kInf);
    }
  }
  // Blocks [0, i) on F, [i, j) on the other PU S, [j, n) on F: up to two
  // switches; i == j is F alone, i == 0 starts on S, j == n ends on S.
  struct Config {
    double energy;
    int first, i, j;
  };
  std::vector<Config> configs;
  for (int f = 0; f < 2; ++f) {
    const std::vector<double>& pf = prefix[f];
    const std::vector<double>& ps = prefix[1 - f];
    for (int i = 0; i <= n; ++i) {
      for (int j = i; j <= n; ++j) {
        if (i == j && i > 0) continue;  // F alone: once, as i == j == 0
        const int switches = (i == j) ? 0 : (i > 0) + (j < n);
        if (switches > o.axonn_max_switches) continue;
        configs.push_back({pf[i] + (ps[j] - ps[i]) + (pf[n] - pf[j]), f, i, j});
      }
    }
  }
  std::stable_sort(configs.begin(), configs.end(),
                   [](const Config& x, const Config& y) { return x.energy < y.energy; });
  Best best(energy);
  constexpr int kMaxPlaced = 20000;
  int placed = 0;
  for (const Config& cfg : configs) {
    if (!std::isfinite(cfg.energy)) break;
    if (best.best() && cfg.energy > best.best()->value * (1 + 1e-12)) break;
    if (++placed > kMaxPlaced) break;
    Placer placer(p);
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) {
      const int b = (i >= cfg.i && i < cfg.j) ? 1 - cfg.first : cfg.first;
      ok = placer.Place(topo[i], {pu[b], pu[1 - b]});
    }
    if (!ok) continue;
    std::string label = fmt::format("blocks over {} and {}:", c.pu(pu[0]).name, c.pu(pu[1]).name);
    const int f = cfg.first;
    auto block = [&](int from, int to, int b) {
      if (from < to) label += fmt::format(" [{}..{}]→{}", from, to - 1, c.pu(pu[b]).name);
    };
    block(0, cfg.i, f);
    block(cfg.i, cfg.j, 1 - f);
    block(cfg.j, n, f);
    best.Offer(placer.assignment(), label);
  }
  SolveResult r = Finish("axonn", energy, best,
                         {fmt::format("axonn: minimum energy, contiguous blocks of a topological order over the two "
                                      "fastest PUs ({}, {}), at most {} switches",
                                      c.pu(pu[0]).name, c.pu(pu[1]).name, o.axonn_max_switches)});
  if (r.schedule && p.objective == Objective::kLatency) r.objective = r.schedule->makespan_us;
  return r;
}

Result<SolveResult> PairBaseline(const Problem& both, bool serial) {
  const std::string name = serial ? "pair_serial" : "pair_naive_multi_pu";
  HETPLAN_RETURN_IF_ERROR(NeedPower(both, name));
  // Naive multi-PU: the requests run at once, so it is priced and written as
  // the concurrent mapping prices its plans (co-execution costs while both
  // run); its makespan is the naive reference (references.h).
  if (!serial) return mapping_internal::SolveBestPlacement(both, name);
  const CostModel& c = *both.costs;
  const int n = c.num_ops(), k = c.num_pus();
  const int n0 = both.requests->split;
  // Request 0 first, then request 1: "back to back" on one PU.
  std::vector<int> order;
  for (int r = 0; r < 2; ++r) {
    for (int v : both.graph->topological_order()) {
      if ((v < n0) == (r == 0)) order.push_back(v);
    }
  }
  Best best(both);
  for (int p = 0; p < k; ++p) {
    bool runs = true;
    for (int v = 0; v < n; ++v) runs = runs && c.supported(v, p);
    if (!runs) continue;
    best.Offer(std::vector<int>(static_cast<size_t>(n), p),
               fmt::format("both requests back to back on {}", PuName(both, p)), nullptr, &order);
  }
  if (best.offered() == 0) {
    return Error(ErrorCode::kUnsupported, "{}: no PU runs every operator of both requests", name);
  }
  SolveResult r = Finish(name, both, best, {});
  if (r.schedule) {
    for (int v = n0; v < n; ++v) r.schedule->ops[v].request = 1;
  }
  return r;
}

MethodInfo BaselineInfo(std::string name, std::string summary, int requests = 1) {
  MethodInfo m;
  m.name = std::move(name);
  m.summary = std::move(summary);
  m.family = MethodFamily::kBaseline;
  m.objectives = {Objective::kLatency, Objective::kEnergy};
  m.requests = requests;
  m.schedule_mode = requests == 2 ? "pair-baseline" : "partition";
  // BIDENT's two-request setting: serial PUs whose copies fold into the operator costs.
  m.spatial_pus = requests == 1;
  // Every one-request rule times its assignment with ListSchedule, which waits for the pool.
  m.shared_adcs = requests == 1;
  // A reprogramming PU is accepted and never used so: every operator stays resident.
  m.reprogram = requests == 1;
  m.docs = "docs/baselines.md";
  return m;
}

// A baseline rule as a planner.
using Rule = Result<SolveResult> (*)(const Problem&, const BaselineOptions&);

class BaselineSolver final : public Solver {
 public:
  BaselineSolver(MethodInfo info, Rule rule) : info_(std::move(info)), rule_(rule) {}
  const MethodInfo& info() const override { return info_; }
  Result<SolveResult> SolveValidated(const Problem& problem, const SolveOptions& options,
                                     const Deadline& /*deadline*/) const override {
    return rule_(problem, options.baseline);
  }

 private:
  MethodInfo info_;
  Rule rule_;
};

class SingleSolver final : public Solver {
 public:
  explicit SingleSolver(const std::string& pu) : info_(backends::SingleFamilyInfo()), pu_(pu) {
    info_.name = "single:" + pu;
  }
  const MethodInfo& info() const override { return info_; }
  Result<SolveResult> SolveValidated(const Problem& problem, const SolveOptions& /*options*/,
                                     const Deadline& /*deadline*/) const override {
    return Single(problem, info_.name, pu_);
  }

 private:
  MethodInfo info_;
  std::string pu_;
};

}  // namespace

void RepairCapacity(const Problem& p, std::vector<int>& a, const std::function<double(int, int)>& cost) {
  const CostModel& c = *p.costs;
  const Price price = cost ? cost : Price([&p](int v, int q) { return ObjectiveCost(p, v, q); });
  const int n = c.num_ops();
  for (int q = 0; q < c.num_pus(); ++q) {
    if (!c.pu(q).spatial) continue;
    int64_t used = 0;
    for (int v = 0; v < n; ++v) used += a[v] == q ? c.crossbars(v, q) : 0;
    if (used <= c.pu(q).capacity) continue;
    // Operators with no other PU must stay; the rest compete for what is left
    // by saving per crossbar (a fractional-knapsack order).
    struct Item {
      int v;
      int alt;
      double density;
      int64_t xb;
    };
    std::vector<Item> items;
    int64_t left = c.pu(q).capacity;
    for (int v = 0; v < n; ++v) {
      if (a[v] != q) continue;
      const int alt = BestPu(p, v, q, price);
      const int64_t xb = c.crossbars(v, q);
      if (alt < 0 || xb == 0) {
        left -= xb;
        continue;
      }
      const double saving = price(v, alt) - price(v, q);
      items.push_back({v, alt, saving / static_cast<double>(xb), xb});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.density > y.density; });
    for (const Item& it : items) {
      if (it.density > 0 && it.xb <= left) {
        left -= it.xb;
      } else {
        a[it.v] = it.alt;
      }
    }
  }
  // A move may have overfilled another spatial PU; send its overflow to the
  // best serial PU.
  for (int q = 0; q < c.num_pus(); ++q) {
    if (!c.pu(q).spatial) continue;
    int64_t used = 0;
    for (int v = 0; v < n; ++v) {
      if (a[v] != q) continue;
      if (used + c.crossbars(v, q) <= c.pu(q).capacity) {
        used += c.crossbars(v, q);
        continue;
      }
      int best = -1;
      for (int r = 0; r < c.num_pus(); ++r) {
        if (!c.pu(r).spatial && c.supported(v, r) && (best < 0 || price(v, r) < price(v, best))) best = r;
      }
      if (best >= 0) a[v] = best;
    }
  }
}

namespace backends {

std::vector<std::unique_ptr<Solver>> MakeBaselineSolvers() {
  std::vector<std::unique_ptr<Solver>> out;
  auto add = [&](std::string name, std::string summary, Rule rule, int requests = 1) {
    out.push_back(std::make_unique<BaselineSolver>(BaselineInfo(std::move(name), std::move(summary), requests), rule));
  };
  add("best_single", "the best whole-model-on-one-PU schedule", [](const Problem& p, const BaselineOptions&) {
    return BestSingle(p);
  });
  add("greedy", "each operator on its cheapest PU, capacity repaired", [](const Problem& p, const BaselineOptions&) {
    return Greedy(p);
  });
  add("type_policy", "each operator type on the PU that wins for that type (static policy)",
      [](const Problem& p, const BaselineOptions&) { return TypePolicy(p); });
  add("neurosurgeon", "Neurosurgeon: one split point, prefix on the host, suffix offloaded",
      [](const Problem& p, const BaselineOptions&) { return Neurosurgeon(p); });
  add("hetero", "OpenVINO HETERO: first PU of a priority list; every ordering tried", &Hetero);
  add("haxconn", "HaX-CoNN: at most one PU switch, under model-level contention",
      [](const Problem& p, const BaselineOptions&) { return HaxConn(p); });
  add("axonn", "AxoNN: contiguous blocks on the two fastest PUs, minimum energy", &AxoNN);
  add("pair_serial", "two requests back to back on the best single PU (homogeneous serial)",
      [](const Problem& p, const BaselineOptions&) { return PairBaseline(p, true); }, 2);
  add("pair_naive_multi_pu", "two requests, each whole on its own PU of the best pair (naive multi-PU)",
      [](const Problem& p, const BaselineOptions&) { return PairBaseline(p, false); }, 2);
  return out;
}

MethodInfo SingleFamilyInfo() { return BaselineInfo("single:<pu>", "every operator on the named PU"); }

std::unique_ptr<Solver> MakeSingleSolver(const std::string& pu) { return std::make_unique<SingleSolver>(pu); }

}  // namespace backends
}  // namespace hetplan
