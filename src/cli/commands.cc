#include "cli/commands.h"

#include <cstdio>
#include <map>

namespace hetplan::cli {
namespace {
std::map<CLI::App*, Runner>& Runners() {
  static std::map<CLI::App*, Runner> runners;
  return runners;
}
}  // namespace

void Register(CLI::App* sub, Runner run) { Runners()[sub] = std::move(run); }

void RegisterAll(CLI::App& app) {
  RegisterGraph(app);
  RegisterProfile(app);
  RegisterPartition(app);
  RegisterFrontier(app);
  RegisterSolvers(app);
  RegisterPlatform(app);
  RegisterValidate(app);
  RegisterMap(app);
  RegisterDse(app);
  RegisterReport(app);
  RegisterReproduce(app);
  RegisterSplit(app);
  RegisterRun(app);
  RegisterExport(app);
}

int RunSelected(CLI::App& app) {
  for (auto& [sub, run] : Runners()) {
    if (sub->parsed()) return run();
  }
  std::fprintf(stderr, "hetplan: error: no subcommand; see hetplan --help\n");
  return 2;
}

Result<std::map<std::string, std::string>> ParsePairs(const std::vector<std::string>& items, const std::string& flag,
                                                      const std::string& example) {
  std::map<std::string, std::string> out;
  for (const std::string& p : items) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size()) {
      return Error(ErrorCode::kInvalidArgument, "{} '{}': write KEY=VALUE, e.g. {} {}", flag, p, flag, example);
    }
    out[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return out;
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "hetplan: error: %s\n", status.message().c_str());
  switch (status.code()) {
    case ErrorCode::kInvalidArgument: return 2;
    case ErrorCode::kInternal: return 70;
    default: return 1;
  }
}

}  // namespace hetplan::cli
