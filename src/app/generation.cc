// LLM generation planned as one request (hetplan/app/generation.h).
#include "hetplan/app/generation.h"
#include "hetplan/deploy/generation.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "hetplan/solve/list_schedule.h"
#include "hetplan/solve/two_phase.h"
#include "hetplan/util/limits.h"
#include "hetplan/validate/validator.h"

namespace hetplan {
namespace {

// The phase's inputs: the decoder's inputs shaped for `sequence` new tokens
// after a past of `past` (the user's --shape for any other input kept).
PlanInputs PhaseInputs(const PlanInputs& in, const DecoderSignature& sig, int64_t sequence, int64_t past) {
  PlanInputs out = in;
  for (auto& [name, dims] : sig.Shapes(sequence, past)) out.import.input_shapes[name] = dims;
  return out;
}

// The phases plan one graph: the same operators (by name, at the same ids)
// and edges at every shape.
Status SameGraph(const LoadedModel& a, const LoadedModel& b, const std::string& what) {
  const OpGraph& x = a.graph;
  const OpGraph& y = b.graph;
  bool same = x.size() == y.size() && x.edges().size() == y.edges().size();
  for (int v = 0; same && v < x.size(); ++v) same = x.op(v).name == y.op(v).name;
  for (size_t e = 0; same && e < x.edges().size(); ++e) {
    same = x.edges()[e].from == y.edges()[e].from && x.edges()[e].to == y.edges()[e].to;
  }
  if (same) return Status::Ok();
  return Error(ErrorCode::kUnsupported,
               "{}: the graph at {} differs from the prefill's ({} operators, {} edges against {}, {}): shape-"
               "dependent control flow or folding; --llm needs one graph for every step",
               a.path, what, y.size(), y.edges().size(), x.size(), x.edges().size());
}

double Lerp(double a, double b, double t) { return a + (b - a) * t; }

// Costs between two shapes' costs of one graph: latencies and operator
// energies linear in `t` (0: a, 1: b), and with `transfers` the transfers and
// copies too; crossbars, and otherwise the transfers, are a's (the edges'
// bytes a plan records are a's shapes', and the validator prices them so).
CostModel Interpolate(const CostModel& a, const CostModel& b, double t, bool transfers = true) {
  CostModel c = a;
  for (int v = 0; v < a.num_ops(); ++v) {
    for (int p = 0; p < a.num_pus(); ++p) {
      if (!a.supported(v, p) || !b.supported(v, p)) continue;
      c.set_latency(v, p, Lerp(a.latency_us(v, p), b.latency_us(v, p), t));
      if (a.has_op_energy()) c.set_op_energy(v, p, Lerp(a.op_energy_uj(v, p), b.op_energy_uj(v, p), t));
      if (!transfers) continue;
      c.set_h2d(v, p, Lerp(a.h2d_us(v, p), b.h2d_us(v, p), t));
      c.set_d2h(v, p, Lerp(a.d2h_us(v, p), b.d2h_us(v, p), t));
    }
  }
  for (int e = 0; transfers && e < a.num_edges(); ++e) {
    for (int p = 0; p < a.num_pus(); ++p) {
      for (int q = 0; q < a.num_pus(); ++q) c.set_transfer(e, p, q, Lerp(a.transfer_us(e, p, q), b.transfer_us(e, p, q), t));
    }
  }
  return c;
}

// The operators a schedule keeps on each spatial PU.
std::map<int, std::set<int>> Resident(const Schedule& s, const CostModel& c) {
  std::map<int, std::set<int>> out;
  for (size_t v = 0; v < s.ops.size(); ++v) {
    const ScheduledOp& op = s.ops[v];
    if (op.device >= 0 && c.pu(op.device).spatial && !op.rewritten) out[op.device].insert(static_cast<int>(v));
  }
  return out;
}

int64_t CrossbarsOf(const std::set<int>& ops, const CostModel& c, int p) {
  int64_t n = 0;
  for (int v : ops) n += c.crossbars(v, p);
  return n;
}

// Per spatial PU (by index): the crossbars both phases keep (metrics).
std::map<int, int64_t> UnionCrossbars(const GenerationOutput& out) {
  std::map<int, int64_t> m;
  for (const auto& [name, xb] : out.crossbars) m[out.prefill.pp.costs.FindPu(name)] = xb;
  return m;
}

// A placement (with the operators it rewrites) and its dispatch order,
// re-timed on other costs of the graph.
struct Placement {
  std::vector<int> device, order;
  std::vector<char> rewritten;

