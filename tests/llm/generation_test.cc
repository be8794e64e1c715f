// LLM generation planned as one request (issue 60; docs/generation.md): the
// decoder's interface read from the file, `partition --llm` on the decoder
// forms tests/llm/make_decoders.py writes, the generation file's validator,
// and the one-line refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "hetplan/graph/decoder.h"
#include "hetplan/validate/validator.h"
#include "testing/expect.h"
#include "testing/helpers.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using test_util::CmdResult;
using test_util::Hetplan;

// Removes the graph inputs or outputs whose names start with `prefix`.
template <typename List>
void Drop(List* list, const std::string& prefix) {
  for (int i = list->size() - 1; i >= 0; --i) {
    if (list->Get(i).name().rfind(prefix, 0) == 0) list->DeleteSubrange(i, 1);
  }
}

// The forms tests/llm/make_decoders.py writes: as torch's exporter decomposes
// a LLaMA (fp32, a tied head, INT4 QDQ, fp16), opset 23's own operators, and
// ONNX Runtime GenAI's model builder form (GroupQueryAttention with the rotary
// inside, no position_ids, Simplified/SkipSimplified norms; fp32 and
// MatMulNBits INT4).
constexpr const char* kForms[] = {"decoder",         "decoder_tied",  "decoder_int4",      "decoder_fp16",
                                  "decoder_opset23", "decoder_genai", "decoder_genai_int4"};

class Generation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(test_util::TempDir("generation"));
    error_ = new std::string();
    const std::string venv = std::string(HETPLAN_SOURCE_DIR) + "/third_party/models-venv/bin/python";
    const std::string cmd = venv + " " + HETPLAN_TEST_DATA_DIR + "/llm/make_decoders.py --out '" +
                            (*dir_).string() + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) *error_ = "make_decoders.py failed: " + cmd;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    delete error_;
  }
  void SetUp() override { ASSERT_EQ(*error_, ""); }
  static std::string File(const std::string& name) { return ((*dir_) / name).string(); }
  static std::string Cache() { return " --warmup 1 --runs 3 --cache-dir '" + ((*dir_) / "cache").string() + "'"; }

  // decoder.onnx with `edit` applied to its ModelProto, saved as `name`.
  template <typename Edit>
  static std::string Edited(const std::string& name, Edit edit) {
    onnx::ModelProto m;
    std::ifstream in(File("decoder.onnx"), std::ios::binary);
    EXPECT_TRUE(m.ParseFromIstream(&in));
    edit(m.mutable_graph());
    std::ofstream out(File(name), std::ios::binary);
    m.SerializeToOstream(&out);
    return File(name);
  }

  // Plans `model` with --llm into a fresh folder; the generation file's path.
  static fs::path Plan(const std::string& model, const std::string& extra, CmdResult* r, int time_limit_s = 20) {
    static int plans = 0;
    const fs::path folder = *dir_ / ("plan" + std::to_string(++plans));
    fs::create_directories(folder);
    const fs::path out = folder / "request.json";
    *r = Hetplan("partition " + model + " --llm prompt=16,new=8 --time-limit " + std::to_string(time_limit_s) +
                 Cache() + extra + " --out " + out.string());
    return out;
  }

  static inline fs::path* dir_ = nullptr;
  static inline std::string* error_ = nullptr;
};

