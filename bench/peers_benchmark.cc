// hetplan's side of bench/peers.sh: writes each instance of the latency
// problem (the paper's: serial PUs, spatial PUs with a crossbar budget,
// transfers on PU changes) for the peers, and runs hetplan's three methods
// on it with one time limit and thread count:
//   exact      the exact search (hetplan's default method),
//   mip_cbc    the paper's MIP on CBC   (--solver mip --mip-backend cbc),
//   mip_highs  the paper's MIP on HiGHS (--solver mip --mip-backend highs).
// Per instance it writes DIR/<id>.json (PUs, operators' latencies and
// crossbars per PU, edges' transfers per PU pair, and the three results) and
// DIR/<id>.mps (the paper's MIP, written by CBC's writer, which SCIP reads).
// bench/peers.py then adds CP-SAT and SCIP and prints the table.
//
//   build/bench/peers_benchmark --out DIR [--models resnet18,...] [--platforms klein-arm,klein-x86]
//       [--crossbars 25,50,100,200] [--mvm 50,100,500,1000] [--limit 10] [--threads 2]
//       [--runs 20] [--warmup 5] [--methods exact,mip_cbc,mip_highs] [--zoo DIR]
//   build/bench/peers_benchmark --out DIR --random 40 [--seed 1] [--limit 10]
//       random instances of 2-6 operators on cpu + gpu + cim, for the peers' check
//       against brute force (bench/peers.py --check)
//
// Host costs come from the ONNX Runtime profiler through the profile cache
// (.cache/hetplan). Exit status 1 when a method fails or two proven optima
// of hetplan's methods differ by more than the gap.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_support.h"
#include "hetplan/app/plan.h"
#include "hetplan/solve/solver.h"

