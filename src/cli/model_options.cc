#include "cli/model_options.h"

namespace hetplan::cli {

void AddModelOptions(CLI::App* sub, ModelOptions* o) {
  sub->add_option("model", o->path, "ONNX model file")->required();
  sub->add_option("--fusion", o->fusion, "Operator fusion level: none | activation")
      ->default_val("none");
  sub->add_option("--shape", o->shapes, "Static shape for a graph input, e.g. input=1x3x224x224 (repeatable)");
  sub->add_option("--max-operators", o->max_operators, "Refuse models with more operators")
      ->default_val(100000);
  sub->add_option("--max-model-mib", o->max_model_mib, "Refuse model files larger than this many MiB")
      ->default_val(4096)
      ->check(CLI::PositiveNumber);
}

Result<ImportOptions> MakeImportOptions(const ModelOptions& o) {
  ImportOptions io;
  HETPLAN_ASSIGN_OR_RETURN(io.fusion, ParseFusionLevel(o.fusion));
  io.max_operators = o.max_operators;
  io.max_file_bytes = static_cast<int64_t>(o.max_model_mib * 1024 * 1024);
  for (const auto& s : o.shapes) {
    HETPLAN_ASSIGN_OR_RETURN(auto kv, ParseShapeOverride(s));
    io.input_shapes[kv.first] = kv.second;
  }
  return io;
}

Result<LoadedModel> LoadModel(const ModelOptions& o) {
  HETPLAN_ASSIGN_OR_RETURN(ImportOptions io, MakeImportOptions(o));
  return LoadOnnxModel(o.path, io);
}

}  // namespace hetplan::cli
