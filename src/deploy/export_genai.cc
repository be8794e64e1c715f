// A split generation plan handed to ONNX Runtime GenAI
// (include/hetplan/deploy/generation.h): genai_config.json of type
// "decoder-pipeline", one stage per segment, the prefill's segments run on
// the prompt only and the decode's on token generation only.
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hetplan/deploy/generation.h"
#include "hetplan/deploy/manifest.h"
#include "hetplan/util/io.h"
#include "deploy/generation_internal.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// GenAI's provider_options for a PU: [] for the CPU, else [{name: options}]
// by GenAI's provider names.
nlohmann::json ProviderOptions(const ManifestDevice& d) {
  nlohmann::json list = nlohmann::json::array();
  if (d.provider.empty() || d.provider == "cpu") return list;
  const std::string name = d.provider == "openvino" ? "OpenVINO" : d.provider;
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [k, v] : d.provider_options) options[k] = v;
  list.push_back({{name, options}});
  return list;
}

const ManifestDevice* DeviceOf(const Manifest& m, const std::string& name) {
  for (const auto& d : m.devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// One stage per segment of `phase`, in the manifest's order.
void AddStages(const Manifest& m, const std::string& phase, nlohmann::json* pipeline, std::vector<std::string>* notes) {
  for (const ManifestSegment& seg : m.segments) {
    nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (const auto& t : seg.inputs) inputs.push_back(t.name);
    for (const auto& t : seg.outputs) outputs.push_back(t.name);
    nlohmann::json stage = {{"filename", phase + "/" + seg.file},
                            {"inputs", inputs},
                            {"outputs", outputs},
                            {"run_on_prompt", phase == "prefill"},
                            {"run_on_token_gen", phase == "decode"}};
    if (const ManifestDevice* d = DeviceOf(m, seg.device)) {
      stage["session_options"] = {{"log_id", "onnxruntime-genai"},
                                  {"intra_op_num_threads", d->threads},
                                  {"provider_options", ProviderOptions(*d)}};
      if (!d->measured) {
        notes->push_back(fmt::format("{} segment {} is planned on '{}' ({}), which no execution provider runs: the "
                                     "stage runs on the CPU", phase, seg.id, d->name, d->kind));
      }
    }
    pipeline->push_back({{fmt::format("{}_{:03d}_{}", phase, seg.id, seg.device), stage}});
  }
}

Status CopyPhase(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (fs::exists(to, ec) && fs::equivalent(from, to, ec)) return Status::Ok();
  fs::create_directories(to, ec);
  fs::copy(from, to, fs::copy_options::overwrite_existing | fs::copy_options::recursive, ec);
  if (ec) return Error(ErrorCode::kIoError, "{}: cannot copy to {}: {}", from, to, ec.message());
  return Status::Ok();
}

}  // namespace

Result<OrtGenaiExport> ExportOrtGenai(const std::string& source, const std::string& out_dir) {
  std::error_code ec;
  std::string dir = source;
  if (fs::is_regular_file(source, ec)) {  // a generation file: split it into OUT first
    HETPLAN_RETURN_IF_ERROR(SplitGenerationFile(source, out_dir).status());
    dir = out_dir;
  }
  const std::string index_path = (fs::path(dir) / kGenerationSplitFile).string();
  if (!fs::is_regular_file(index_path, ec)) {
    return Error(ErrorCode::kInvalidArgument, "{}: neither a generation file nor a split of one (no {}); give the "
                 "file partition --llm wrote, or the folder hetplan split wrote from it", source, kGenerationSplitFile);
  }
  HETPLAN_ASSIGN_OR_RETURN(const deploy_internal::GenerationIndex x, deploy_internal::ReadGenerationIndex(dir));
  if (x.embeddings) {
    return Error(ErrorCode::kUnsupported, "{}: the decoder takes embeddings, not token ids; ONNX Runtime GenAI's "
                 "decoder-pipeline feeds input_ids", index_path);
  }
  HETPLAN_ASSIGN_OR_RETURN(const Manifest prefill, LoadManifest((fs::path(dir) / "prefill").string()));
  HETPLAN_ASSIGN_OR_RETURN(const Manifest decode, LoadManifest((fs::path(dir) / "decode").string()));
  OrtGenaiExport out;
  out.out_dir = out_dir;
  const int64_t vocab = deploy_internal::Vocabulary(x, prefill);
  const std::vector<int64_t>& kv = x.empty_past.begin()->second;  // [batch, kv heads, 0, head]
  const int64_t tokens = x.prompt + x.planned_new + 1;
  nlohmann::json pipeline = nlohmann::json::array();
  AddStages(prefill, "prefill", &pipeline, &out.notes);
  AddStages(decode, "decode", &pipeline, &out.notes);
  out.stages = static_cast<int>(pipeline.size());
  nlohmann::json inputs = {{"input_ids", x.tokens},
                           {"past_key_names", "past_key_values.%d.key"},
                           {"past_value_names", "past_key_values.%d.value"}};
  if (!x.mask.empty()) inputs["attention_mask"] = x.mask;
  if (!x.positions.empty()) inputs["position_ids"] = x.positions;
  // GenAI wants eos within the vocabulary: its last id (pad too, whose
  // value GenAI skips at a prompt's end). A generation that reaches it
  // stops there.
  out.config = {{"model",
                 {{"type", "decoder-pipeline"},
                  {"vocab_size", vocab},
                  {"context_length", x.max_positions.value_or(tokens)},
                  {"bos_token_id", 0},
                  {"eos_token_id", vocab - 1},
                  {"pad_token_id", vocab - 1},
                  {"decoder",
                   {{"session_options",
                     {{"log_id", "onnxruntime-genai"}, {"provider_options", nlohmann::json::array()}}},
                    {"head_size", kv[3]},
                    {"num_key_value_heads", kv[1]},
                    {"num_hidden_layers", x.past_of_present.size() / 2},
                    {"inputs", inputs},
                    {"outputs",
                     {{"logits", x.logits},
                      {"present_key_names", "present.%d.key"},
                      {"present_value_names", "present.%d.value"}}},
                    {"pipeline", pipeline}}}}},
                {"search",
                 {{"max_length", tokens},
                  {"do_sample", false},
                  {"num_beams", 1},
                  {"past_present_share_buffer", false}}}};
  if (dir != out_dir) {
    for (const char* phase : {"prefill", "decode"}) {
      HETPLAN_RETURN_IF_ERROR(CopyPhase((fs::path(dir) / phase).string(), (fs::path(out_dir) / phase).string()));
    }
    HETPLAN_ASSIGN_OR_RETURN(const std::string text, ReadFile(index_path, int64_t{1} << 26));
    HETPLAN_RETURN_IF_ERROR(WriteFileAtomic((fs::path(out_dir) / kGenerationSplitFile).string(), text));
  }
  HETPLAN_RETURN_IF_ERROR(
      WriteFileAtomic((fs::path(out_dir) / "genai_config.json").string(), out.config.dump(2) + "\n"));
  return out;
}

}  // namespace hetplan
