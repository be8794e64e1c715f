#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "hetplan/deploy/generation.h"
#include "hetplan/deploy/split.h"
#include "hetplan/util/io.h"

namespace hetplan::cli {

namespace {

// What a split wrote: segments per PU, each segment, the predicted totals.
void PrintSplit(const SplitResult& split, const std::string& out) {
  const nlohmann::json& m = split.manifest;
  std::map<std::string, int> per_device;
  for (const auto& s : m["segments"]) ++per_device[s["device"].get<std::string>()];
  std::string devices;
  for (const auto& [name, n] : per_device) devices += fmt::format("{}{} {}", devices.empty() ? "" : ", ", name, n);
  std::printf("model     %s (%d operators, fusion %s)\n", m["model"]["file"].get<std::string>().c_str(),
              m["model"]["operators"].get<int>(), m["model"]["fusion"].get<std::string>().c_str());
  std::printf("segments  %d (%s), %d PU boundaries, %d tensor hand-offs\n", split.segments, devices.c_str(),
              split.boundaries, m["handoffs"].get<int>());
  std::printf("%4s  %-8s %-9s %5s %14s %7s %8s  %s\n", "seg", "device", "timing", "ops", "predicted_us", "inputs",
              "outputs", "file");
  for (const auto& s : m["segments"]) {
    std::printf("%4d  %-8s %-9s %5zu %14.1f %7zu %8zu  %s\n", s["id"].get<int>(),
                s["device"].get<std::string>().c_str(), s["timing"].get<std::string>().c_str(), s["operators"].size(),
                s["predicted_us"].get<double>(), s["inputs"].size(), s["outputs"].size(),
                s["file"].get<std::string>().c_str());
  }
  const auto& p = m["predicted"];
  std::printf(
      "predicted host %.1f µs, accelerators %.1f µs, transfers %.1f µs; sequential %.1f µs, schedule "
      "makespan %.1f µs\n",
      p["host_us"].get<double>(), p["accelerator_us"].get<double>(), p["transfer_us"].get<double>(),
      p["sequential_us"].get<double>(), p["makespan_us"].get<double>());
  if (m["schedule"]["violations"].get<int>() > 0) {
    std::printf(
        "note      the schedule has %d validation violations (hetplan validate lists them); the "
        "split follows its assignment and order anyway\n",
        m["schedule"]["violations"].get<int>());
  }
  std::printf("wrote     %s/manifest.json and %d sub-models\n", out.c_str(), split.segments);
}

// Whether `path` is a generation file (partition --llm); false when it cannot be read.
bool IsGenerationFile(const std::string& path) {
  auto text = ReadFile(path, int64_t{1} << 30);
  if (!text.ok()) return false;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  return j.is_object() && j.value("format", "") == kGenerationFormat;
}

int SplitGeneration(const std::string& path, const std::string& out, const SplitOptions& so) {
  auto split = SplitGenerationFile(path, out, so);
  if (!split.ok()) return ReportError(split.status());
  for (const auto& [phase, result] : {std::pair{"prefill", &split->prefill}, std::pair{"decode", &split->decode}}) {
    std::printf("--- %s (runs at every %s length)\n", phase, std::string(phase) == "prefill" ? "prompt" : "past");
    PrintSplit(*result, out + "/" + phase);
  }
  std::printf("wrote     %s/%s: run the generation with hetplan run %s --generate N\n", out.c_str(),
              kGenerationSplitFile, out.c_str());
  return 0;
}

}  // namespace

void RegisterSplit(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "split", "Split a planned model into one ONNX sub-model per PU segment, plus DIR/manifest.json");
  struct Opts {
    std::string schedule, out, model;
    std::vector<std::string> shapes;
    bool no_check = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("schedule", o->schedule, "Schedule JSON (hetplan partition --out)")->required();
  sub->add_option("--out", o->out, "Folder for the sub-models and manifest.json")->required();
  sub->add_option("--model", o->model, "The planned ONNX model, when not at the schedule's model.file");
  sub->add_option("--shape", o->shapes,
                  "Override a shape the schedule recorded (model.input_shapes), e.g. input=1x3x224x224 (repeatable)");
  sub->add_flag("--no-check", o->no_check, "Skip the ONNX checker on the sub-models");
  Register(sub, [o]() -> int {
    SplitOptions so;
    so.model_path = o->model;
    so.check = !o->no_check;
    for (const auto& s : o->shapes) {
      auto kv = ParseShapeOverride(s);
      if (!kv.ok()) return ReportError(kv.status());
      so.input_shapes[kv->first] = kv->second;
    }
    if (IsGenerationFile(o->schedule)) return SplitGeneration(o->schedule, o->out, so);
    auto split = SplitScheduleFile(o->schedule, o->out, so);
    if (!split.ok()) return ReportError(split.status());
    PrintSplit(*split, o->out);
    return 0;
  });
}

}  // namespace hetplan::cli