  static Placement Of(const Schedule& s) {
    Placement p;
    ScheduleOrder(s, &p.device, &p.order);
    for (const ScheduledOp& op : s.ops) p.rewritten.push_back(op.rewritten ? 1 : 0);
    return p;
  }
  Schedule On(const OpGraph& g, const CostModel& costs) const {
    return ListSchedule(Problem{&g, &costs, Objective::kLatency, std::nullopt}, device, &order,
                        rewritten.empty() ? nullptr : &rewritten);
  }
};

// A phase's plan re-timed on other costs beside the other phase: each
// spatial PU's capacity less the crossbars the other phase alone keeps
// resident there (the union − what this plan keeps), which is what the
// plan's rewrites take turns in. Without rewrites the capacity plays no part
// in the timing, and the costs are used as they are.
class BesideOther {
 public:
  BesideOther(const OpGraph& g, const Schedule& s, const CostModel& c, const std::map<int, int64_t>& union_xb)
      : g_(g), at_(Placement::Of(s)) {
    if (std::none_of(s.ops.begin(), s.ops.end(), [](const ScheduledOp& op) { return op.rewritten; })) return;
    const auto own = Resident(s, c);
    for (const auto& [p, xb] : union_xb) {
      const auto it = own.find(p);
      const int64_t less = xb - (it == own.end() ? 0 : CrossbarsOf(it->second, c, p));
      if (less != 0) less_[p] = less;
    }
  }
  Schedule On(const CostModel& c) const {
    if (less_.empty()) return at_.On(g_, c);
    CostModel beside = c;
    for (const auto& [p, less] : less_) beside.mutable_pu(p).capacity -= less;
    return at_.On(g_, beside);
  }

