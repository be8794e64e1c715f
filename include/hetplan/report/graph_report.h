// Human and machine-readable views of an operator graph (docs/graph-format.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hetplan/graph/onnx_import.h"

namespace hetplan {

struct GraphStats {
  int operators = 0;
  int edges = 0;
  int64_t parallel_pairs = 0;
  int phases = 0;
  int parallel_phases = 0;
  int max_branches = 0;
};
GraphStats ComputeGraphStats(const OpGraph& g);

// {format, version, model{...}, stats{...}, operators[...], edges[...], phases[...]}.
nlohmann::json GraphToJson(const LoadedModel& m);
// Graphviz DOT, one node per operator.
std::string GraphToDot(const OpGraph& g);
// The table `hetplan graph` prints.
std::string GraphSummaryText(const LoadedModel& m);

}  // namespace hetplan
