// `hetplan solvers`: every planning method of the registry and what it supports.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "hetplan/app/plan.h"
#include "hetplan/solve/solver.h"

namespace hetplan::cli {
namespace {

std::string Objectives(const MethodInfo& m) {
  std::string out;
  for (Objective o : m.objectives) out += (out.empty() ? "" : ",") + ToString(o);
  return out;
}

}  // namespace

void RegisterSolvers(CLI::App& app) {
  auto* sub = app.add_subcommand("solvers", "List every planning method and what it supports");
  auto json = std::make_shared<bool>(false);
  auto options = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print the list as JSON");
  sub->add_flag("--options", *options, "Print the planning options (a Markdown table), with defaults");
  Register(sub, [json, options]() -> int {
    if (*options) {
      std::fputs(SolveOptionTableMarkdown().c_str(), stdout);
      return 0;
    }
    const std::vector<MethodInfo> methods = ListSolvers();
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const MethodInfo& m : methods) out.push_back(MethodInfoToJson(m));
      std::printf("%s\n", out.dump(1).c_str());
      return 0;
    }
    std::printf("%-20s %-9s %-15s %-8s %-7s %-4s %-7s %-6s %-5s %s\n", "method", "family", "objectives", "requests",
                "spatial", "adcs", "rewrite", "proves", "limit", "what it does");
    for (const MethodInfo& m : methods) {
      std::printf("%-20s %-9s %-15s %-8d %-7s %-4s %-7s %-6s %-5s %s\n", m.name.c_str(), ToString(m.family).c_str(),
                  Objectives(m).c_str(), m.requests, m.spatial_pus ? "yes" : "no", m.shared_adcs ? "yes" : "no",
                  !m.reprogram ? "no" : m.family == MethodFamily::kBaseline ? "never" : "yes",
                  m.proves_optimality ? "yes" : "no", m.time_limit ? "yes" : "no", m.summary.c_str());
    }
    std::printf(
        "\nspatial: accepts crossbar-budget PUs (CIM). adcs: accepts a CIM whose operators share an ADC pool "
        "(shared_adcs; the exact search for latency only). rewrite: accepts a reprogramming CIM and rewrites operators "
        "(never: accepts it, keeps every operator resident). proves: can return status optimal with a proof (map: on a "
        "chain, under its accounting; map_concurrent: within its state space). limit: honours --time-limit and "
        "--gap. Old names: ilp = exact, --formulation paper = mip, pair:map = map_concurrent.\n");
    std::string backends;
    for (const MipBackendInfo& b : ListMipBackends()) {
      backends += fmt::format("{}{} ({})", backends.empty() ? "" : ", ", ToString(b.backend), b.version);
    }
    std::printf("MIP backends of this build (--mip-backend, for mip and exact's fallback): %s.\n", backends.c_str());
    return 0;
  });
}

}  // namespace hetplan::cli
