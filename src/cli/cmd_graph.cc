#include <cstdio>

#include "cli/commands.h"
#include "cli/model_options.h"
#include "hetplan/report/graph_report.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"

namespace hetplan::cli {

void RegisterGraph(CLI::App& app) {
  auto* sub = app.add_subcommand("graph", "Import an ONNX model and print its operator graph");
  struct Opts {
    ModelOptions model;
    std::string json, dot;
  };
  auto opts = std::make_shared<Opts>();
  AddModelOptions(sub, &opts->model);
  sub->add_option("--json", opts->json, "Write the graph as JSON (docs/graph-format.md)");
  sub->add_option("--dot", opts->dot, "Write the graph as Graphviz DOT");
  Register(sub, [opts]() -> int {
    auto model = LoadModel(opts->model);
    if (!model.ok()) return ReportError(model.status());
    if (!opts->json.empty()) {
      Status st = WriteFileAtomic(opts->json, GraphToJson(*model).dump(1) + "\n");
      if (!st.ok()) return ReportError(st);
    }
    if (!opts->dot.empty()) {
      Status st = WriteFileAtomic(opts->dot, GraphToDot(model->graph));
      if (!st.ok()) return ReportError(st);
    }
    std::fputs(GraphSummaryText(*model).c_str(), stdout);
    for (const auto& line : PlanAssumptionLines(model->assumptions)) std::printf("assumes    %s\n", line.c_str());
    return 0;
  });
}

}  // namespace hetplan::cli