 private:
  const OpGraph& g_;
  Placement at_;
  std::map<int, int64_t> less_;
};

// The rewrites of the plan on the reprogramming PU, and the hours of
// generation its free crossbars survive (wear-levelled, as one request's
// writes repeat at the planned request time).
std::optional<GenerationRewrites> RewritesOf(const GenerationOutput& out) {
  const CostModel& c = out.prefill.pp.costs;
  for (int p = 0; p < c.num_pus(); ++p) {
    const PuInfo& pu = c.pu(p);
    if (!pu.reprogram) continue;
    GenerationRewrites r;
    r.pu = pu.name;
    const Rewrites pre = RewritesOn(*out.prefill.plan.result.schedule, out.prefill.pp.costs, p);
    const Rewrites dec = RewritesOn(*out.decode.plan.result.schedule, out.decode.pp.costs, p);
    r.prefill_operators = pre.operators;
    r.prefill_crossbars = pre.written;
    r.decode_operators = dec.operators;
    r.decode_crossbars = dec.written;
    r.writes_per_request = r.prefill_crossbars + out.spec.new_tokens * r.decode_crossbars;
    r.free_crossbars = pu.capacity - out.crossbars.at(pu.name);
    r.endurance_writes = pu.endurance_writes;
    r.lifetime_requests = pu.lifetime_inferences;
    if (r.writes_per_request > 0) {
      r.requests_until_worn = pu.endurance_writes * static_cast<double>(r.free_crossbars) /
                              static_cast<double>(r.writes_per_request);
      r.endurance_hours = *r.requests_until_worn * out.request_us / 3.6e9;
    }
    return r;
  }
  return std::nullopt;
}

// Every decode step's costs, interpolated at its past length.
std::vector<CostModel> StepCosts(const CostModel& ca, const CostModel& cb, int64_t la, int64_t lb) {
  std::vector<CostModel> steps;
  for (int64_t l = la; l <= lb; ++l) {
    steps.push_back(Interpolate(ca, cb, lb == la ? 0.0 : static_cast<double>(l - la) / static_cast<double>(lb - la)));
  }
  return steps;
}

void Measure(const std::vector<CostModel>& steps, GenerationOutput* out) {
  const PlanOutput& pre = out->prefill.plan;
  const CostModel& ca = steps.front();
  const OpGraph& g = out->decode.pp.model.graph;
  const Schedule& planned = *out->decode.plan.result.schedule;
  auto resident = Resident(*pre.result.schedule, out->prefill.pp.costs);
  for (const auto& [p, ops] : Resident(planned, out->decode.pp.costs)) resident[p].insert(ops.begin(), ops.end());
  for (int p = 0; p < ca.num_pus(); ++p) {
    if (ca.pu(p).spatial) out->crossbars[ca.pu(p).name] = CrossbarsOf(resident[p], ca, p);
  }
  const BesideOther decode(g, planned, out->decode.pp.costs, UnionCrossbars(*out));
  out->ttft_us = pre.result.schedule->makespan_us;
  std::optional<double> decode_energy = 0.0;
  out->tpot_us.clear();
  out->decode_us = 0;
  for (const CostModel& c : steps) {
    const Schedule s = decode.On(c);
    out->tpot_us.push_back(s.makespan_us);
    out->decode_us += s.makespan_us;
    decode_energy = decode_energy && s.energy_uj ? std::optional<double>(*decode_energy + *s.energy_uj) : std::nullopt;
  }
  const double n = static_cast<double>(out->tpot_us.size());
  out->request_us = out->ttft_us + out->decode_us;
  out->tokens_per_s = out->decode_us > 0 ? n / out->decode_us * 1e6 : kInf;
  if (decode_energy && pre.result.schedule->energy_uj) {
    out->request_energy_uj = *pre.result.schedule->energy_uj + *decode_energy;
    out->energy_per_token_uj = *decode_energy / n;
  }
  out->rewrites = RewritesOf(*out);
}

// The request on one placement for both phases, each phase list-scheduled
// in its order and the decode re-timed at every step; NaN when it does not fit.
double RequestOn(const GenerationOutput& out, const std::vector<CostModel>& steps, const Placement& at) {
  const OpGraph& g = out.prefill.pp.model.graph;
  const CostModel& prefill = out.prefill.pp.costs;
  for (int v = 0; v < g.size(); ++v) {
    const int p = at.device[static_cast<size_t>(v)];
    if (!prefill.supported(v, p) || !steps.front().supported(v, p) || !steps.back().supported(v, p)) return kNaN;
  }
  // One placement's rewrites repeat in the prefill and every decode step.
  CostModel request = prefill;
  for (int p = 0; p < request.num_pus(); ++p) {
    request.mutable_pu(p).lifetime_inferences *= static_cast<double>(1 + out.spec.new_tokens);
  }
  if (!FitsCapacity(Problem{&g, &request, Objective::kLatency, std::nullopt}, at.device,
                    at.rewritten.empty() ? nullptr : &at.rewritten)) {
    return kNaN;
  }
  double total = at.On(g, prefill).makespan_us;
  for (const CostModel& c : steps) total += at.On(g, c).makespan_us;
  return total;
}

// The references: the best single PU for the whole request, and the better
// of the two phases' own placements kept for both.
void AddReferences(const std::vector<CostModel>& steps, GenerationOutput* out) {
  const OpGraph& g = out->prefill.pp.model.graph;
  for (int p = 0; p < steps.front().num_pus(); ++p) {
    const Placement all_on_p{std::vector<int>(static_cast<size_t>(g.size()), p), g.topological_order(), {}};
    const double r = RequestOn(*out, steps, all_on_p);
    if (std::isfinite(r) && !(r >= out->single_pu_request_us)) {
      out->single_pu_request_us = r;
      out->single_pu_ttft_us = all_on_p.On(g, out->prefill.pp.costs).makespan_us;
      out->single_pu = steps.front().pu(p).name;
    }
  }
  for (const GenerationPhase* from : {&out->prefill, &out->decode}) {
    const double r = RequestOn(*out, steps, Placement::Of(*from->plan.result.schedule));
    if (std::isfinite(r) && !(r >= out->one_placement_request_us)) {
      out->one_placement_request_us = r;
      out->one_placement_from = from == &out->prefill ? "prefill" : "decode";
    }
  }
}

// The two phases solved for the request's objective. Tokens/s is
// lexicographic: the decode step first (its pair's status, bound and gap are
// the file's), then the TTFT at that TPOT (noted in `out->coupling`, its
// seconds in `out->solve_seconds`), kept when it finds a pair.
Result<TwoPhaseResult> SolveRequest(TwoPhaseProblem both, const GenerationSpec& g, const PlanSpec& spec,
                                    GenerationOutput* out) {
  both.second_cap_us = g.max_tpot_us;
  if (g.objective == GenerationObjective::kTtft) both.second_coef = 0.0;
  if (g.objective != GenerationObjective::kTokensPerS) return SolveTwoPhase(both, spec.solver, spec.options);
  both.first_coef = 0;
  HETPLAN_ASSIGN_OR_RETURN(TwoPhaseResult r, SolveTwoPhase(both, spec.solver, spec.options));
  TwoPhaseProblem ttft = both;
  ttft.first_coef = 1;
  ttft.second_coef = 0.0;
  const double tpot = r.second.schedule->makespan_us;
  ttft.second_cap_us = std::min(tpot * (1 + 1e-9), g.max_tpot_us.value_or(kInf));
  auto t = SolveTwoPhase(ttft, spec.solver, spec.options);
  if (t.ok()) out->solve_seconds = t->seconds;
  if (!t.ok() || t->first.schedule->makespan_us >= r.first.schedule->makespan_us) {
    out->coupling = fmt::format("; then TTFT at TPOT {:.6g} µs: {}", tpot,
                                t.ok() ? "no shorter prefill" : std::string(t.status().message()));
  } else {
    out->coupling = fmt::format("; then TTFT at TPOT {:.6g} µs: {} ({} nodes)", tpot, ToString(t->status), t->nodes);
    r.first = std::move(t->first);
    r.second = std::move(t->second);
  }
  return r;
}

Status CheckRequest(const DecoderSignature& sig, const GenerationSpec& g, const PlanSpec& spec) {
  if (spec.objective != Objective::kLatency) {
    return Error(ErrorCode::kUnsupported,
                 "--llm plans the request for its own objective (--llm ...,objective=latency|tokens|ttft); drop "
                 "--objective {}",
                 ToString(spec.objective));
  }
  if (sig.max_positions && g.prompt + g.new_tokens > *sig.max_positions) {
    return Error(ErrorCode::kInvalidArgument,
                 "--llm prompt={},new={}: {} tokens, but {} holds {} positions ('{}'); give prompt + new ≤ {}",
                 g.prompt, g.new_tokens, g.prompt + g.new_tokens, sig.path, *sig.max_positions, sig.position_table,
                 *sig.max_positions);
  }
  return Status::Ok();
}

}  // namespace

std::string ToString(GenerationObjective o) {
  switch (o) {
    case GenerationObjective::kTokensPerS: return "tokens_per_s";
    case GenerationObjective::kTtft: return "ttft";
    case GenerationObjective::kRequestLatency: break;
  }
  return "request_latency";
}

Result<GenerationSpec> ParseGenerationSpec(std::string_view text) {
  GenerationSpec g;
  const auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kInvalidArgument,
                 "--llm '{}': {}; expected prompt=P,new=N[,objective=latency|tokens|ttft][,max_tpot=US], e.g. --llm "
                 "prompt=128,new=128 or --llm prompt=128,new=128,objective=ttft,max_tpot=50",
                 text, why);
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return bad(fmt::format("'{}' is not KEY=VALUE", item));
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "objective") {
      if (value == "latency") {
        g.objective = GenerationObjective::kRequestLatency;
      } else if (value == "tokens") {
        g.objective = GenerationObjective::kTokensPerS;
      } else if (value == "ttft") {
        g.objective = GenerationObjective::kTtft;
      } else {
        return bad(fmt::format("objective '{}' is none of latency, tokens, ttft", value));
      }
      continue;
    }
    if (key == "max_tpot") {
      double us = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), us);
      if (ec != std::errc() || ptr != value.data() + value.size() || !(us > 0) || !std::isfinite(us)) {
        return bad(fmt::format("max_tpot '{}' is not a number of µs > 0", value));
      }
      g.max_tpot_us = us;
      continue;
    }
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || v < 1) {
      return bad(fmt::format("'{}' is not a whole number ≥ 1", item));
    }
    if (key == "prompt") {
      g.prompt = v;
    } else if (key == "new") {
      g.new_tokens = v;
    } else {
      return bad(fmt::format("unknown key '{}'", key));
    }
  }
  if (g.prompt == 0 || g.new_tokens == 0) return bad("prompt and new are both needed");
  if (g.objective == GenerationObjective::kTtft && !g.max_tpot_us) return bad("objective=ttft needs max_tpot=US");
  return g;
}

