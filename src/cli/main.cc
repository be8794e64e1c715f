// The `hetplan` command: parses arguments (CLI11), calls the library, prints.
// Errors from the library arrive as values; exceptions stop here.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"hetplan — plans how an ONNX model runs on heterogeneous hardware (CPU + CIM, CPU/GPU/NPU)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hetplan 0.1.0");
  hetplan::cli::RegisterAll(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return hetplan::cli::RunSelected(app);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetplan: internal error: %s\n", e.what());
    return 70;
  }
}
