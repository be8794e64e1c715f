// A generation plan split into its two phases (include/hetplan/deploy/generation.h).
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hetplan/deploy/generation.h"
#include "hetplan/graph/decoder.h"
#include "hetplan/plan/plan_file.h"
#include "hetplan/report/schedule_file.h"
#include "hetplan/util/io.h"
#include "hetplan/validate/validator.h"
#include "deploy/split_internal.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

Result<nlohmann::json> ReadJsonFile(const std::string& path, const std::string& what) {
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path, int64_t{1} << 30));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorCode::kParseError, "{}: not valid JSON ({}); give {}", path, OneLine(e.what()), what);
  }
}

// The phase's schedule file: as the generation file names it, relative to its folder.
std::string PhaseFile(const nlohmann::json& gen, const std::string& path, const std::string& phase) {
  const std::string file = gen["phases"][phase].value("schedule_file", "");
  if (fs::path(file).is_absolute()) return file;
  return (fs::path(path).parent_path() / file).string();
}

// The decoder's interface as the loop feeds it, and its logits output.
Result<nlohmann::json> Interface(const DecoderSignature& sig, const nlohmann::json& manifest, const std::string& label) {
  std::set<std::string> presents;
  nlohmann::json layers = nlohmann::json::array();
  for (const KvLayer& l : sig.layers) {
    presents.insert(l.present_key);
    presents.insert(l.present_value);
    layers.push_back({{"past_key", l.past_key}, {"past_value", l.past_value}, {"present_key", l.present_key},
                      {"present_value", l.present_value}});
  }
  std::string logits;
  for (const auto& o : manifest["outputs"]) {
    const std::string name = o["name"].get<std::string>();
    if (presents.count(name)) continue;
    if (!logits.empty()) {
      return Error(ErrorCode::kUnsupported,
                   "{}: the decoder has two outputs besides its presents ('{}', '{}'); the generation loop takes the "
                   "next token from one logits output", label, logits, name);
    }
    logits = name;
  }
  if (logits.empty()) {
    return Error(ErrorCode::kUnsupported, "{}: the decoder has no output besides its presents (no logits)", label);
  }
  // The past at length 0, as the prefill feeds it (the split's prefill may
  // hold it as a constant: an empty input is known).
  nlohmann::json empty_past = nlohmann::json::object();
  const auto shapes = sig.Shapes(1, 0);
  for (const KvLayer& l : sig.layers) {
    for (const std::string* name : {&l.past_key, &l.past_value}) empty_past[*name] = shapes.at(*name);
  }
  return nlohmann::json{{"tokens", sig.tokens},
                        {"empty_past", empty_past},
                        {"kv_elem_type", sig.kv_elem_type},
                        {"embeddings", sig.hidden > 0},
                        {"attention_mask", sig.attention_mask},
                        {"position_ids", sig.position_ids},
                        {"layers", layers},
                        {"logits", logits},
                        {"max_positions", sig.max_positions ? nlohmann::json(*sig.max_positions) : nlohmann::json()}};
}

// Every tensor's planned shape: the operators' inputs and outputs, the graph's.
std::map<std::string, std::vector<int64_t>> TensorShapes(const OpGraph& g) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const Operator& op : g.operators()) {
    for (const auto* list : {&op.inputs, &op.outputs}) {
      for (const auto& t : *list) out.emplace(t.name, t.shape);
    }
  }
  for (const auto& t : g.graph_inputs()) out.emplace(t.name, t.shape);
  for (const auto& t : g.graph_outputs()) out.emplace(t.name, t.shape);
  return out;
}

}  // namespace

