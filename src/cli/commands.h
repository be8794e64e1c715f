#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hetplan/util/status.h"

namespace hetplan {
struct PlanInputs;
struct PlanSpec;
}  // namespace hetplan

namespace hetplan::cli {

// Each command file registers its subcommand and the function that runs it.
using Runner = std::function<int()>;
void Register(CLI::App* sub, Runner run);
void RegisterAll(CLI::App& app);
int RunSelected(CLI::App& app);

// Prints "hetplan: error: <message>" on stderr; returns the exit code for it.
int ReportError(const Status& status);

// KEY=VALUE options (--device cim=NPU) as a map; one line naming the flag
// and the bad item otherwise.
Result<std::map<std::string, std::string>> ParsePairs(const std::vector<std::string>& items, const std::string& flag,
                                                      const std::string& example);

// Subcommand registration, one per file.
void RegisterGraph(CLI::App& app);
void RegisterProfile(CLI::App& app);
void RegisterPartition(CLI::App& app);
void RegisterValidate(CLI::App& app);
void RegisterMap(CLI::App& app);
void RegisterDse(CLI::App& app);
void RegisterReport(CLI::App& app);
void RegisterReproduce(CLI::App& app);
void RegisterSplit(CLI::App& app);
void RegisterRun(CLI::App& app);
void RegisterExport(CLI::App& app);
void RegisterSolvers(CLI::App& app);
void RegisterFrontier(CLI::App& app);
void RegisterPlatform(CLI::App& app);

// `partition --llm` (cmd_generation.cc): plans, prints and, with `out`, writes
// the generation file and its phases' schedule files; the exit code.
int PartitionGeneration(const PlanInputs& in, const PlanSpec& spec, const std::string& llm, const std::string& out);

}  // namespace hetplan::cli