Result<GenerationOutput> PlanGeneration(const PlanInputs& in, const GenerationSpec& g, const PlanSpec& spec) {
  GenerationOutput out;
  out.spec = g;
  HETPLAN_ASSIGN_OR_RETURN(out.signature, ReadDecoderSignature(in.model_path));
  const DecoderSignature& sig = out.signature;
  HETPLAN_RETURN_IF_ERROR(CheckRequest(sig, g, spec));
  TableCache cache;
  const int64_t la = g.prompt, lb = g.prompt + g.new_tokens - 1;
  HETPLAN_ASSIGN_OR_RETURN(out.prefill.pp, PrepareProblem(PhaseInputs(in, sig, g.prompt, 0), &cache));
  // Before the decode's costs are measured: the method must plan the platform's rewrites.
  HETPLAN_RETURN_IF_ERROR(CheckTwoPhaseMethod(out.prefill.pp.costs, spec.solver));
  HETPLAN_ASSIGN_OR_RETURN(out.decode.pp, PrepareProblem(PhaseInputs(in, sig, 1, la), &cache));
  HETPLAN_RETURN_IF_ERROR(SameGraph(out.prefill.pp.model, out.decode.pp.model, fmt::format("a past of {}", la)));
  const CostModel ca = out.decode.pp.costs;
  CostModel cb = ca;
  const auto costs_at = [&](int64_t past) -> Result<CostModel> {
    HETPLAN_ASSIGN_OR_RETURN(LoadedModel m, LoadOnnxModel(in.model_path, PhaseInputs(in, sig, 1, past).import));
    HETPLAN_RETURN_IF_ERROR(SameGraph(out.prefill.pp.model, m, fmt::format("a past of {}", past)));
    HETPLAN_ASSIGN_OR_RETURN(PreparedCosts pc, PrepareCosts(m, out.decode.pp.platform, in.costs, &cache));
    return std::move(pc.costs);
  };
  if (lb != la) {
    HETPLAN_ASSIGN_OR_RETURN(cb, costs_at(lb));
  }
  out.decode.pp.costs = Interpolate(ca, cb, 0.5, /*transfers=*/false);
  out.decode.pp.notes.push_back(fmt::format(
      "generation decode step: each operator's cost at the mean past length {:g} (linear between past {} and {}), "
      "N = {} steps; the shapes, and the transfers of their bytes, are past {}'s",
      0.5 * static_cast<double>(la + lb), la, lb, g.new_tokens, la));
  out.prefill.pp.notes.push_back(fmt::format("generation prefill: {} prompt tokens, an empty past", g.prompt));
  TwoPhaseProblem both{&out.prefill.pp.model.graph, &out.prefill.pp.costs, &out.decode.pp.costs,
                       static_cast<double>(g.new_tokens)};
  HETPLAN_ASSIGN_OR_RETURN(TwoPhaseResult r, SolveRequest(both, g, spec, &out));
  HETPLAN_ASSIGN_OR_RETURN(out.prefill.plan, PlanFromResult(out.prefill.pp.subject(), spec, std::move(r.first)));
  HETPLAN_ASSIGN_OR_RETURN(out.decode.plan, PlanFromResult(out.decode.pp.subject(), spec, std::move(r.second)));
  out.status = r.status == SolveStatus::kOptimal ? "optimal" : "feasible";
  out.termination = ToString(r.termination);
  out.bound_us = r.bound;
  out.gap = r.gap;
  out.solve_seconds += r.seconds;
  out.coupling = fmt::format("branch and bound over the weights both phases may keep: {} node{}, {} phase solves{}",
                             r.nodes, r.nodes == 1 ? "" : "s", r.solves, out.coupling);
  const std::vector<CostModel> steps = StepCosts(ca, cb, la, lb);
  Measure(steps, &out);
  AddReferences(steps, &out);
  out.kv_bytes = sig.KvBytes(g.prompt + g.new_tokens);
  if (lb - la >= 2) {
    const int64_t lm = la + (lb - la) / 2;
    HETPLAN_ASSIGN_OR_RETURN(const CostModel cm, costs_at(lm));
    out.check_past = lm;
    out.check_interpolated_us = out.tpot_us[static_cast<size_t>(lm - la)];
    out.check_obtained_us = BesideOther(out.decode.pp.model.graph, *out.decode.plan.result.schedule, out.decode.pp.costs,
                                        UnionCrossbars(out))
                                .On(cm)
                                .makespan_us;
  }
  return out;
}