Result<GenerationSplit> SplitGenerationFile(const std::string& path, const std::string& out_dir,
                                            const SplitOptions& options) {
  HETPLAN_ASSIGN_OR_RETURN(const nlohmann::json gen, ReadJsonFile(path, "a generation file (partition --llm)"));
  if (!gen.is_object() || gen.value("format", "") != kGenerationFormat || !gen.contains("phases") ||
      !gen["phases"].is_object()) {
    return Error(ErrorCode::kParseError, "{}: not a generation file (format '{}'); give the file partition --llm "
                 "wrote", path, kGenerationFormat);
  }
  HETPLAN_ASSIGN_OR_RETURN(const ValidationReport report, ValidateGenerationFile(gen, path));
  // Both phases loaded first: each one's split keeps static the dims it shares with the other.
  const std::vector<std::string> phases = {"prefill", "decode"};
  std::vector<std::string> files;
  std::vector<PlanFile> plans;
  std::vector<LoadedModel> models;
  for (const std::string& phase : phases) {
    files.push_back(PhaseFile(gen, path, phase));
    HETPLAN_ASSIGN_OR_RETURN(const nlohmann::json schedule, ReadJsonFile(files.back(), "the phase's schedule file"));
    HETPLAN_ASSIGN_OR_RETURN(PlanFile plan, ReadPlanFile(schedule, files.back()));
    HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, deploy_internal::LoadScheduleModel(plan, files.back(), options, true));
    plans.push_back(std::move(plan));
    models.push_back(std::move(model));
  }
  GenerationSplit out;
  for (size_t k = 0; k < phases.size(); ++k) {
    SplitOptions o = options;
    o.dynamic_shapes = true;
    o.other_phase_shapes = TensorShapes(models[1 - k].graph);
    o.schedule_violations = static_cast<int>(report.violations.size());
    HETPLAN_ASSIGN_OR_RETURN(SplitResult split, SplitModel(models[k], plans[k], files[k], o));
    HETPLAN_RETURN_IF_ERROR(WriteSplit(split, (fs::path(out_dir) / phases[k]).string()));
    (k == 0 ? out.prefill : out.decode) = std::move(split);
  }
  const nlohmann::json& prefill = out.prefill.manifest;
  HETPLAN_ASSIGN_OR_RETURN(const DecoderSignature sig, ReadDecoderSignature(models.front().path));
  HETPLAN_ASSIGN_OR_RETURN(nlohmann::json interface, Interface(sig, prefill, path));
  const nlohmann::json& metrics = gen["metrics"];
  // The profile's unsplit model: the request on the plan's best single PU
  // when this machine measured that PU (the unsplit model runs here).
  nlohmann::json unsplit;
  const nlohmann::json single = gen.value("references", nlohmann::json::object()).value("single_pu", nlohmann::json());
  for (const auto& d : prefill["devices"]) {
    if (single.is_object() && d.value("name", "") == single.value("pu", "") && d.value("costs", "") == "measured" &&
        single["request_us"].is_number() && single["ttft_us"].is_number()) {
      const double request = single["request_us"].get<double>(), ttft = single["ttft_us"].get<double>();
      unsplit = {{"pu", single["pu"]}, {"ttft_us", ttft}, {"decode_us", request - ttft}};
    }
  }
  out.index = {{"format", kGenerationSplitFormat},
               {"version", 1},
               {"generation_file", path},
               {"model", prefill["model"]},
               {"prompt", gen["prompt"]},
               {"new_tokens", gen["new_tokens"]},
               {"interface", interface},
               {"phases", {{"prefill", "prefill"}, {"decode", "decode"}}},
               {"predicted",
                {{"ttft_us", metrics["ttft_us"]},
                 {"tpot_us", metrics["tpot_us"]},
                 {"decode_us", metrics["decode_us"]},
                 {"tokens_per_s", metrics["tokens_per_s"]},
                 {"unsplit", unsplit}}},
               {"violations", report.violations.size()}};
  HETPLAN_RETURN_IF_ERROR(
      WriteFileAtomic((fs::path(out_dir) / kGenerationSplitFile).string(), out.index.dump(1) + "\n"));
  return out;
}

}  // namespace hetplan
