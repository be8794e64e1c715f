// Options shared by every command that reads a model.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hetplan/graph/onnx_import.h"

namespace hetplan::cli {

struct ModelOptions {
  std::string path;
  std::string fusion = "none";
  std::vector<std::string> shapes;
  int max_operators = 100000;
  double max_model_mib = 4096;  // larger files are refused before they are read
};

void AddModelOptions(CLI::App* sub, ModelOptions* o);
Result<ImportOptions> MakeImportOptions(const ModelOptions& o);
Result<LoadedModel> LoadModel(const ModelOptions& o);

}  // namespace hetplan::cli