nlohmann::json GenerationToJson(const GenerationOutput& out, const std::string& prefill_file,
                                const std::string& decode_file) {
  const auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : nlohmann::json(nullptr); };
  const nlohmann::json& pre = out.prefill.plan.schedule;
  nlohmann::json j;
  j["format"] = kGenerationFormat;
  j["version"] = 1;
  j["model"] = {{"file", pre["model"]["file"]}, {"sha256", pre["model"]["sha256"]}, {"layers", out.signature.layers.size()}};
  j["prompt"] = out.spec.prompt;
  j["new_tokens"] = out.spec.new_tokens;
  j["objective"] = ToString(out.spec.objective);
  if (out.spec.max_tpot_us) j["max_tpot_us"] = *out.spec.max_tpot_us;
  j["phases"] = {
      {"prefill", {{"schedule_file", prefill_file}, {"tokens", out.spec.prompt}, {"past", 0}}},
      {"decode",
       {{"schedule_file", decode_file},
        {"tokens", 1},
        {"past_first", out.spec.prompt},
        {"past_last", out.spec.prompt + out.spec.new_tokens - 1},
        {"planned_at_past", 0.5 * static_cast<double>(2 * out.spec.prompt + out.spec.new_tokens - 1)}}}};
  j["metrics"] = {{"ttft_us", out.ttft_us},
                  {"tpot_us", out.tpot_us},
                  {"tpot_first_us", out.tpot_us.front()},
                  {"tpot_last_us", out.tpot_us.back()},
                  {"decode_us", out.decode_us},
                  {"request_us", out.request_us},
                  {"tokens_per_s", num(out.tokens_per_s)},
                  {"request_energy_uj", opt(out.request_energy_uj)},
                  {"energy_per_token_uj", opt(out.energy_per_token_uj)},
                  {"kv_cache_bytes", out.kv_bytes},
                  {"crossbars", out.crossbars},
                  {"rewrites", nullptr}};
  if (out.rewrites) {
    const GenerationRewrites& r = *out.rewrites;
    j["metrics"]["rewrites"] = {
        {"pu", r.pu},
        {"prefill", {{"operators", r.prefill_operators}, {"crossbars", r.prefill_crossbars}}},
        {"decode", {{"operators", r.decode_operators}, {"crossbars", r.decode_crossbars}}},
        {"crossbar_writes_per_request", r.writes_per_request},
        {"free_crossbars", r.free_crossbars},
        {"endurance_writes", r.endurance_writes},
        {"lifetime_requests", r.lifetime_requests},
        {"requests_until_worn", opt(r.requests_until_worn)},
        {"endurance_hours", opt(r.endurance_hours)}};
  }
  j["solver"] = {{"method", out.prefill.plan.result.solver},
                 {"status", out.status},
                 {"termination", out.termination},
                 {"seconds", out.solve_seconds},
                 {"bound_us", num(out.bound_us)},
                 {"gap", num(out.gap)},
                 {"coupling", out.coupling}};
  j["references"] = {{"single_pu",
                      {{"pu", out.single_pu},
                       {"request_us", num(out.single_pu_request_us)},
                       {"ttft_us", num(out.single_pu_ttft_us)}}},
                     {"one_placement",
                      {{"from", out.one_placement_from}, {"request_us", num(out.one_placement_request_us)}}}};
  if (out.check_past) {
    j["interpolation_check"] = {{"past", *out.check_past},
                                {"tpot_interpolated_us", out.check_interpolated_us},
                                {"tpot_obtained_us", out.check_obtained_us}};
  }
  return j;
}

Result<nlohmann::json> CheckedGenerationJson(const GenerationOutput& out, const std::string& prefill_file,
                                             const std::string& decode_file, ValidationReport* report) {
  nlohmann::json file = GenerationToJson(out, prefill_file, decode_file);
  const ValidationReport v = ValidateGenerationJson(file, out.prefill.plan.schedule, out.decode.plan.schedule);
  if (report != nullptr) *report = v;
  if (!v.ok()) {
    return Error(ErrorCode::kInternal, "--llm: the generation plan fails the validator ({}; {} more); nothing written: "
                 "please report it", v.violations.front(), v.violations.size() - 1);
  }
  return file;
}

}  // namespace hetplan
