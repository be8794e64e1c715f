// DIR/generation.json read back (src/deploy/generation_internal.h).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/generation.h"
#include "hetplan/util/io.h"
#include "deploy/generation_internal.h"

namespace hetplan::deploy_internal {

namespace fs = std::filesystem;

Result<GenerationIndex> ReadGenerationIndex(const std::string& dir) {
  const std::string path = (fs::path(dir) / kGenerationSplitFile).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return Error(ErrorCode::kNotFound, "{}: no {} here; --generate runs a generation plan split with hetplan split "
                 "GEN.json (the file partition --llm wrote)", dir, kGenerationSplitFile);
  }
  HETPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path, int64_t{1} << 26));
  GenerationIndex x;
  x.path = path;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.value("format", "") != kGenerationSplitFormat) {
      return Error(ErrorCode::kParseError, "{}: format is not '{}'; re-run hetplan split", path,
                   kGenerationSplitFormat);
    }
    x.model_file = j.at("model").at("file").get<std::string>();
    x.model_sha256 = j.at("model").value("sha256", "");
    x.prompt = j.at("prompt").get<int64_t>();
    x.planned_new = j.at("new_tokens").get<int64_t>();
    const auto& in = j.at("interface");
    x.tokens = in.at("tokens").get<std::string>();
    x.embeddings = in.value("embeddings", false);
    x.mask = in.value("attention_mask", "");
    x.positions = in.value("position_ids", "");
    x.logits = in.at("logits").get<std::string>();
    for (const auto& l : in.at("layers")) {
      x.past_of_present[l.at("present_key").get<std::string>()] = l.at("past_key").get<std::string>();
      x.past_of_present[l.at("present_value").get<std::string>()] = l.at("past_value").get<std::string>();
    }
    x.empty_past = in.at("empty_past").get<std::map<std::string, std::vector<int64_t>>>();
    x.kv_elem_type = in.at("kv_elem_type").get<int32_t>();
    if (in.contains("max_positions") && in["max_positions"].is_number_integer()) {
      x.max_positions = in["max_positions"].get<int64_t>();
    }
    const auto& p = j.at("predicted");
    x.ttft_us = p.at("ttft_us").get<double>();
    x.tpot_us = p.at("tpot_us").get<std::vector<double>>();
    if (const auto& u = p.value("unsplit", nlohmann::json()); u.is_object()) {
      x.unsplit_ttft_us = u.value("ttft_us", 0.0);
      x.unsplit_decode_us = u.value("decode_us", 0.0);
    }
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorCode::kParseError, "{}: {}; re-run hetplan split", path, OneLine(e.what()));
  }
  if (x.tpot_us.empty() || x.prompt < 1) return Error(ErrorCode::kParseError, "{}: no decode steps; re-run hetplan split", path);
  for (const auto& [name, shape] : x.empty_past) {
    if (shape.size() != 4) {
      return Error(ErrorCode::kParseError, "{}: interface.empty_past.{} is not [batch, kv heads, 0, head]; re-run "
                   "hetplan split", path, name);
    }
  }
  if (x.empty_past.empty()) return Error(ErrorCode::kParseError, "{}: no KV cache (interface.empty_past); re-run hetplan split", path);
  return x;
}

int64_t Vocabulary(const GenerationIndex& x, const Manifest& m) {
  for (const auto& t : m.outputs) {
    if (t.name == x.logits && !t.shape.empty()) return t.shape.back();
  }
  return 0;
}

}  // namespace hetplan::deploy_internal
