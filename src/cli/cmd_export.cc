#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "hetplan/deploy/export_openvino.h"
#include "hetplan/deploy/export_ort.h"
#include "hetplan/deploy/generation.h"

namespace hetplan::cli {

namespace {

int ExportGenai(const std::string& source, const std::string& out) {
  auto r = ExportOrtGenai(source, out);
  if (!r.ok()) return ReportError(r.status());
  std::printf("export     ONNX Runtime GenAI decoder-pipeline: %d stages (prefill on the prompt, decode on token "
              "generation)\n", r->stages);
  for (const auto& n : r->notes) std::printf("note       %s\n", n.c_str());
  std::printf("wrote      %s/genai_config.json (max_length %lld)\n", r->out_dir.c_str(),
              static_cast<long long>(r->config["search"]["max_length"].get<int64_t>()));
  return 0;
}

// "CPU 53, NPU 61": a count per name.
std::string CountsText(const std::map<std::string, int>& counts) {
  std::string text;
  for (const auto& [name, n] : counts) text += (text.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return text;
}

int ExportAffinity(const std::string& source, const std::string& out, const std::vector<std::string>& pairs,
                   const std::string& model) {
  auto devices = ParsePairs(pairs, "--device", "cim=NPU");
  if (!devices.ok()) return ReportError(devices.status());
  SplitOptions so;
  so.model_path = model;
  auto r = ExportOpenVinoAffinity(source, out, *devices, so);
  if (!r.ok()) return ReportError(r.status());
  std::printf("export     OpenVINO affinity: %d operations of %s (%s)\n", r->operations, r->model_file.c_str(),
              CountsText(r->per_device).c_str());
  std::printf("compile    on %s with each operation's rt_info[\"affinity\"] set from affinity.json\n",
              r->device.c_str());
  std::printf("wrote      %s/affinity.json and %s/hetero.json\n", out.c_str(), out.c_str());
  return 0;
}

int ExportOrtLayers(const std::string& source, const std::string& out, const std::vector<std::string>& pairs,
                    const std::string& model) {
  auto providers = ParsePairs(pairs, "--device", "cim=cuda");
  if (!providers.ok()) return ReportError(providers.status());
  SplitOptions so;
  so.model_path = model;
  auto r = ExportOrtLayerAssignment(source, out, *providers, so);
  if (!r.ok()) return ReportError(r.status());
  std::printf("export     ONNX Runtime layer assignment: nodes annotated per PU (%s)\n", CountsText(r->nodes).c_str());
  std::printf("session    session.layer_assignment_settings = \"%s\"\n", r->settings.c_str());
  std::printf("wrote      %s/model.onnx and %s/session.json: run them with hetplan run %s --one-session\n",
              out.c_str(), out.c_str(), out.c_str());
  return 0;
}

}  // namespace

void RegisterExport(CLI::App& app) {
  auto* sub = app.add_subcommand("export", "Hand a plan to the runtime that will run it, in that runtime's own format");
  struct Opts {
    std::string source, format, out, model;
    std::vector<std::string> devices;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("source", o->source,
                  "A schedule file (openvino-affinity, ort-layer-assignment), or a generation file (partition --llm) or the folder hetplan "
                  "split wrote from one (ort-genai)")
      ->required();
  sub->add_option("--format", o->format,
                  "ort-genai: ONNX Runtime GenAI's decoder-pipeline (genai_config.json); openvino-affinity: "
                  "OpenVINO HETERO's {operation: device} map (affinity.json); ort-layer-assignment: the model with "
                  "layer_ann node annotations and ONNX Runtime's session settings (model.onnx, session.json)")
      ->required();
  sub->add_option("--out", o->out, "Folder for the runtime's files")->required();
  sub->add_option("--device", o->devices,
                  "openvino-affinity: the OpenVINO device of a PU that is not runtime: openvino, PU=DEVICE "
                  "(repeatable), e.g. --device cim=NPU; ort-layer-assignment: the execution provider of a PU ONNX "
                  "Runtime does not run, e.g. --device cim=cuda");
  sub->add_option("--model", o->model, "The planned ONNX model, when not at the schedule's model.file");
  Register(sub, [o]() -> int {
    if (o->format == "ort-genai") return ExportGenai(o->source, o->out);
    if (o->format == "openvino-affinity") return ExportAffinity(o->source, o->out, o->devices, o->model);
    if (o->format == "ort-layer-assignment") return ExportOrtLayers(o->source, o->out, o->devices, o->model);
    return ReportError(Status(ErrorCode::kInvalidArgument, "export: --format '" + o->format +
                                                               "' is not one hetplan writes; give ort-genai, "
                                                               "openvino-affinity or ort-layer-assignment"));
  });
}

}  // namespace hetplan::cli