namespace {

namespace fs = std::filesystem;
using hetplan::CostModel;
using hetplan::SolveResult;
using hetplan::SolveStatus;

constexpr double kGap = 1e-4;

nlohmann::json NumOrNull(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

// The problem the peers model: refused (empty string: fine) when the cost
// model has what the paper's problem has not.
std::string Unsupported(const CostModel& c) {
  if (c.has_shared_adcs()) return "a shared ADC pool";
  if (c.has_reprogram()) return "reprogramming";
  for (int p = 0; p < c.num_pus(); ++p) {
    if (c.boundary_us(p) != 0) return "a segment boundary charge";
  }
  return "";
}

nlohmann::json InstanceJson(const hetplan::OpGraph& g, const CostModel& c) {
  nlohmann::json j;
  j["pus"] = nlohmann::json::array();
  for (const hetplan::PuInfo& pu : c.pus()) {
    j["pus"].push_back({{"name", pu.name}, {"spatial", pu.spatial}, {"capacity", pu.spatial ? pu.capacity : -1}});
  }
  j["ops"] = nlohmann::json::array();
  for (int v = 0; v < g.size(); ++v) {
    nlohmann::json lat = nlohmann::json::array(), xb = nlohmann::json::array();
    for (int p = 0; p < c.num_pus(); ++p) {
      lat.push_back(c.supported(v, p) ? nlohmann::json(c.latency_us(v, p)) : nlohmann::json(nullptr));
      xb.push_back(c.crossbars(v, p));
    }
    j["ops"].push_back({{"name", g.op(v).name}, {"latency_us", lat}, {"crossbars", xb}});
  }
  j["edges"] = nlohmann::json::array();
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    nlohmann::json t = nlohmann::json::array();
    for (int p = 0; p < c.num_pus(); ++p) {
      nlohmann::json row = nlohmann::json::array();
      for (int q = 0; q < c.num_pus(); ++q) row.push_back(c.transfer_us(e, p, q));
      t.push_back(row);
    }
    j["edges"].push_back({{"from", g.edges()[e].from}, {"to", g.edges()[e].to}, {"transfer_us", t}});
  }
  return j;
}

nlohmann::json ResultJson(const SolveResult& r) {
  const bool optimal = r.status == SolveStatus::kOptimal;
  return {{"status", hetplan::ToString(r.status)},
          {"schedule_us", r.schedule ? nlohmann::json(r.schedule->makespan_us) : nlohmann::json(nullptr)},
          {"bound_us", NumOrNull(r.bound)},
          {"gap", NumOrNull(r.gap)},
          {"seconds", r.seconds},
          {"time_to_optimal_s", optimal ? nlohmann::json(r.seconds) : nlohmann::json(nullptr)},
          {"solver", r.solver == "exact" ? "hetplan exact search" + (r.mip && !r.mip->backend.empty()
                                                                          ? " (fallback on " + r.mip->backend + ")"
                                                                          : std::string())
                                         : r.mip ? r.mip->backend : r.solver}};
}

struct Settings {
  std::string out;
  double limit = 10;
  int threads = 2;
  std::vector<std::string> methods = {"exact", "mip_cbc", "mip_highs"};
};

// Runs the methods on `p` (solve: the method name and options → result),
// writes <id>.json and <id>.mps; false on a failure or a disagreement.
template <typename SolveFn>
bool RunInstance(const Settings& s, const std::string& id, const hetplan::OpGraph& g, const CostModel& c,
                 nlohmann::json meta, SolveFn solve) {
  nlohmann::json j = InstanceJson(g, c);
  j.update(meta);
  j["id"] = id;
  j["limit_s"] = s.limit;
  j["threads"] = s.threads;
  j["gap"] = kGap;
  j["results"] = nlohmann::json::object();
  bool ok = true;
  std::vector<double> proven;
  for (const std::string& m : s.methods) {
    hetplan::SolveOptions so;
    so.relative_gap = kGap;
    so.time_limit_s = s.limit;
    so.threads = s.threads;
    std::string method = m;
    if (m != "exact") {
      method = "mip";
      so.mip.backend = m == "mip_highs" ? hetplan::MipBackend::kHighs : hetplan::MipBackend::kCbc;
      if (m == "mip_cbc") so.mip.write_mps = (fs::path(s.out) / (id + ".mps")).string();
    }
    auto r = solve(method, so);
    if (!r.ok()) {
      std::fprintf(stderr, "%s %s: %s\n", id.c_str(), m.c_str(), r.status().message().c_str());
      ok = false;
      continue;
    }
    j["results"][m] = ResultJson(*r);
    if (r->status == SolveStatus::kOptimal) proven.push_back(r->schedule->makespan_us);
    std::fprintf(stderr, "%s %s: %s %.3f µs, bound %.3f, %.2f s\n", id.c_str(), m.c_str(),
                 hetplan::ToString(r->status).c_str(), r->schedule ? r->schedule->makespan_us : NAN, r->bound,
                 r->seconds);
  }
  for (double x : proven) {
    if (std::fabs(x - proven.front()) > kGap * std::max(x, proven.front()) + 1e-9) {
      std::fprintf(stderr, "DISAGREEMENT %s: proven optima %.6f and %.6f\n", id.c_str(), x, proven.front());
      ok = false;
    }
  }
  std::ofstream(fs::path(s.out) / (id + ".json")) << j.dump(1) << "\n";
  return ok;
}

// A random DAG of n operators on cpu (serial, runs everything), gpu (serial,
// most) and cim (spatial, budget `capacity`), integral costs.
struct RandomInstance {
  hetplan::OpGraph graph;
  CostModel costs;
};

hetplan::Result<RandomInstance> MakeRandom(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<hetplan::Operator> ops(n);
  for (int i = 0; i < n; ++i) {
    ops[i].id = i;
    ops[i].name = "op" + std::to_string(i);
    ops[i].type = "Conv";
  }
  std::vector<hetplan::Edge> edges;
  const double density = 0.2 + 0.3 * unit(rng);
  for (int u = 0; u < n; ++u) {
    for (int v = u + 1; v < n; ++v) {
      if (unit(rng) < density) edges.push_back(hetplan::Edge{u, v, {"t" + std::to_string(u)}, 1, 4});
    }
  }
  HETPLAN_ASSIGN_OR_RETURN(hetplan::OpGraph g, hetplan::OpGraph::Create("random", std::move(ops), std::move(edges)));
  std::vector<hetplan::PuInfo> pus(3);
  pus[0].name = "cpu";
  pus[1].name = "gpu";
  pus[1].kind = hetplan::PuKind::kGpu;
  pus[2].name = "cim";
  pus[2].kind = hetplan::PuKind::kCim;
  pus[2].spatial = true;
  pus[2].capacity = 2 + static_cast<int64_t>(rng() % 12);
  CostModel c(n, pus, static_cast<int>(g.edges().size()));
  for (int v = 0; v < n; ++v) {
    c.set_latency(v, 0, static_cast<double>(5 + rng() % 95));
    if (unit(rng) < 0.7) c.set_latency(v, 1, static_cast<double>(2 + rng() % 60));
    if (unit(rng) < 0.6) {
      c.set_latency(v, 2, static_cast<double>(1 + rng() % 30));
      c.set_crossbars(v, 2, 1 + static_cast<int64_t>(rng() % 6));
    }
  }
  for (int e = 0; e < c.num_edges(); ++e) {
    for (int p = 0; p < 3; ++p) {
      for (int q = 0; q < 3; ++q) {
        if (p != q) c.set_transfer(e, p, q, static_cast<double>(rng() % 15));
      }
    }
  }
  return RandomInstance{std::move(g), std::move(c)};
}

int Usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: peers_benchmark --out DIR [--models resnet18,...] [--platforms klein-arm,klein-x86]\n"
               "  [--crossbars 25,50,100,200] [--mvm 50,100,500,1000] [--limit 10] [--threads 2] [--runs 20]\n"
               "  [--warmup 5] [--methods exact,mip_cbc,mip_highs] [--zoo DIR] [--random N --seed S]\n");
  return help ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  bench::Grid grid;
  grid.models = "resnet18,resnet50,mobilenetv2,yolov5n";
  int random = 0, seed = 1;
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") return Usage(true);
    if (i + 1 >= argc) return Usage(false);
    const std::string v = argv[i + 1];
    if (grid.Parse(k, v)) continue;
    if (k == "--out") s.out = v;
    else if (k == "--methods") s.methods = bench::Split(v);
    else if (k == "--limit") s.limit = std::stod(v);
    else if (k == "--threads") s.threads = std::stoi(v);
    else if (k == "--random") random = std::stoi(v);
    else if (k == "--seed") seed = std::stoi(v);
    else return Usage(false);
  }
  if (s.out.empty()) return Usage(false);
  fs::create_directories(s.out);
  int failures = 0;
  if (random > 0) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    for (int i = 0; i < random; ++i) {
      auto inst = MakeRandom(rng, 2 + static_cast<int>(rng() % 5));
      if (!inst.ok()) {
        std::fprintf(stderr, "%s\n", inst.status().message().c_str());
        return 1;
      }
      hetplan::Problem p;
      p.graph = &inst->graph;
      p.costs = &inst->costs;
      const auto solve = [&](const std::string& method, const hetplan::SolveOptions& so) {
        return hetplan::Solve(method, p, so);
      };
      failures += !RunInstance(s, fmt::format("random{:03d}", i), inst->graph, inst->costs,
                               {{"model", "random"}, {"platform", "cpu+gpu+cim"}}, solve);
    }
    return failures == 0 ? 0 : 1;
  }
  const int prepared = bench::ForEachGridPoint(grid, [&](const bench::GridPoint& pt, hetplan::PreparedProblem& pp) {
    if (const std::string why = Unsupported(pp.costs); !why.empty()) {
      std::fprintf(stderr, "%s on %s: the peers' models have no %s; skipped\n", pt.model.c_str(), pt.platform.c_str(),
                   why.c_str());
      return;
    }
    const auto solve = [&](const std::string& method, const hetplan::SolveOptions& so)
        -> hetplan::Result<SolveResult> {
      HETPLAN_ASSIGN_OR_RETURN(hetplan::PlanOutput out,
                               hetplan::PlanPartition(pp, method, hetplan::Objective::kLatency, std::nullopt, so));
      return out.result;
    };
    const std::string id = fmt::format("{}_{}_C{}_T{}", pt.model, pt.platform, pt.crossbars, pt.mvm_ns);
    failures += !RunInstance(s, id, pp.model.graph, pp.costs,
                             {{"model", pt.model}, {"platform", pt.platform}, {"crossbars", std::stoi(pt.crossbars)},
                              {"mvm_ns", std::stoi(pt.mvm_ns)}},
                             solve);
  });
  if (prepared != 0) return prepared;
  return failures == 0 ? 0 : 1;
}
