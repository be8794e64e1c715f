// The generation file's checks (hetplan/validate/validator.h): both phases'
// schedule files as any schedule, then what joins them, from the files alone.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "hetplan/util/io.h"
#include "hetplan/validate/validator.h"
#include "validate/validator_internal.h"

namespace hetplan {
namespace {

using Json = nlohmann::json;
using validate_internal::Near;
using validate_internal::Text;

// A number at `key` of `j`, or NaN (a violation names it).
double NumberOrNaN(const Json& j, const char* key) { return validate_internal::Number(j, key).value_or(NAN); }

int64_t Int(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

Json Member(const Json& j, const char* key) { return j.is_object() && j.contains(key) ? j[key] : Json(); }

// Per spatial device of `s`: its capacity, and each operator it keeps
// resident (no write), with its crossbars.
void ResidentOps(const Json& s, std::map<std::string, int64_t>* capacity,
                 std::map<std::string, std::map<std::string, int64_t>>* resident) {
  const Json devices = Member(s, "devices"), operators = Member(s, "operators");
  for (const Json& d : devices.is_array() ? devices : Json::array()) {
    if (d.is_object() && Text(d, "execution") == "spatial" && d.contains("capacity_crossbars") &&
        d["capacity_crossbars"].is_number_integer()) {
      (*capacity)[Text(d, "name")] = d["capacity_crossbars"].get<int64_t>();
    }
  }
  for (const Json& o : operators.is_array() ? operators : Json::array()) {
    if (!o.is_object() || o.contains("write") || !o.contains("crossbars") || !o["crossbars"].is_number_integer()) {
      continue;
    }
    const std::string dev = Text(o, "device");
    if (capacity->count(dev)) (*resident)[dev][Text(o, "name")] = o["crossbars"].get<int64_t>();
  }
}

// The metrics against each other and against the phases' files.
void CheckMetrics(const Json& g, const Json& prefill, const Json& decode, std::vector<std::string>& out) {
  const Json m = Member(g, "metrics");
  const int64_t n = Int(g, "new_tokens");
  if (!Near(NumberOrNaN(m, "ttft_us"), NumberOrNaN(prefill, "makespan_us"))) {
    out.push_back(fmt::format("generation: metrics.ttft_us {} is not the prefill's makespan {}", NumberOrNaN(m, "ttft_us"),
                              NumberOrNaN(prefill, "makespan_us")));
  }
  const Json tpot = Member(m, "tpot_us");
  if (!tpot.is_array() || static_cast<int64_t>(tpot.size()) != n) {
    out.push_back(fmt::format("generation: metrics.tpot_us has {} steps, new_tokens is {}",
                              tpot.is_array() ? tpot.size() : 0, n));
    return;
  }
  double sum = 0;
  for (const Json& t : tpot) sum += t.is_number() && t.get<double>() >= 0 ? t.get<double>() : NAN;
  if (!std::isfinite(sum)) {
    out.push_back("generation: metrics.tpot_us holds a value that is not a number ≥ 0");
    return;
  }
  const double decode_us = NumberOrNaN(m, "decode_us");
  if (!Near(sum, decode_us)) out.push_back(fmt::format("generation: metrics.decode_us {} is not Σ tpot_us {}", decode_us, sum));
  if (!Near(NumberOrNaN(m, "request_us"), NumberOrNaN(m, "ttft_us") + decode_us)) {
    out.push_back("generation: metrics.request_us is not ttft_us + decode_us");
  }
  if (n > 0 && (!Near(NumberOrNaN(m, "tpot_first_us"), tpot.front().get<double>()) ||
                !Near(NumberOrNaN(m, "tpot_last_us"), tpot.back().get<double>()))) {
    out.push_back("generation: metrics.tpot_first_us / tpot_last_us are not tpot_us's first and last steps");
  }
  if (decode_us > 0 && !Near(NumberOrNaN(m, "tokens_per_s"), static_cast<double>(n) / decode_us * 1e6)) {
    out.push_back(fmt::format("generation: metrics.tokens_per_s {} is not new_tokens / decode_us ({})",
                              NumberOrNaN(m, "tokens_per_s"), static_cast<double>(n) / decode_us * 1e6));
  }
  // A step's makespan is convex in costs linear in the past (the maximum of
  // path lengths), so the plan at the mean past is at most the mean step.
  const double planned = NumberOrNaN(decode, "makespan_us");
  if (n > 0 && !(planned <= decode_us / static_cast<double>(n) * (1 + 1e-6) + 1e-9)) {
    out.push_back(fmt::format("generation: the decode plan's makespan {} exceeds the mean step {} (a step's time is "
                              "convex in the past length)",
                              planned, decode_us / static_cast<double>(n)));
  }
}

// Per spatial device: its capacity and the crossbars of the weights either
// phase keeps there (each weight once).
struct Kept {
  int64_t capacity = 0, used = 0;
};
std::map<std::string, Kept> KeptCrossbars(const Json& prefill, const Json& decode) {
  std::map<std::string, int64_t> capacity;
  std::map<std::string, std::map<std::string, int64_t>> resident;
  ResidentOps(prefill, &capacity, &resident);
  ResidentOps(decode, &capacity, &resident);
  std::map<std::string, Kept> out;
  for (const auto& [dev, cap] : capacity) {
    Kept& k = out[dev];
    k.capacity = cap;
    for (const auto& [name, xb] : resident[dev]) k.used += xb;
  }
  return out;
}

// The weights either phase keeps on a spatial device fit it together.
void CheckCrossbars(const Json& g, const std::map<std::string, Kept>& kept, std::vector<std::string>& out) {
  const Json reported = Member(Member(g, "metrics"), "crossbars");
  for (const auto& [dev, k] : kept) {
    if (k.used > k.capacity) {
      out.push_back(fmt::format("generation: device {}: the phases keep {} crossbars of weights together, over its {}",
                                dev, k.used, k.capacity));
    }
    if (!reported.is_object() || !reported.contains(dev) || !reported[dev].is_number_integer() ||
        reported[dev].get<int64_t>() != k.used) {
      out.push_back(fmt::format("generation: metrics.crossbars.{} is not the {} crossbars both phases keep", dev, k.used));
    }
  }
}

// A phase's rewrites on device `dev`: the crossbars written each time the
// phase runs, and the most held at once (each from its write's start to its
// finish).
std::pair<int64_t, int64_t> PhaseRewrites(const Json& s, const std::string& dev) {
  int64_t written = 0, now = 0, peak = 0;
  std::vector<std::pair<double, int64_t>> events;  // ends before starts at one time
  const Json ops = Member(s, "operators");
  for (const Json& o : ops.is_array() ? ops : Json::array()) {
    if (!o.is_object() || !o.contains("write") || Text(o, "device") != dev) continue;
    const int64_t xb = Int(o, "crossbars");
    written += xb;
    events.emplace_back(NumberOrNaN(o, "start_us"), xb);
    events.emplace_back(NumberOrNaN(o, "finish_us"), -xb);
  }
  std::sort(events.begin(), events.end());
  for (const auto& [t, d] : events) peak = std::max(peak, now += d);
  return {written, peak};
}

// On a reprogramming device: each phase's rewrites at once fit beside the
// weights both phases keep; both phases' writes (the prefill's once, the
// decode's N times a request) within the endurance budget over the lifetime's
// requests; and metrics.rewrites as they say.
void CheckRewrites(const Json& g, const Json& prefill, const Json& decode, const std::map<std::string, Kept>& kept,
                   std::vector<std::string>& out) {
  const Json m = Member(g, "metrics");
  const double n = static_cast<double>(Int(g, "new_tokens"));
  const Json devices = Member(prefill, "devices");
  bool any = false;
  for (const Json& d : devices.is_array() ? devices : Json::array()) {
    if (!d.is_object() || !d.contains("reprogram") || !kept.count(Text(d, "name"))) continue;
    any = true;
    const std::string dev = Text(d, "name");
    const int64_t free = kept.at(dev).capacity - kept.at(dev).used;
    const auto [a, peak_a] = PhaseRewrites(prefill, dev);
    const auto [b, peak_b] = PhaseRewrites(decode, dev);
    for (const auto& [phase, peak] : {std::pair{"prefill", peak_a}, std::pair{"decode", peak_b}}) {
      if (peak > free) {
        out.push_back(fmt::format("generation: device {}: the {} rewrites {} crossbars at once, but the weights both "
                                  "phases keep leave {}",
                                  dev, phase, peak, free));
      }
    }
    const double lifetime = NumberOrNaN(d["reprogram"], "lifetime_inferences");
    const double endurance = NumberOrNaN(d["reprogram"], "endurance_writes");
    const double per_request = static_cast<double>(a) + n * static_cast<double>(b);
    if (per_request > 0 && !(lifetime * per_request <= endurance * static_cast<double>(free) * (1 + 1e-9))) {
      out.push_back(fmt::format("generation: device {}: {} requests × {} crossbar writes each (prefill {} + {} × "
                                "decode {}) exceed {} writes × the {} free crossbars",
                                dev, lifetime, per_request, a, n, b, endurance, free));
    }
    const Json r = Member(m, "rewrites");
    const double hours = per_request > 0 ? endurance * static_cast<double>(free) / per_request *
                                               NumberOrNaN(m, "request_us") / 3.6e9
                                         : NAN;
    const Json reported_hours = Member(r, "endurance_hours");
    const bool hours_ok = per_request > 0 ? Near(NumberOrNaN(r, "endurance_hours"), hours) : reported_hours.is_null();
    if (Text(r, "pu") != dev || Int(Member(r, "prefill"), "crossbars") != a || Int(Member(r, "decode"), "crossbars") != b ||
        Int(r, "crossbar_writes_per_request") != static_cast<int64_t>(per_request) || Int(r, "free_crossbars") != free ||
        !hours_ok) {
      out.push_back(fmt::format("generation: metrics.rewrites is not device {}'s: prefill {} + {} × decode {} crossbar "
                                "writes a request over {} free crossbars, {} hours",
                                dev, a, n, b, free, hours));
    }
  }
  if (!any && !Member(m, "rewrites").is_null()) {
    out.push_back("generation: metrics.rewrites is given, but no device reprograms");
  }
}

// The objective's value (request_latency: TTFT + N × TPOT; tokens_per_s:
// N × TPOT; ttft: TTFT), with a TPOT bound met; status, bound and gap as the
// phases' solvers gave them.
void CheckSolver(const Json& g, const Json& prefill, const Json& decode, std::vector<std::string>& out) {
  const Json s = Member(g, "solver");
  const double n = static_cast<double>(Int(g, "new_tokens"));
  const double ttft = NumberOrNaN(prefill, "makespan_us"), tpot = NumberOrNaN(decode, "makespan_us");
  const std::string objective = Text(g, "objective");
  double planned = ttft + n * tpot;
  const char* what = "TTFT + N × TPOT";
  if (objective == "tokens_per_s") {
    planned = n * tpot;
    what = "N × TPOT";
  } else if (objective == "ttft") {
    planned = ttft;
    what = "TTFT";
  } else if (objective != "request_latency") {
    out.push_back(fmt::format("generation: objective '{}' is none of request_latency, tokens_per_s, ttft", objective));
  }
  if (g.is_object() && g.contains("max_tpot_us")) {
    const double cap = NumberOrNaN(g, "max_tpot_us");
    if (!(tpot <= cap * (1 + 1e-6) + 1e-9)) {
      out.push_back(fmt::format("generation: the decode plan's TPOT {} exceeds max_tpot_us {}", tpot, cap));
    }
  } else if (objective == "ttft") {
    out.push_back("generation: objective ttft without max_tpot_us");
  }
  const double bound = NumberOrNaN(s, "bound_us");
  if (std::isfinite(bound) && bound > planned * (1 + 1e-6) + 1e-9) {
    out.push_back(fmt::format("generation: solver.bound_us {} exceeds the planned {} {}", bound, what, planned));
  }
  if (Text(s, "status") == "optimal" && !(NumberOrNaN(s, "gap") <= 1e-9 && Near(bound, planned))) {
    out.push_back(fmt::format("generation: solver.status is optimal but its bound is not the planned {}", what));
  }
}

void CheckSameModel(const Json& g, const Json& prefill, const Json& decode, std::vector<std::string>& out) {
  const std::string sha = Text(Member(g, "model"), "sha256");
  for (const auto& [name, s] : {std::pair<const char*, const Json*>{"prefill", &prefill}, {"decode", &decode}}) {
    if (Text(Member(*s, "model"), "sha256") != sha) {
      out.push_back(fmt::format("generation: the {} schedule plans another model than model.sha256", name));
    }
  }
  const Json a = Member(prefill, "operators"), b = Member(decode, "operators");
  bool same = a.is_array() && b.is_array() && a.size() == b.size();
  for (size_t i = 0; same && i < a.size(); ++i) same = a[i].is_object() && b[i].is_object() && Text(a[i], "name") == Text(b[i], "name");
  if (!same) out.push_back("generation: the prefill and decode schedules do not list the same operators");
}

}  // namespace

ValidationReport ValidateGenerationJson(const Json& g, const Json& prefill, const Json& decode) {
  ValidationReport r;
  if (!g.is_object() || Text(g, "format") != "hetplan-generation") {
    r.violations.push_back("generation: format is not \"hetplan-generation\"");
    return r;
  }
  for (const char* key : {"prompt", "new_tokens"}) {
    if (!g.contains(key) || !g[key].is_number_integer() || g[key].get<int64_t>() < 1) {
      r.violations.push_back(fmt::format("generation: {} is not a whole number ≥ 1", key));
      return r;
    }
  }
  for (const auto& [name, s] : {std::pair<const char*, const Json*>{"prefill", &prefill}, {"decode", &decode}}) {
    ValidationReport phase = ValidateScheduleJson(*s);
    for (const std::string& v : phase.violations) r.violations.push_back(fmt::format("{}: {}", name, v));
    r.operators += phase.operators;
    r.edges += phase.edges;
  }
  CheckSameModel(g, prefill, decode, r.violations);
  CheckMetrics(g, prefill, decode, r.violations);
  const std::map<std::string, Kept> kept = KeptCrossbars(prefill, decode);
  CheckCrossbars(g, kept, r.violations);
  CheckRewrites(g, prefill, decode, kept, r.violations);
  CheckSolver(g, prefill, decode, r.violations);
  return r;
}

Result<ValidationReport> ValidateGenerationFile(const Json& g, const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  Json phase[2];
  const char* names[2] = {"prefill", "decode"};
  for (int i = 0; i < 2; ++i) {
    const Json p = Member(Member(g, "phases"), names[i]);
    const std::string file = Text(p, "schedule_file");
    if (file.empty()) {
      return Error(ErrorCode::kParseError, "{}: phases.{}.schedule_file is missing; give a file written by "
                   "hetplan partition --llm", path, names[i]);
    }
    HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile((dir / file).string(), int64_t{1} << 30));
    phase[i] = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (phase[i].is_discarded()) {
      return Error(ErrorCode::kParseError, "{}: not valid JSON; expected the {} schedule of {}", (dir / file).string(),
                   names[i], path);
    }
  }
  return ValidateGenerationJson(g, phase[0], phase[1]);
}

}  // namespace hetplan