TEST_F(Generation, ReadsTheCachePairsAndThePositionTable) {
  auto s = ReadDecoderSignature(File("decoder.onnx"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->layers.size(), 2u);
  EXPECT_EQ(s->kv_heads, 2);
  EXPECT_EQ(s->head_dim, 16);
  EXPECT_EQ(s->tokens, "input_ids");
  EXPECT_EQ(s->attention_mask, "attention_mask");
  EXPECT_EQ(s->position_ids, "position_ids");
  ASSERT_TRUE(s->max_positions.has_value());
  EXPECT_EQ(*s->max_positions, 256);
  const auto shapes = s->Shapes(1, 16);
  EXPECT_EQ(shapes.at("attention_mask"), (std::vector<int64_t>{1, 17}));
  EXPECT_EQ(shapes.at("past_key_values.1.value"), (std::vector<int64_t>{1, 2, 16, 16}));
  // 2 layers × key and value × 2 heads × 24 tokens × 16 × 4 bytes.
  EXPECT_EQ(s->KvBytes(24), 2 * 2 * 2 * 24 * 16 * 4);
  // opset 23's RotaryEmbedding holds the table as its cos cache.
  auto s23 = ReadDecoderSignature(File("decoder_opset23.onnx"));
  ASSERT_TRUE(s23.ok()) << s23.status().message();
  EXPECT_EQ(s23->max_positions.value_or(0), 256);
  // The model builder's form: no position ids; GroupQueryAttention's cos cache.
  auto gqa = ReadDecoderSignature(File("decoder_genai.onnx"));
  ASSERT_TRUE(gqa.ok()) << gqa.status().message();
  EXPECT_EQ(gqa->position_ids, "");
  EXPECT_EQ(gqa->layers.size(), 2u);
  EXPECT_EQ(gqa->max_positions.value_or(0), 256);
  EXPECT_EQ(gqa->position_table, "cos_cache");
  EXPECT_EQ(gqa->head_dim, 16);  // the cache's head dim is symbolic: from the packed QKV projection
}

TEST_F(Generation, RefusesModelsThatDoNotGenerateInOneLine) {
  const std::string no_cache = Edited("no_cache.onnx", [](onnx::GraphProto* g) {
    Drop(g->mutable_input(), "past_key_values.");
  });
  auto a = ReadDecoderSignature(no_cache);
  ASSERT_FALSE(a.ok());
  EXPECT_HAS(a.status().message(), "no past_key_values inputs: this is the first step's model");
  // Neither past nor present: an encoder, or a decoder exported without its cache.
  const std::string encoder = Edited("encoder.onnx", [](onnx::GraphProto* g) {
    Drop(g->mutable_input(), "past_key_values.");
    Drop(g->mutable_output(), "present.");
  });
  auto e = ReadDecoderSignature(encoder);
  ASSERT_FALSE(e.ok());
  EXPECT_HAS(e.status().message(), "no KV cache");
  const std::string unpaired = Edited("unpaired.onnx", [](onnx::GraphProto* g) {
    for (auto& o : *g->mutable_output()) {
      if (o.name() == "present.1.value") o.set_name("logits_extra");
    }
  });
  auto b = ReadDecoderSignature(unpaired);
  ASSERT_FALSE(b.ok());
  EXPECT_HAS(b.status().message(), "layer 1's KV cache has no output present.1.value");
  const std::string heads = Edited("heads.onnx", [](onnx::GraphProto* g) {
    for (auto& o : *g->mutable_output()) {
      if (o.name() == "present.0.key") o.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(3);
    }
  });
  auto c = ReadDecoderSignature(heads);
  ASSERT_FALSE(c.ok());
  EXPECT_HAS(c.status().message(), "mismatched past/present pairs");

  // The command: one line, a non-zero exit, nothing written.
  const fs::path out = *dir_ / "bad_request.json";
  for (const std::string& args : {no_cache + " --llm prompt=16,new=8", encoder + " --llm prompt=16,new=8", File("decoder.onnx") + " --llm prompt=250,new=8",
                                  File("decoder.onnx") + " --llm prompt=16", File("decoder.onnx") +
                                  " --llm prompt=16,new=8 --objective energy"}) {
    CmdResult r = Hetplan("partition " + args + " --out " + out.string());
    EXPECT_NE(r.code, 0) << args;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;  // stdout and stderr: the one error line
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  CmdResult r = Hetplan("partition " + File("decoder.onnx") + " --llm prompt=250,new=8");
  EXPECT_HAS(r.out, "258 tokens, but");
  EXPECT_HAS(r.out, "holds 256 positions");
}

// Every form plans both phases, proves the request where the weights fit,
// and writes files the validator passes.
TEST_F(Generation, EveryFormPlansTheRequestAndValidates) {
  for (const char* form : kForms) {
    SCOPED_TRACE(form);
    CmdResult r;
    const fs::path out = Plan(File(std::string(form) + ".onnx"), " --platform klein-arm", &r);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_HAS(r.out, "TTFT");
    const nlohmann::json g = test_util::ReadJson(out);
    const nlohmann::json& m = g["metrics"];
    EXPECT_EQ(g["format"], "hetplan-generation");
    EXPECT_EQ(m["tpot_us"].size(), 8u);
    EXPECT_EQ(g["solver"]["status"], "optimal");  // 15 weights of the 100 crossbars: both phases alone fit together
    EXPECT_NEAR(m["tokens_per_s"].get<double>(), 8 / m["decode_us"].get<double>() * 1e6, 1e-6);
    EXPECT_LE(m["crossbars"]["cim"].get<int64_t>(), 100);
    EXPECT_GT(m["kv_cache_bytes"].get<int64_t>(), 0);
    auto v = ValidateScheduleFile(out.string());
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_TRUE(v->ok()) << v->violations.front();
    EXPECT_TRUE(fs::exists(out.parent_path() / "request.prefill.json"));
    EXPECT_TRUE(fs::exists(out.parent_path() / "request.decode.json"));
  }
}

// `split` cuts each phase of the request so that it runs at every prompt and
// past length, and `run --generate` feeds the presents back as the past:
// every form's greedy tokens equal the unsplit model's own loop, on the CIM
// plan (segments on two PUs, the CIM's emulated) and on two measured cores
// (each PU's segments on its own pinned thread). With one crossbar the
// builder's form keeps an attention and its projections in one CPU segment
// whose input is the packed QKV from the CIM: its dims that both phases share
// stay static (ONNX Runtime's GroupQueryAttention reads an unknown hidden
// size as 0 and its o_proj then refused to load).
TEST_F(Generation, EveryFormSplitsAndGeneratesTheUnsplitModelsTokens) {
  for (const char* form : kForms) {
    for (const char* platform : {"klein-arm", "host-2core", "klein-arm --set cim.crossbars=1"}) {
      if (std::string(platform) == "host-2core" && std::string(form) != "decoder") continue;
      if (std::string(platform).find("crossbars=1") != std::string::npos && std::string(form) != "decoder_genai_int4") {
        continue;
      }
      SCOPED_TRACE(std::string(form) + " on " + platform);
      CmdResult r;
      const fs::path out = Plan(File(std::string(form) + ".onnx"), std::string(" --platform ") + platform, &r);
      ASSERT_EQ(r.code, 0) << r.out;
      const fs::path dir = out.parent_path() / "split";
      CmdResult s = Hetplan("split " + out.string() + " --out " + dir.string());
      ASSERT_EQ(s.code, 0) << s.out;
      EXPECT_HAS(s.out, "--- decode (runs at every past length)");
      const nlohmann::json manifest = test_util::ReadJson(dir / "decode" / "manifest.json");
      EXPECT_TRUE(manifest["runtime"]["dynamic_shapes"].get<bool>());
      const fs::path report = out.parent_path() / "generate.json";
      CmdResult g = Hetplan("run " + dir.string() + " --generate 16 --runs 1 --warmup 0 --json " + report.string());
      ASSERT_EQ(g.code, 0) << g.out;
      EXPECT_HAS(g.out, "the token ids equal the unsplit model's own loop");
      const nlohmann::json j = test_util::ReadJson(report);
      EXPECT_EQ(j["tokens"].size(), 17u);  // the prefill's, then one per decode step
      EXPECT_EQ(j["tokens"], j["reference"]["tokens"]);
      EXPECT_EQ(j["timing"], std::string(platform) == "host-2core" ? "measured" : "functional");
      EXPECT_GT(j["measured"]["tokens_per_s"].get<double>(), 0);
      // Planned for 8 new tokens: the prediction extends the plan's TPOT.
      EXPECT_HAS(g.out, "planned for 8 new tokens, run for 16");
    }
  }
}

// `export --format ort-genai` of the generation file `plan` into `out`:
// ONNX Runtime GenAI 0.18 (from PyPI, third_party/genai-venv) loads the
// folder and generates, greedily from the same prompt ids, the tokens `run
// --generate` gives on the same folder and the unsplit model gives (up to the
// vocabulary's last id, GenAI's eos, when it comes up). The config.
nlohmann::json ExpectGenaiTokensEqual(const fs::path& plan, const fs::path& out) {
  CmdResult e = Hetplan("export " + plan.string() + " --format ort-genai --out " + out.string());
  EXPECT_EQ(e.code, 0) << e.out;
  if (e.code != 0) return nlohmann::json();
  const nlohmann::json config = test_util::ReadJson(out / "genai_config.json");
  const nlohmann::json& stages = config["model"]["decoder"]["pipeline"];
  EXPECT_GE(stages.size(), 2u);
  EXPECT_TRUE(stages.front().begin().value()["run_on_prompt"].get<bool>());
  EXPECT_FALSE(stages.back().begin().value()["run_on_prompt"].get<bool>());
  EXPECT_EQ(config["search"]["max_length"], 16 + 8 + 1);
  const fs::path report = out / "generate.json";
  CmdResult g = Hetplan("run " + out.string() + " --generate 8 --runs 1 --warmup 0 --json " + report.string());
  EXPECT_EQ(g.code, 0) << g.out;
  const nlohmann::json run = test_util::ReadJson(report);
  EXPECT_EQ(run["tokens"], run["reference"]["tokens"]);
  std::string prompt;
  for (const auto& id : run["prompt_ids"]) prompt += (prompt.empty() ? "" : ",") + std::to_string(id.get<int64_t>());
  const std::string python = std::string(HETPLAN_SOURCE_DIR) + "/third_party/genai-venv/bin/python";
  CmdResult genai = test_util::Shell(python + " " + HETPLAN_TEST_DATA_DIR + "/llm/genai_generate.py " + out.string() +
                                     " --prompt " + prompt);
  EXPECT_EQ(genai.code, 0) << genai.out;
  if (genai.code != 0) return config;
  const std::string last = genai.out.substr(genai.out.rfind('{'));  // the JSON line, after any warnings
  const std::vector<int64_t> got = nlohmann::json::parse(last)["tokens"].get<std::vector<int64_t>>();
  std::vector<int64_t> want = run["tokens"].get<std::vector<int64_t>>();
  const int64_t eos = config["model"]["eos_token_id"].get<int64_t>();
  if (auto at = std::find(want.begin(), want.end(), eos); at != want.end()) want.erase(at + 1, want.end());
  EXPECT_EQ(got, want) << genai.out;
  return config;
}

// Every form, planned on two PUs: prefill and decode stages with their own segments.
TEST_F(Generation, TheOrtGenaiExportGeneratesTheSameTokens) {
  for (const char* form : kForms) {
    SCOPED_TRACE(form);
    CmdResult r;
    const fs::path plan = Plan(File(std::string(form) + ".onnx"), " --platform klein-arm", &r);
    ASSERT_EQ(r.code, 0) << r.out;
    ExpectGenaiTokensEqual(plan, plan.parent_path() / "genai");
  }
}

// A present that another segment reads (here: layer 1's value cache moved
// to the CIM, its repeat on the CPU) reaches it under its own name: GenAI
// takes every present.* into its cache and hands none to a later stage.
TEST_F(Generation, APresentReadByAnotherSegmentIsHandedOver) {
  CmdResult r;
  const fs::path plan = Plan(File("decoder.onnx"), " --platform klein-arm", &r);
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path decode = plan.parent_path() / "request.decode.json";
  nlohmann::json s = test_util::ReadJson(decode);
  int moved = 0;
  for (auto& o : s["operators"]) {
    if (o["name"] != "/model/layers.1/self_attn/Concat_1") continue;
    o["device"] = "cim";
    o["cost_us"]["cim"] = o["cost_us"]["cpu"];
    ++moved;
  }
  ASSERT_EQ(moved, 1);
  std::ofstream(decode) << s.dump();
  const nlohmann::json config = ExpectGenaiTokensEqual(plan, plan.parent_path() / "genai");
  EXPECT_NE(config.dump().find("\"present.1.value/hetplan_handoff\""), std::string::npos);
}

// --generate on what is not a split generation plan, or beyond the model's
// positions: one line, non-zero.
TEST_F(Generation, GenerateRefusesInOneLine) {
  CmdResult r;
  const fs::path out = Plan(File("decoder.onnx"), " --platform klein-arm", &r);
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path dir = out.parent_path() / "split";
  ASSERT_EQ(Hetplan("split " + out.string() + " --out " + dir.string()).code, 0);
  CmdResult far = Hetplan("run " + dir.string() + " --generate 250");
  EXPECT_NE(far.code, 0);
  EXPECT_HAS(far.out, "need 266 positions but the model holds 256; give --generate ≤ 240");
  CmdResult phase = Hetplan("run " + (dir / "decode").string() + " --generate 4");
  EXPECT_NE(phase.code, 0);
  EXPECT_HAS(phase.out, "no generation.json here");
}

// Ten crossbars hold fewer weights than the decode wants alone (15): the
// pair is proven within them. (Whether the search must branch depends on the
// measured host costs; TwoPhase.* checks the branching against brute force.)
TEST_F(Generation, PhasesShareTheCrossbarBudget) {
  CmdResult r;
  const fs::path out = Plan(File("decoder.onnx"), " --platform klein-arm --set cim.crossbars=10", &r);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json g = test_util::ReadJson(out);
  EXPECT_LE(g["metrics"]["crossbars"]["cim"].get<int64_t>(), 10);
  EXPECT_EQ(g["solver"]["status"], "optimal");
  EXPECT_EQ(g["solver"]["gap"].get<double>(), 0.0);
  EXPECT_TRUE(ValidateScheduleFile(out.string())->ok());
}

// A reprogramming CIM of 4 crossbars (2 ns a row, assumed): the decode's
// matrix products are worth rewriting every step; the file says how many,
// the writes a request and the hours the free crossbars last, the validator
// checks them with the joint endurance budget from the files, and the split
// generates the unsplit model's tokens. (The exact search over 141 operators
// with rewrites does not finish here: the plan is the heuristic's, with the
// gap the search proved. TwoPhase.WithRewritesMatchesBruteForce checks the
// formulation against brute force.)
TEST_F(Generation, RewritesAreChargedAndTheirEnduranceStatedInHours) {
  const std::string cim = " --platform klein-arm --set cim.crossbars=4 --set cim.write_ns_per_row=2"
                          " --set cim.endurance_writes=1e8 --set cim.lifetime_inferences=1 --set cim.reprogram=true";
  CmdResult r;
  const fs::path out = Plan(File("decoder.onnx"), cim, &r, 3);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_HAS(r.out, "rewrites  cim: prefill");
  const nlohmann::json g = test_util::ReadJson(out);
  const nlohmann::json& rw = g["metrics"]["rewrites"];
  ASSERT_TRUE(rw.is_object()) << g["metrics"].dump();
  EXPECT_EQ(rw["pu"], "cim");
  EXPECT_GT(rw["decode"]["operators"].get<int64_t>(), 0);
  const int64_t per_request = rw["crossbar_writes_per_request"].get<int64_t>();
  EXPECT_EQ(per_request, rw["prefill"]["crossbars"].get<int64_t>() + 8 * rw["decode"]["crossbars"].get<int64_t>());
  EXPECT_EQ(rw["free_crossbars"].get<int64_t>(), 4 - g["metrics"]["crossbars"]["cim"].get<int64_t>());
  const double requests = 1e8 * rw["free_crossbars"].get<double>() / static_cast<double>(per_request);
  EXPECT_NEAR(rw["requests_until_worn"].get<double>(), requests, 1e-6 * requests);
  EXPECT_NEAR(rw["endurance_hours"].get<double>(), requests * g["metrics"]["request_us"].get<double>() / 3.6e9,
              1e-6 * rw["endurance_hours"].get<double>());
  EXPECT_NE(g["solver"]["status"], "optimal");  // not proven: said so
  auto v = ValidateScheduleFile(out.string());
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(v->ok()) << v->violations.front();
  // From the files alone: a cell that takes fewer writes, a tampered figure.
  const nlohmann::json pre = test_util::ReadJson(out.parent_path() / "request.prefill.json");
  const nlohmann::json dec = test_util::ReadJson(out.parent_path() / "request.decode.json");
  nlohmann::json p2 = pre, d2 = dec;
  for (auto* s : {&p2, &d2}) {
    for (auto& d : (*s)["devices"]) {
      if (d.contains("reprogram")) d["reprogram"]["lifetime_inferences"] = 1e9;
    }
  }
  const auto violations = [](const ValidationReport& rep) {
    std::string all;
    for (const auto& line : rep.violations) all += line + "\n";
    return all;
  };
  EXPECT_HAS(violations(ValidateGenerationJson(g, p2, d2)), "crossbar writes each");
  nlohmann::json t = g;
  t["metrics"]["rewrites"]["endurance_hours"] = rw["endurance_hours"].get<double>() * 2;
  EXPECT_HAS(violations(ValidateGenerationJson(t, pre, dec)), "metrics.rewrites is not device cim's");
  // Only the exact search plans rewrites for two phases.
  CmdResult greedy = Hetplan("partition " + File("decoder.onnx") + " --llm prompt=16,new=8 --solver greedy" + cim);
  EXPECT_NE(greedy.code, 0);
  EXPECT_HAS(greedy.out, "use --solver exact");
  // The plan splits and generates the unsplit model's tokens.
  const fs::path dir = out.parent_path() / "split";
  ASSERT_EQ(Hetplan("split " + out.string() + " --out " + dir.string()).code, 0);
  CmdResult run = Hetplan("run " + dir.string() + " --generate 4 --runs 1 --warmup 0");
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_HAS(run.out, "the token ids equal the unsplit model's own loop");
}

// The other objectives: decode tokens/s (the decode step first, then TTFT at
// that TPOT) and TTFT under a TPOT bound; each proven, validated, with its
// objective in the file; a bound below every decode plan and a ttft without
// its bound are refused in one line, nothing written.
TEST_F(Generation, PlansForTokensPerSecondOrTtftUnderATpotBound) {
  const auto plan = [&](const std::string& llm, const std::string& name, CmdResult* r) {
    const fs::path out = *dir_ / name;
    *r = Hetplan("partition " + File("decoder.onnx") + " --llm " + llm +
                 " --platform klein-arm --set cim.crossbars=10 --time-limit 20" + Cache() + " --out " + out.string());
    return out;
  };
  CmdResult r;
  const fs::path latency = plan("prompt=16,new=8", "objective_latency.json", &r);
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path tokens = plan("prompt=16,new=8,objective=tokens", "objective_tokens.json", &r);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_HAS(r.out, "N × TPOT (tokens/s)");
  const nlohmann::json l = test_util::ReadJson(latency), t = test_util::ReadJson(tokens);
  EXPECT_EQ(l["objective"], "request_latency");
  EXPECT_EQ(t["objective"], "tokens_per_s");
  EXPECT_EQ(t["solver"]["status"], "optimal");
  // The fastest decode step: no slower than the latency plan's; its bound is N × TPOT.
  const double tpot = test_util::ReadJson(tokens.parent_path() / "objective_tokens.decode.json")["makespan_us"];
  const double tpot_latency = test_util::ReadJson(latency.parent_path() / "objective_latency.decode.json")["makespan_us"];
  EXPECT_LE(tpot, tpot_latency + 1e-6);
  EXPECT_NEAR(t["solver"]["bound_us"].get<double>(), 8 * tpot, 1e-6 * tpot);
  EXPECT_GE(t["metrics"]["tokens_per_s"].get<double>(), l["metrics"]["tokens_per_s"].get<double>() * (1 - 1e-9));
  EXPECT_TRUE(ValidateScheduleFile(tokens.string())->ok());
  // TTFT under a bound 1.5× that TPOT: the decode within it, the TTFT no longer than the tokens plan's.
  const std::string cap = fmt::format("{:.3f}", 1.5 * tpot);
  const fs::path ttft = plan("prompt=16,new=8,objective=ttft,max_tpot=" + cap, "objective_ttft.json", &r);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json f = test_util::ReadJson(ttft);
  EXPECT_EQ(f["objective"], "ttft");
  EXPECT_EQ(f["solver"]["status"], "optimal");
  EXPECT_LE(test_util::ReadJson(ttft.parent_path() / "objective_ttft.decode.json")["makespan_us"].get<double>(),
            std::stod(cap) + 1e-6);
  EXPECT_LE(f["metrics"]["ttft_us"].get<double>(), t["metrics"]["ttft_us"].get<double>() + 1e-6);
  EXPECT_TRUE(ValidateScheduleFile(ttft.string())->ok());
  // Tampered: the bound under the plan's TPOT.
  nlohmann::json tampered = f;
  tampered["max_tpot_us"] = 0.5 * tpot;
  const ValidationReport v = ValidateGenerationJson(tampered, test_util::ReadJson(ttft.parent_path() /
                                                                                   "objective_ttft.prefill.json"),
                                                    test_util::ReadJson(ttft.parent_path() / "objective_ttft.decode.json"));
  ASSERT_FALSE(v.ok());
  EXPECT_HAS(v.violations.front(), "exceeds max_tpot_us");
  // Refused in one line, nothing written.
  for (const auto& [llm, what] : {std::pair<std::string, std::string>{"prompt=16,new=8,objective=ttft,max_tpot=0.001",
                                                                      "over its cap of 0.001 µs; raise the cap"},
                                  {"prompt=16,new=8,objective=ttft", "objective=ttft needs max_tpot=US"},
                                  {"prompt=16,new=8,objective=fast", "objective 'fast' is none of"}}) {
    CmdResult bad;
    const fs::path out = plan(llm, "objective_bad.json", &bad);
    EXPECT_NE(bad.code, 0) << llm;
    EXPECT_HAS(bad.out, what);
    EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;
    EXPECT_FALSE(fs::exists(out));
  }
}

// The validator checks what joins the phases from the files alone.
TEST_F(Generation, ValidatorCatchesTamperedGenerationFiles) {
  CmdResult r;
  const fs::path out = Plan(File("decoder.onnx"), " --platform klein-arm", &r);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json g = test_util::ReadJson(out);
  const nlohmann::json pre = test_util::ReadJson(out.parent_path() / "request.prefill.json");
  const nlohmann::json dec = test_util::ReadJson(out.parent_path() / "request.decode.json");
  ASSERT_TRUE(ValidateGenerationJson(g, pre, dec).ok());
  const auto fails = [&](const nlohmann::json& gg, const nlohmann::json& p, const nlohmann::json& d, const char* what) {
    const ValidationReport v = ValidateGenerationJson(gg, p, d);
    ASSERT_FALSE(v.ok()) << what;
    std::string all;
    for (const auto& line : v.violations) all += line + "\n";
    EXPECT_HAS(all, what);
  };
  nlohmann::json t = g;
  t["metrics"]["ttft_us"] = t["metrics"]["ttft_us"].get<double>() * 0.5;
  fails(t, pre, dec, "is not the prefill's makespan");
  t = g;
  t["metrics"]["tpot_us"][3] = t["metrics"]["tpot_us"][3].get<double>() + 10;
  fails(t, pre, dec, "is not Σ tpot_us");
  t = g;
  t["metrics"]["tokens_per_s"] = 1.0;
  fails(t, pre, dec, "tokens_per_s");
  t = g;
  t["solver"]["bound_us"] = t["metrics"]["request_us"].get<double>() * 2;
  fails(t, pre, dec, "exceeds the planned");
  // The platform budget cut below what both phases keep: the union is over it.
  nlohmann::json p2 = pre, d2 = dec;
  for (auto* s : {&p2, &d2}) {
    for (auto& d : (*s)["devices"]) {
      if (d["name"] == "cim") d["capacity_crossbars"] = 8;
    }
  }
  fails(g, p2, d2, "crossbars of weights together, over its 8");
  // The two phases of different models.
  d2 = dec;
  d2["model"]["sha256"] = std::string(64, '0');
  fails(g, pre, d2, "plans another model");
}

}  // namespace
}  // namespace hetplan
