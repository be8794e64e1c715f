// Models as exporters write them (issues 24 and 43): tests/exporters/
// make_models.py (opsets up to 17) and make_models_2026.py (18 and newer)
// write one per pattern, ONNX Runtime's optimizer saves the com.microsoft
// one, and each goes through what a user does — import with the options a
// user would give, partition to a schedule that passes `hetplan validate`,
// split and run with outputs equal to the unsplit model's — through the real
// binary. A second test compares every tensor's shape after import with the
// shape ONNX Runtime computes when it runs the model.
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "hetplan/cost/build.h"
#include "hetplan/cost/cim_model.h"
#include "hetplan/cost/sample_shapes.h"
#include "hetplan/graph/float32_copy.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/platform/platform.h"
#include "robustness/run_binary.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using testing::ReadText;
using testing::RunHetplan;
using testing::TempDir;

struct ModelCase {
  std::string name, file;
  std::vector<std::string> options;  // what a user gives hetplan for it
};

const std::vector<ModelCase>& Cases() {
  static const std::vector<ModelCase> cases = {
      {"unused_domains", "unused_domains.onnx", {}},
      {"paddle_shape_chain", "paddle_shape_chain.onnx", {"--shape", "x=1x3x16x16"}},
      {"vad", "vad.onnx", {"--shape", "input=1x512", "--value", "sr=16000"}},
      {"kws_two_stage", "kws_two_stage.onnx", {"--branch", "second_stage=then"}},
      {"ms_fused", "ms_fused.onnx", {}},
      {"ms_contrib", "ms_contrib.onnx", {}},
      {"symbolic_inputs", "symbolic_inputs.onnx", {"--shape", "audio=1x1600", "--shape", "image=1x3x8x8"}},
      {"tf2onnx_split_pads", "tf2onnx_split_pads.onnx", {}},
      {"paddle_minus_one", "paddle_minus_one.onnx", {"--shape", "x=1x3x48x192"}},
      {"fp16_chain", "fp16_chain.onnx", {}},
      {"ort_dynamic_quant", "ort_dynamic_quant.onnx", {}},
      // make_models_2026.py: opset 18 and newer, written with ONNX 1.22.
      {"opset18_reduce", "opset18_reduce.onnx", {}},
      {"opset21_reduce", "opset21_reduce.onnx", {}},
      {"opset21_forms", "opset21_forms.onnx", {}},
      {"opset23_transformer", "opset23_transformer.onnx", {}},
      {"local_functions", "local_functions.onnx", {}},
      {"onnxscript_functions", "onnxscript_functions.onnx", {}},  // written by onnxscript 0.7 itself
      // One KV-cache file, two shapes: prefill (the past empty) and decode (one new token, a past of 8).
      {"kv_prefill", "kv_decoder.onnx",
       {"--shape", "hidden_states=1x8x64", "--shape", "past_key_values.0.key=1x4x0x16", "--shape",
        "past_key_values.0.value=1x4x0x16"}},
      {"kv_decode", "kv_decoder.onnx",
       {"--shape", "hidden_states=1x1x64", "--shape", "past_key_values.0.key=1x4x8x16", "--shape",
        "past_key_values.0.value=1x4x8x16"}},
      // Every tensor in a .onnx.data file, the arguments too.
      {"external_transformer", "external_transformer.onnx", {}},
      {"external_forms", "external_forms.onnx", {}},
      // Narrow types: ONNX Runtime's 4-bit weight quantizer's two formats, and float16 with operators that
      // ONNX Runtime's CPU runs as float32 between Casts it inserts.
      {"int4_blockwise", "int4_blockwise.onnx", {}},
      {"matmul_nbits", "matmul_nbits.onnx", {}},
      {"fp16_cast_ops", "fp16_cast_ops.onnx", {}},
      // bfloat16, which ONNX Runtime 1.29's CPU has no kernel for: profiled and run as a float32 copy, labelled.
      {"bf16_mlp", "bf16_mlp.onnx", {}},
      // make_models_packages.py: what Python packages ship (issue 58), ONNX Runtime's quantization tool's output.
      {"qdq_bias", "qdq_bias.onnx", {}},          // axis=1 on a rank-1 bias's per-tensor DequantizeLinear
      {"lstm_dynamic", "lstm_dynamic.onnx", {}},  // com.microsoft DynamicQuantizeLSTM
      // float16 layers between float32 Casts; a fast CIM takes the Convs, so the plan cuts between float16 layers.
      {"fp16_inside", "fp16_inside.onnx", {"--set", "cim.mvm_latency_ns=1"}},
      // Frames decided by the tokens' values: planned for the sample's ({dir} is the models' folder).
      {"tts_durations", "tts_durations.onnx", {"--sample-input", "tokens={dir}/tts_tokens.npy"}},
      // Eight KV-cache inputs given by two patterns.
      {"kv_decoder_4l", "kv_decoder_4l.onnx",
       {"--shape", "hidden_states=1x1x32", "--shape", "past_key_values.*.key=1x2x8x16", "--shape",
        "past_key_values.*.value=1x2x8x16"}},
  };
  return cases;
}

fs::path ModelsDir();

// The case's options with {dir} the models' folder.
std::vector<std::string> OptionsOf(const ModelCase& c) {
  std::vector<std::string> out;
  for (std::string opt : c.options) {
    if (auto at = opt.find("{dir}"); at != std::string::npos) opt.replace(at, 5, ModelsDir().string());
    out.push_back(std::move(opt));
  }
  return out;
}

// The options as ImportOptions (the CLI's parsing, without the CLI).
ImportOptions ImportOptionsOf(const ModelCase& c) {
  ImportOptions o;
  std::vector<std::pair<std::string, std::string>> samples;
  const std::vector<std::string> options = OptionsOf(c);
  for (size_t k = 0; k + 1 < options.size(); k += 2) {
    const std::string& flag = options[k];
    const std::string& value = options[k + 1];
    if (flag == "--shape") {
      auto kv = ParseShapeOverride(value);
      EXPECT_TRUE(kv.ok());
      if (kv.ok()) o.input_shapes[kv->first] = kv->second;
    } else if (flag == "--value") {
      auto kv = ParseValueOverride(value);
      EXPECT_TRUE(kv.ok());
      if (kv.ok()) o.input_values[kv->first] = kv->second;
    } else if (flag == "--branch") {
      auto kv = ParseBranchOverride(value);
      EXPECT_TRUE(kv.ok());
      if (kv.ok()) o.branches[kv->first] = kv->second;
    } else if (flag == "--sample-input") {
      auto kv = ParseSampleInput(value);
      EXPECT_TRUE(kv.ok());
      if (kv.ok()) samples.push_back(*kv);
    }
  }
  if (!samples.empty()) {
    Status st = RecordSampleShapes((ModelsDir() / c.file).string(), samples, &o);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  return o;
}

Ort::Env& Env() {
  static Ort::Env env(ORT_LOGGING_LEVEL_FATAL, "hetplan-exporters-test");
  return env;
}

// What ONNX Runtime's graph optimizer writes at the extended level (the
// level that rewrites into com.microsoft operators without NCHWc layouts).
std::string SaveOrtOptimized(const fs::path& source, const fs::path& target) {
  try {
    Ort::SessionOptions so;
    so.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_EXTENDED);
    so.SetOptimizedModelFilePath(target.c_str());
    Ort::Session session(Env(), source.c_str(), so);
  } catch (const std::exception& e) {
    return e.what();
  }
  return fs::exists(target) ? "" : "ONNX Runtime wrote no optimized model";
}

class Exporters : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("exporters");
    error_ = new std::string();
    const std::string cmd = std::string("/usr/bin/python3 ") + HETPLAN_TEST_DATA_DIR +
                            "/exporters/make_models.py --out '" + dir_->path.string() + "' >/dev/null 2>&1";
    if (int rc = std::system(cmd.c_str()); rc != 0) {
      *error_ = "make_models.py failed: " + cmd;
      return;
    }
    // Opset 18+ models: with ONNX 1.22 from the virtual environment scripts/setup.sh creates.
    const std::string venv = std::string(HETPLAN_SOURCE_DIR) + "/third_party/models-venv/bin/python";
    const std::string cmd_2026 = venv + " " + HETPLAN_TEST_DATA_DIR + "/exporters/make_models_2026.py --out '" +
                                 dir_->path.string() + "' >/dev/null 2>&1";
    if (int rc = std::system(cmd_2026.c_str()); rc != 0) {
      *error_ = "make_models_2026.py failed (scripts/setup_models_venv.sh creates " + venv + "): " + cmd_2026;
      return;
    }
    const std::string cmd_packages = venv + " " + HETPLAN_TEST_DATA_DIR + "/exporters/make_models_packages.py --out '" +
                                     dir_->path.string() + "' >/dev/null 2>&1";
    if (int rc = std::system(cmd_packages.c_str()); rc != 0) {
      *error_ = "make_models_packages.py failed: " + cmd_packages;
      return;
    }
    *error_ = SaveOrtOptimized(dir_->path / "ms_fused_source.onnx", dir_->path / "ms_fused.onnx");
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete error_;
  }
  void SetUp() override { ASSERT_EQ(*error_, ""); }
  static std::string File(const std::string& name) { return (dir_->path / name).string(); }
  friend fs::path ModelsDir();

  static inline TempDir* dir_ = nullptr;
  static inline std::string* error_ = nullptr;
};

fs::path ModelsDir() { return Exporters::dir_->path; }

std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(Exporters, OnnxRuntimesOptimizerWroteMicrosoftOperators) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ReadText(File("ms_fused.onnx"))));
  std::set<std::string> ms;
  for (const auto& n : m.graph().node()) {
    if (n.domain() == "com.microsoft") ms.insert(n.op_type());
  }
  EXPECT_TRUE(ms.count("FusedConv")) << "ONNX Runtime did not fuse Conv+Relu";
  EXPECT_TRUE(ms.count("SkipLayerNormalization")) << "ONNX Runtime did not fuse Add+LayerNorm";
  EXPECT_TRUE(ms.count("BiasGelu") || ms.count("Gelu")) << "ONNX Runtime did not fuse the erf GELU";
  EXPECT_TRUE(ms.count("FusedMatMul")) << "ONNX Runtime did not fuse Transpose+MatMul";

  // The matrix products keep their weight, so the CIM can take them.
  auto loaded = LoadOnnxModel(File("ms_fused.onnx"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  bool fused_conv = false;
  for (const Operator& op : loaded->graph.operators()) {
    if (op.type != "FusedConv") continue;
    fused_conv = true;
    EXPECT_TRUE(op.has_weight);
    EXPECT_EQ(op.matrix_op, "Conv");
    EXPECT_EQ(op.weight_rows, 3 * 3 * 3);
    EXPECT_EQ(op.weight_cols, 4);
    EXPECT_EQ(op.n_mvm, 8 * 8);
  }
  EXPECT_TRUE(fused_conv);
  auto contrib = LoadOnnxModel(File("ms_contrib.onnx"));
  ASSERT_TRUE(contrib.ok()) << contrib.status().message();
  bool nbits = false;
  for (const Operator& op : contrib->graph.operators()) {
    if (op.type != "MatMulNBits") continue;
    nbits = true;
    EXPECT_TRUE(op.has_weight);
    EXPECT_EQ(op.matrix_op, "MatMul");
    EXPECT_EQ(op.weight_rows, 64);
    EXPECT_EQ(op.weight_cols, 32);
    EXPECT_EQ(op.n_mvm, 8);
  }
  EXPECT_TRUE(nbits);
}

TEST_F(Exporters, RecurrentOperatorsHaveTheirStackedWeightMatrix) {
  const ModelCase& c = Cases()[2];
  auto m = LoadOnnxModel(File(c.file), ImportOptionsOf(c));
  ASSERT_TRUE(m.ok()) << m.status().message();
  int lstms = 0;
  for (const Operator& op : m->graph.operators()) {
    if (op.type != "LSTM") continue;
    ++lstms;
    // W [1, 4·16, 8], R [1, 4·16, 16]; the 512 samples framed by a stride-16 conv give 31 steps.
    EXPECT_TRUE(op.has_weight);
    EXPECT_EQ(op.matrix_op, "LSTM");
    EXPECT_EQ(op.weight_rows, 8 + 16);
    EXPECT_EQ(op.weight_cols, 64);
    EXPECT_EQ(op.directions, 1);
    EXPECT_EQ(op.n_mvm, 31);
  }
  EXPECT_EQ(lstms, 1) << "the 16 kHz, 512-sample branch has one LSTM";
  ASSERT_EQ(m->assumptions.branches.size(), 3u);
  EXPECT_EQ(m->assumptions.branches[0].node, "sr_if");
  EXPECT_TRUE(m->assumptions.branches[0].then);
  EXPECT_FALSE(m->assumptions.branches[0].assumed);
  for (const auto& b : m->assumptions.branches) EXPECT_TRUE(b.then) << b.node;
}

// ONNX Runtime's dynamic quantizer writes every LSTM as com.microsoft
// DynamicQuantizeLSTM: LSTM's shapes, its stacked matrix from the int8 W
// [dirs, input, 4·hidden] and R [dirs, hidden, 4·hidden] (transposed from
// LSTM's), 8-bit weights, and a CIM supporting LSTM's products may take it.
TEST_F(Exporters, DynamicQuantizeLstmHasLstmsMatrixAndItsInt8Weights) {
  auto m = LoadOnnxModel(File("lstm_dynamic.onnx"), {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  int lstms = 0;
  for (const Operator& op : m->graph.operators()) {
    if (op.type != "DynamicQuantizeLSTM") continue;
    ++lstms;
    EXPECT_TRUE(op.has_weight);
    EXPECT_EQ(op.matrix_op, "LSTM");
    EXPECT_EQ(op.weight_rows, 24 + 32);
    EXPECT_EQ(op.weight_cols, 4 * 32);
    EXPECT_EQ(op.directions, 1);
    EXPECT_EQ(op.n_mvm, 12);
    EXPECT_EQ(op.weight_bits, 8);
    ASSERT_EQ(op.outputs.size(), 1u) << "Y_h and Y_c are unused";
    EXPECT_EQ(op.outputs[0].shape, (std::vector<int64_t>{12, 1, 1, 32}));
    // int8 W and R (7,168 bytes) with float B (1,024) and the scales and zero points, not W and R as floats.
    EXPECT_LT(op.param_bytes, 7168 + 1024 + 64);
    EXPECT_GE(op.param_bytes, 7168 + 1024);
  }
  EXPECT_EQ(lstms, 1);
  auto platform = LoadPlatform("klein-arm");
  ASSERT_TRUE(platform.ok()) << platform.status().message();
  int cims = 0;
  for (const auto& pu : platform->pus) {
    if (pu.kind != PuKind::kCim) continue;
    ++cims;
    for (const Operator& op : m->graph.operators()) {
      if (op.type == "DynamicQuantizeLSTM") {
        EXPECT_TRUE(CimSupports(op, pu.cim)) << pu.name;
      }
    }
  }
  EXPECT_GT(cims, 0);
}

// Import → partition → validate → split → run, each model with its options.
TEST_F(Exporters, EachModelPartitionsValidatesSplitsAndRunsLikeTheUnsplitModel) {
  TempDir work("exporters-work");
  for (const ModelCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::string schedule = work / (c.name + ".json"), trace = work / (c.name + ".trace.json");
    const std::string split_dir = work / (c.name + "_split");
    auto part = RunHetplan(Cat({"partition", File(c.file)},
                               Cat(OptionsOf(c), {"--platform", "klein-arm", "--warmup", "1", "--runs", "3",
                                               "--cache-dir", work / "cache", "--out", schedule, "--trace", trace})),
                           testing::WithTimeout(300));
    ASSERT_EQ(part.exit_code, 0) << part.err << part.out;
    EXPECT_NE(part.out.find("validate  ok"), std::string::npos) << part.out;
    auto val = RunHetplan({"validate", schedule});
    EXPECT_EQ(val.exit_code, 0) << val.out << val.err;
    // split and run are given none of the options: the schedule has them.
    auto split = RunHetplan({"split", schedule, "--out", split_dir}, testing::WithTimeout(120));
    ASSERT_EQ(split.exit_code, 0) << split.err;
    const std::string run_json = work / (c.name + ".run.json");
    auto run = RunHetplan({"run", split_dir, "--runs", "2", "--warmup", "1", "--json", run_json},
                          testing::WithTimeout(120));
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    EXPECT_NE(run.out.find("outputs    match the unsplit model"), std::string::npos) << run.out;
    // The reference's drift from the profile (the CPU's costs are measured).
    EXPECT_NE(run.out.find("drift      unsplit model"), std::string::npos) << run.out;
    const auto report = nlohmann::json::parse(ReadText(run_json));
    const auto& e2e = report["end_to_end"];
    ASSERT_TRUE(e2e["reference_drift"].is_number()) << e2e.dump();
    EXPECT_NEAR(e2e["reference_drift"].get<double>(),
                e2e["unsplit_wall_us"].get<double>() / e2e["predicted_unsplit_us"].get<double>() - 1, 1e-9);
    // Each sub-model declares the opsets its nodes use, and no other.
    const auto manifest = nlohmann::json::parse(ReadText(fs::path(split_dir) / "manifest.json"));
    for (const auto& seg : manifest["segments"]) {
      onnx::ModelProto sub;
      ASSERT_TRUE(sub.ParseFromString(ReadText(fs::path(split_dir) / seg["file"].get<std::string>())));
      std::set<std::string> declared, used = {""};
      for (const auto& o : sub.opset_import()) declared.insert(o.domain());
      for (const auto& n : sub.graph().node()) used.insert(n.domain());
      EXPECT_EQ(declared, used) << seg["file"];
    }

    const auto s = nlohmann::json::parse(ReadText(schedule));
    const auto t = nlohmann::json::parse(ReadText(trace));
    std::string labels;
    for (const auto& e : t["traceEvents"]) {
      if (e.value("name", "") == "process_labels") labels = e["args"]["labels"].get<std::string>();
    }
    if (c.name == "fp16_chain") {  // judged with float16's tolerances, and says so
      EXPECT_NE(run.out.find("(float16: rtol 0.01, atol 0.01 by default)"), std::string::npos) << run.out;
      // Each boundary rounds to float16 where the unsplit model keeps float32: float32's tolerances fail it.
      auto strict = RunHetplan({"run", split_dir, "--runs", "1", "--warmup", "0", "--rtol", "1e-4", "--atol", "1e-5"},
                               testing::WithTimeout(120));
      EXPECT_EQ(strict.exit_code, 1) << strict.out;
      EXPECT_NE(strict.out.find("DIFFERS"), std::string::npos) << strict.out;
    }
    if (c.name == "fp16_inside") {  // float32 outputs computed in float16: float16's tolerance, and it says why
      EXPECT_EQ(manifest["outputs"][0]["narrowest_on_path"], "float16") << manifest["outputs"].dump();
      EXPECT_NE(run.out.find("(float32 computed in float16: rtol 0.01, atol 0.01 by default)"), std::string::npos)
          << run.out;
      EXPECT_EQ(report["check"]["outputs"][0]["tolerance"], "default for float16, the narrowest type on its path");
      EXPECT_GT(manifest["boundaries"].get<int>(), 0) << "the plan splits between float16 layers";
      // The split rounds to float16 at its boundaries where ONNX Runtime's whole-model run computes in float32.
      auto strict = RunHetplan({"run", split_dir, "--runs", "1", "--warmup", "0", "--rtol", "1e-4", "--atol", "1e-5"},
                               testing::WithTimeout(120));
      EXPECT_EQ(strict.exit_code, 1) << strict.out;
      EXPECT_NE(strict.out.find("DIFFERS"), std::string::npos) << strict.out;
    }
    if (c.name == "tts_durations") {  // planned for the sample's 8 frames, which it says and run feeds
      EXPECT_EQ(s["model"]["sample_inputs"]["tokens"]["shape"], nlohmann::json::array({1, 6})) << s["model"].dump();
      EXPECT_EQ(s["model"]["sample_inputs"]["tokens"]["file"], (ModelsDir() / "tts_tokens.npy").string());
      EXPECT_NE(part.out.find("assumes   input tokens = " + (ModelsDir() / "tts_tokens.npy").string() +
                              " (int64[1,6], sha256 "),
                std::string::npos)
          << part.out;
      EXPECT_NE(run.out.find("0 of 64 elements off"), std::string::npos) << "8 frames × 8 mels: " << run.out;
      // split keeps a copy beside the sub-models, so the folder runs wherever it moves
      EXPECT_EQ(manifest["model"]["sample_inputs"]["tokens"]["file"], "sample_tokens.npy");
      EXPECT_TRUE(fs::is_regular_file(fs::path(split_dir) / "sample_tokens.npy"));
    }
    if (c.name == "kv_decoder_4l") {  // each pattern's matches said, and the schedule records the names
      EXPECT_NE(part.out.find("assumes   shape [1,2,8,16] for the 4 inputs matching --shape 'past_key_values.*.key': "
                              "past_key_values.0.key, past_key_values.1.key, past_key_values.2.key, "
                              "past_key_values.3.key"),
                std::string::npos)
          << part.out;
      EXPECT_EQ(s["model"]["input_shapes"].size(), 9u) << s["model"].dump();
      EXPECT_EQ(s["model"]["input_shapes"]["past_key_values.3.value"], nlohmann::json::array({1, 2, 8, 16}));
    }
    if (c.name == "kv_prefill") {  // the empty past is a constant the schedule records; run feeds it
      for (const char* kv : {"past_key_values.0.key", "past_key_values.0.value"}) {
        EXPECT_EQ(s["model"]["input_values"][kv]["values"], nlohmann::json::array()) << s["model"].dump();
        EXPECT_EQ(s["model"]["input_values"][kv]["shape"], nlohmann::json::array({1, 4, 0, 16}));
      }
      EXPECT_NE(part.out.find("assumes   input past_key_values.0.key is empty (float32[1,4,0,16])"),
                std::string::npos)
          << part.out;
    }
    if (c.name == "bf16_mlp") {  // measured and run as float32 copies, and both say so
      EXPECT_NE(part.out.find("cpu: measured on a float32 copy of the model, not in its own types: ONNX Runtime 1.29.0 "
                              "has no CPU kernel for the model's bfloat16"),
                std::string::npos)
          << part.out;
      bool noted = false;
      for (const auto& n : s["notes"]) noted = noted || n.get<std::string>().find("float32 copy") != std::string::npos;
      EXPECT_TRUE(noted) << s["notes"].dump();
      EXPECT_NE(run.out.find("types      every segment and the unsplit model ran as float32 copies"), std::string::npos)
          << run.out;
      EXPECT_NE(report.value("types_note", std::string()).find("float32 copies"), std::string::npos);
      // Two measured PUs co-run the same copy (ONNX Runtime cannot load the bfloat16 operators either).
      auto two = RunHetplan({"partition", File(c.file), "--platform", "host-2core", "--warmup", "1", "--runs", "3",
                             "--cache-dir", work / "cache", "--out", work / "bf16_two.json"},
                            testing::WithTimeout(300));
      ASSERT_EQ(two.exit_code, 0) << two.err << two.out;
      EXPECT_NE(two.out.find("cpu0+cpu1: slowdown, co-execution and hand-off costs measured by co-running with "
                             "onnxruntime 1.29.0"),
                std::string::npos)
          << two.out;
      EXPECT_NE(two.out.find(", on a float32 copy of the model"), std::string::npos) << two.out;
      auto m = LoadOnnxModel(File(c.file), {});  // planned in its own type: 2 bytes an element
      ASSERT_TRUE(m.ok()) << m.status().message();
      for (const Operator& op : m->graph.operators()) {
        for (const auto& t : op.outputs) {
          EXPECT_EQ(t.dtype, "bfloat16") << op.name;
          EXPECT_EQ(t.element_bytes, 2) << op.name;
        }
      }
    }
    if (c.name.starts_with("external_")) {  // the weights stayed external: a data file beside each sub-model
      int data_files = 0;
      for (const auto& seg : manifest["segments"]) {
        if (!seg.contains("data_file")) continue;
        ++data_files;
        EXPECT_EQ(seg["data_file"], seg["file"].get<std::string>() + ".data");
        EXPECT_TRUE(fs::is_regular_file(fs::path(split_dir) / seg["data_file"].get<std::string>()));
      }
      EXPECT_GT(data_files, 0) << manifest.dump();
      // A data file that changed since the split is refused by run in one line (its size is in the manifest).
      for (const auto& seg : manifest["segments"]) {
        if (!seg.contains("data_file")) continue;
        const fs::path data = fs::path(split_dir) / seg["data_file"].get<std::string>();
        EXPECT_EQ(seg["data_bytes"].get<int64_t>(), static_cast<int64_t>(fs::file_size(data)));
        fs::resize_file(data, fs::file_size(data) + 1);
        auto changed = RunHetplan({"run", split_dir, "--runs", "1", "--warmup", "0"}, testing::WithTimeout(120));
        EXPECT_EQ(changed.exit_code, 2);  // bad input, as a changed segment file
        EXPECT_NE(changed.err.find("changed since it was split"), std::string::npos) << changed.err;
        EXPECT_EQ(std::count(changed.err.begin(), changed.err.end(), '\n'), 1) << changed.err;
        break;
      }
      // Without the model's data file split cannot copy them: one line naming the file and the fix.
      const fs::path data = File(c.file + ".data"), moved = work / (c.name + ".data.moved");
      fs::rename(data, moved);
      auto missing = RunHetplan({"split", schedule, "--out", work / (c.name + "_split_missing")});
      fs::rename(moved, data);
      EXPECT_EQ(missing.exit_code, 1);
      EXPECT_NE(missing.err.find("is stored as external data in '" + c.file + ".data', which is not beside the model"),
                std::string::npos)
          << missing.err;
      EXPECT_NE(missing.err.find("copy the model's data file next to it"), std::string::npos) << missing.err;
      EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
    }
    if (c.name == "onnxscript_functions") {  // onnxscript names nodes n0, n1, ...: call/call/node
      std::vector<std::string> names;
      for (const auto& op : s["operators"]) {
        names.push_back(op["name"].get<std::string>() + " " + op["type"].get<std::string>());
      }
      EXPECT_EQ(names, (std::vector<std::string>{"n0/n0/n0 Conv", "n0/n0/n1 LeakyRelu", "n0/n1/n0 Conv",
                                                 "n0/n1/n1 LeakyRelu", "n1 Relu"}));
    }
    if (c.name == "local_functions") {  // inlined: each operator named after the call it came from
      std::set<std::string> names;
      for (const auto& op : s["operators"]) names.insert(op["name"].get<std::string>());
      for (const char* name : {"/stage1/Stage/block_a/conv", "/stage1/Stage/block_a/act", "/stage1/Stage/block_b/conv",
                               "/stage1/Stage/block_b/act", "/head/ConvAct/conv", "/head/ConvAct/act"}) {
        EXPECT_TRUE(names.count(name)) << name << " in " << s["operators"].dump();
      }
    }
    if (c.name == "tf2onnx_split_pads") {  // the pads folded: Pad is an operator of the plan
      bool pad = false;
      for (const auto& op : s["operators"]) pad = pad || op["type"] == "Pad";
      EXPECT_TRUE(pad) << part.out;
    }
    if (c.name == "vad") {
      EXPECT_EQ(s["model"]["input_values"]["sr"]["values"], nlohmann::json::array({16000}));
      EXPECT_EQ(s["model"]["input_shapes"]["input"], nlohmann::json::array({1, 512}));
      EXPECT_EQ(s["model"]["branches"][0]["node"], "sr_if");
      EXPECT_EQ(s["model"]["branches"][0]["branch"], "then");
      EXPECT_EQ(s["model"]["branches"][0]["assumed"], false);
      EXPECT_NE(labels.find("If sr_if: then (condition folded)"), std::string::npos) << labels;
      EXPECT_NE(part.out.find("assumes   value sr = 16000"), std::string::npos) << part.out;
    }
    if (c.name == "kws_two_stage") {
      ASSERT_EQ(s["model"]["branches"].size(), 1u);
      EXPECT_EQ(s["model"]["branches"][0]["node"], "second_stage");
      EXPECT_EQ(s["model"]["branches"][0]["assumed"], true);
      EXPECT_NE(labels.find("If second_stage: then (assumed, --branch)"), std::string::npos) << labels;
      EXPECT_NE(part.out.find("assumes   branch If 'second_stage': then (assumed with --branch"), std::string::npos)
          << part.out;
      bool noted = false;
      for (const auto& n : s["notes"]) noted = noted || n.get<std::string>().find("second_stage") != std::string::npos;
      EXPECT_TRUE(noted);
    }
  }
}

// --- shapes: hetplan's against ONNX Runtime's ----------------------------------

// `bytes` with its bfloat16 as float32: ONNX Runtime 1.29's CPU has no
// bfloat16 kernel, and the shapes are the same.
std::string AsFloat32(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  EXPECT_TRUE(Bfloat16ToFloat32(&m, "", "test").ok());
  std::string out;
  m.SerializeToString(&out);
  return out;
}

// Every tensor of `m`'s main graph that `keep` accepts becomes a graph output,
// typed as `types` says.
std::string ExposeAll(onnx::ModelProto m, const std::map<std::string, int32_t>& types) {
  std::set<std::string> outputs;
  for (const auto& o : m.graph().output()) outputs.insert(o.name());
  for (const auto& n : m.graph().node()) {
    for (const auto& o : n.output()) {
      auto it = types.find(o);
      if (o.empty() || outputs.count(o) || it == types.end()) continue;
      auto* vi = m.mutable_graph()->add_output();
      vi->set_name(o);
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(it->second);
      outputs.insert(o);
    }
  }
  m.mutable_graph()->clear_value_info();
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

// Runs `bytes` with ONNX Runtime (no graph optimisation, so every node runs
// as written) and returns every output's shape. `values` feed inputs by name;
// others are random floats / zero integers of the shapes given.
std::map<std::string, std::vector<int64_t>> OrtShapes(const std::string& bytes,
                                                      const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                                      const std::vector<FixedInput>& values, const fs::path& folder,
                                                      const std::map<std::string, TensorData>& samples = {}) {
  Ort::SessionOptions so;
  so.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_DISABLE_ALL);
  so.AddConfigEntry("session.model_external_initializers_file_folder_path", folder.c_str());  // external data
  so.SetIntraOpNumThreads(1);
  Ort::Session session(Env(), bytes.data(), bytes.size(), so);
  Ort::AllocatorWithDefaultOptions alloc;
  std::vector<std::string> in_names, out_names;
  std::vector<Ort::Value> in;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (size_t i = 0; i < session.GetInputCount(); ++i) {
    in_names.emplace_back(session.GetInputNameAllocated(i, alloc).get());
    Ort::TypeInfo type_info = session.GetInputTypeInfo(i);  // `info` points into it
    auto info = type_info.GetTensorTypeAndShapeInfo();
    std::vector<int64_t> shape = info.GetShape();
    if (auto it = input_shapes.find(in_names.back()); it != input_shapes.end()) shape = it->second;
    auto fixed = std::find_if(values.begin(), values.end(), [&](const FixedInput& f) { return f.name == in_names.back(); });
    if (fixed != values.end()) shape = fixed->shape;
    Ort::Value v = Ort::Value::CreateTensor(alloc, shape.data(), shape.size(), info.GetElementType());
    const size_t n = v.GetTensorTypeAndShapeInfo().GetElementCount();
    if (auto sample = samples.find(in_names.back()); sample != samples.end()) {  // --sample-input
      std::memcpy(v.GetTensorMutableRawData(), sample->second.bytes.data(), sample->second.bytes.size());
    } else if (info.GetElementType() == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
      auto* p = v.GetTensorMutableData<float>();
      for (size_t k = 0; k < n; ++k) p[k] = fixed != values.end() ? std::stof(fixed->values[k]) : uniform(rng);
    } else if (info.GetElementType() == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64) {
      auto* p = v.GetTensorMutableData<int64_t>();
      for (size_t k = 0; k < n; ++k) p[k] = fixed != values.end() ? std::stoll(fixed->values[k]) : 0;
    } else {
      std::memset(v.GetTensorMutableRawData(), 0, v.GetTensorSizeInBytes());
    }
    in.push_back(std::move(v));
  }
  for (size_t i = 0; i < session.GetOutputCount(); ++i) out_names.emplace_back(session.GetOutputNameAllocated(i, alloc).get());
  std::vector<const char*> in_c, out_c;
  for (const auto& s : in_names) in_c.push_back(s.c_str());
  for (const auto& s : out_names) out_c.push_back(s.c_str());
  auto out = session.Run(Ort::RunOptions{}, in_c.data(), in.data(), in.size(), out_c.data(), out_c.size());
  std::map<std::string, std::vector<int64_t>> shapes;
  for (size_t i = 0; i < out.size(); ++i) shapes[out_names[i]] = out[i].GetTensorTypeAndShapeInfo().GetShape();
  return shapes;
}

TEST_F(Exporters, EveryTensorsShapeAfterImportEqualsOnnxRuntimes) {
  for (const ModelCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const ImportOptions options = ImportOptionsOf(c);
    auto m = LoadOnnxModel(File(c.file), options);
    ASSERT_TRUE(m.ok()) << m.status().message();
    // hetplan's shapes: every tensor of the imported graph with a static shape.
    std::map<std::string, std::vector<int64_t>> mine;
    std::map<std::string, int32_t> types;
    const auto& g = m->model->graph();
    std::set<std::string> graph_inputs;
    for (const auto& vi : g.input()) graph_inputs.insert(vi.name());
    for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
      for (const auto& vi : *list) {
        const auto& tt = vi.type().tensor_type();
        types[vi.name()] = tt.elem_type();
        std::vector<int64_t> dims;
        bool known = tt.has_shape();
        for (const auto& d : tt.shape().dim()) {
          known = known && d.has_dim_value();
          dims.push_back(d.dim_value());
        }
        if (known) mine[vi.name()] = dims;
      }
    }
    for (const Operator& op : m->graph.operators()) {
      for (const auto* ts : {&op.inputs, &op.outputs}) {
        for (const auto& t : *ts) {
          ASSERT_TRUE(mine.count(t.name)) << t.name;
          EXPECT_EQ(mine[t.name], t.shape) << t.name;
        }
      }
    }
    ASSERT_GT(mine.size(), 3u);
    // ONNX Runtime running the imported model, every tensor an output.
    // The shapes as planned: --shape patterns expanded to the inputs they matched.
    const auto& shapes = m->assumptions.input_shapes;
    auto samples = ReadSamples(m->assumptions.sample_inputs);
    ASSERT_TRUE(samples.ok()) << samples.status().message();
    const auto ort_imported = OrtShapes(AsFloat32(ExposeAll(*m->model, types)), shapes, {}, dir_->path, *samples);
    int compared = 0;
    for (const auto& [name, dims] : mine) {
      if (graph_inputs.count(name)) continue;  // given, not computed
      auto it = ort_imported.find(name);
      ASSERT_NE(it, ort_imported.end()) << name;
      EXPECT_EQ(dims, it->second) << name << " after import vs ONNX Runtime";
      ++compared;
    }
    // And running the model as the exporter wrote it: the tensors of its main
    // graph that survive import (branch tensors live in subgraphs there).
    onnx::ModelProto original;
    ASSERT_TRUE(original.ParseFromString(ReadText(File(c.file))));
    std::map<std::string, bool> assumed;
    for (const auto& b : m->assumptions.branches) {
      if (b.assumed) assumed[b.node] = b.then;
    }
    ASSERT_TRUE(PinIfBranches(&original, assumed).ok());
    const auto ort_original = OrtShapes(AsFloat32(ExposeAll(original, types)), shapes,
                                        m->assumptions.fixed_inputs, dir_->path, *samples);
    int in_original = 0;
    for (const auto& [name, dims] : ort_original) {
      auto it = mine.find(name);
      if (it == mine.end()) continue;
      EXPECT_EQ(it->second, dims) << name << " after import vs ONNX Runtime on the original model";
      ++in_original;
    }
    EXPECT_GE(compared, 3);
    EXPECT_GT(in_original, 0);
  }
}

// ONNX Runtime's 4-bit weight quantizer, in both formats: block-wise QDQ
// (int4 and uint4 with DequantizeLinear's block_size, opset 21) and
// MatMulNBits. Each product keeps its weight matrix and its 4 bits, stored
// packed (two weights a byte, plus the scales and zero points), and a CIM
// with 2-bit cells lays it out in 2 slices where a float weight takes its own
// 8 bits' 4.
TEST_F(Exporters, FourBitWeightsKeepTheirMatrixAndTheirBits) {
  auto platform = LoadPlatform("neurosim-rram");
  ASSERT_TRUE(platform.ok()) << platform.status().message();
  const CimParams* cim = nullptr;
  for (const auto& pu : platform->pus) {
    if (pu.kind == PuKind::kCim) cim = &pu.cim;
  }
  ASSERT_NE(cim, nullptr);
  ASSERT_EQ(cim->bits_per_cell, 2);
  ASSERT_EQ(cim->weight_bits, 8);
  // (file, product, stored bytes: weight 64 x 64 x 4 bits, scales, zero points, the activation's QDQ parameters)
  const std::vector<std::tuple<std::string, std::string, int64_t>> products = {
      {"int4_blockwise.onnx", "/fc1/MatMul", 2048 + 2 * 64 * 4 + 4 + 1},
      {"int4_blockwise.onnx", "/fc2/MatMul", 2048 + 2 * 64 * 4 + 2 * 64 / 2},
      {"matmul_nbits.onnx", "/fc1/MatMul_Q4", 2048 + 128 * 4 + 64},
      {"matmul_nbits.onnx", "/fc2/MatMul_Q4", 2048 + 128 * 4}};
  for (const auto& [file, name, bytes] : products) {
    SCOPED_TRACE(file + " " + name);
    auto m = LoadOnnxModel(File(file), {});
    ASSERT_TRUE(m.ok()) << m.status().message();
    const Operator* op = nullptr;
    for (const Operator& o : m->graph.operators()) {
      if (o.name == name) op = &o;
    }
    ASSERT_NE(op, nullptr);
    EXPECT_TRUE(op->has_weight);
    EXPECT_EQ(op->matrix_op, "MatMul");
    EXPECT_EQ(op->weight_rows, 64);
    EXPECT_EQ(op->weight_cols, 64);
    EXPECT_EQ(op->n_mvm, 16);
    EXPECT_EQ(op->weight_bits, 4);
    EXPECT_EQ(op->param_bytes, bytes);
    EXPECT_EQ(CimLayoutOf(*op, *cim).cols, 64 * 2);
    Operator as_float = *op;
    as_float.weight_bits = 0;
    EXPECT_EQ(CimLayoutOf(as_float, *cim).cols, 64 * 4);
  }
}

// ONNX Runtime's dynamic quantizer's ConvInteger writes int32 but multiplies
// bytes: a roofline PU prices it at its int8 peak with Conv's efficiency, and
// a PU with no int8 peak does not run it (issue 47: the soc-example preset
// priced it as float32 work, slower than the float model).
TEST_F(Exporters, IntegerOperatorsArePricedAtTheIntegerPeak) {
  auto m = LoadOnnxModel(File("ort_dynamic_quant.onnx"), {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto platform = LoadPlatform("soc-example");
  ASSERT_TRUE(platform.ok()) << platform.status().message();
  auto costs = BuildCostModel(m->graph, *platform, {});
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  int conv_integer = 0;
  for (const Operator& op : m->graph.operators()) {
    if (op.type != "ConvInteger") continue;
    ++conv_integer;
    EXPECT_EQ(op.dtype, "int32");
    EXPECT_EQ(RooflineComputeDtype(op), "uint8");
    for (size_t p = 0; p < platform->pus.size(); ++p) {
      const RooflineParams& r = platform->pus[p].roofline;
      ASSERT_TRUE(costs->supported(op.id, static_cast<int>(p)));
      const double flops = 2.0 * static_cast<double>(op.macs);
      const double compute_us = flops / (r.peak_gflops.at("int8") * 1e3) / r.efficiency.at("Conv");
      EXPECT_GE(costs->latency_us(op.id, static_cast<int>(p)), r.dispatch_us + compute_us - 1e-9);
      EXPECT_NEAR(costs->latency_us(op.id, static_cast<int>(p)), *RooflineLatencyUs(op, r), 1e-9);
    }
  }
  EXPECT_EQ(conv_integer, 2);
  // An NPU without an int8 peak does not run them.
  Platform no_int8 = *platform;
  no_int8.pus[2].roofline.peak_gflops.erase("int8");
  auto without = BuildCostModel(m->graph, no_int8, {});
  ASSERT_TRUE(without.ok()) << without.status().message();
  for (const Operator& op : m->graph.operators()) {
    if (op.type == "ConvInteger") {
      EXPECT_FALSE(without->supported(op.id, 2)) << op.name;
    }
  }
}

// Import reads from a .onnx.data file only what shape inference and folding
// need (the arguments: pads, axes, sizes); the weights stay there, counted
// from their dims, and the graph is the one of the same model with its
// tensors inside. (ONNX Runtime 1.29 refuses this file: its shape inference
// does not read external arguments.)
TEST_F(Exporters, ExternalDataImportReadsTheArgumentsNotTheWeights) {
  auto inside = LoadOnnxModel(File("opset21_forms.onnx"), {});
  auto external = LoadOnnxModel(File("external_arguments.onnx"), {});
  ASSERT_TRUE(inside.ok()) << inside.status().message();
  ASSERT_TRUE(external.ok()) << external.status().message();
  EXPECT_EQ(inside->external_tensors, 0);
  EXPECT_EQ(external->external_tensors, 6);  // w1, b1, gn_scale, gn_bias, w2, b2
  EXPECT_EQ(external->external_bytes, (8 * 8 * 3 * 3 + 8 + 8 + 8 + 8 * 8 + 8) * 4);
  EXPECT_EQ(external->external_data_dir, fs::absolute(dir_->path).string());
  for (const auto& t : external->model->graph().initializer()) {
    const bool argument = t.data_type() == onnx::TensorProto::INT64;
    EXPECT_EQ(t.data_location() == onnx::TensorProto::EXTERNAL, !argument) << t.name();
    if (argument) {
      EXPECT_EQ(t.raw_data().size(), 8u * static_cast<size_t>(t.dims(0))) << t.name();
    }
  }
  ASSERT_EQ(inside->graph.size(), external->graph.size());
  for (int v = 0; v < inside->graph.size(); ++v) {
    EXPECT_EQ(inside->graph.op(v).name, external->graph.op(v).name);
    EXPECT_EQ(inside->graph.op(v).param_bytes, external->graph.op(v).param_bytes) << inside->graph.op(v).name;
    EXPECT_EQ(inside->graph.op(v).macs, external->graph.op(v).macs) << inside->graph.op(v).name;
  }
  // From bytes there is no folder to read the arguments from: one line that says so.
  auto bytes = LoadOnnxModelFromBytes(ReadText(File("external_arguments.onnx")), "external_arguments.onnx", {});
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("the model was given without its folder"), std::string::npos)
      << bytes.status().message();
}

// The options a user would give are needed, and each error names the fix.
TEST_F(Exporters, WithoutTheirOptionsTheErrorsNameTheFix) {
  auto symbolic = RunHetplan({"graph", File("symbolic_inputs.onnx")});
  EXPECT_EQ(symbolic.exit_code, 2);
  EXPECT_NE(symbolic.err.find("2 graph inputs need a static shape"), std::string::npos) << symbolic.err;
  EXPECT_NE(symbolic.err.find("--shape audio=1x1600"), std::string::npos) << symbolic.err;
  EXPECT_NE(symbolic.err.find("'image' dim 0 ('N'), dim 2 (unnamed) are symbolic: --shape image=1x3x1x8"),
            std::string::npos)
      << symbolic.err;
  // A declared -1 is unknown, as a name is; the suggestion keeps the known 48x192.
  auto paddle = RunHetplan({"graph", File("paddle_minus_one.onnx")});
  EXPECT_EQ(paddle.exit_code, 2);
  EXPECT_NE(paddle.err.find("'x' dim 0 (declared -1) is symbolic: --shape x=1x3x48x192"), std::string::npos)
      << paddle.err;
  auto kv = RunHetplan({"graph", File("kv_decoder.onnx")});  // batch, seq and past symbolic
  EXPECT_EQ(kv.exit_code, 2);
  EXPECT_NE(kv.err.find("3 graph inputs need a static shape"), std::string::npos) << kv.err;
  EXPECT_NE(kv.err.find("past_key_values.0.key"), std::string::npos) << kv.err;
  // Frames decided by the tokens: the first operator whose shape depends on them, and both options.
  auto tts = RunHetplan({"graph", File("tts_durations.onnx"), "--shape", "tokens=1x6"});
  EXPECT_NE(tts.exit_code, 0);
  EXPECT_NE(tts.err.find("node '/regulate/Range' (Range)"), std::string::npos) << tts.err;
  EXPECT_NE(tts.err.find("--sample-input tokens=FILE.npy"), std::string::npos) << tts.err;
  EXPECT_EQ(std::count(tts.err.begin(), tts.err.end(), '\n'), 1) << tts.err;
  auto missing = RunHetplan({"graph", File("tts_durations.onnx"), "--sample-input", "tokens=" + File("none.npy")});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("none.npy: cannot open the sample input"), std::string::npos) << missing.err;
  auto not_npy = RunHetplan({"graph", File("tts_durations.onnx"), "--sample-input", "tokens=" + File("tts_durations.onnx")});
  EXPECT_NE(not_npy.exit_code, 0);
  EXPECT_NE(not_npy.err.find("not a .npy file"), std::string::npos) << not_npy.err;
  // --shape patterns: one that matches nothing, and two that match one input, each refused in one line.
  auto none = RunHetplan({"graph", File("kv_decoder_4l.onnx"), "--shape", "hidden_states=1x1x32", "--shape",
                          "past.*.key=1x2x8x16"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--shape pattern 'past.*.key' matches no graph input"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("past_key_values.0.key"), std::string::npos) << none.err;
  auto twice = RunHetplan({"graph", File("kv_decoder_4l.onnx"), "--shape", "hidden_states=1x1x32", "--shape",
                           "past_key_values.*=1x2x8x16", "--shape", "*.0.key=1x2x4x16"});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("both match input 'past_key_values.0.key'; give its shape by name"), std::string::npos)
      << twice.err;
  // A name given exactly wins over a pattern.
  ImportOptions exact;
  exact.input_shapes = {{"hidden_states", {1, 1, 32}}, {"past_key_values.*", {1, 2, 8, 16}},
                        {"past_key_values.0.key", {1, 2, 4, 16}}, {"past_key_values.0.value", {1, 2, 4, 16}}};
  auto layers = LoadOnnxModel(File("kv_decoder_4l.onnx"), exact);
  ASSERT_TRUE(layers.ok()) << layers.status().message();
  EXPECT_EQ(layers->assumptions.input_shapes.at("past_key_values.0.key"), (std::vector<int64_t>{1, 2, 4, 16}));
  EXPECT_EQ(layers->assumptions.input_shapes.at("past_key_values.1.key"), (std::vector<int64_t>{1, 2, 8, 16}));
  ASSERT_EQ(layers->assumptions.shape_patterns.size(), 1u);
  EXPECT_EQ(layers->assumptions.shape_patterns[0].matched.size(), 6u);
  auto kws = RunHetplan({"graph", File("kws_two_stage.onnx")});
  EXPECT_NE(kws.exit_code, 0);
  EXPECT_NE(kws.err.find("'second_stage'"), std::string::npos) << kws.err;
  EXPECT_NE(kws.err.find("--branch second_stage=then"), std::string::npos) << kws.err;
  auto vad = RunHetplan({"graph", File("vad.onnx"), "--shape", "input=1x512"});
  EXPECT_NE(vad.exit_code, 0);
  EXPECT_NE(vad.err.find("'sr_if'"), std::string::npos) << vad.err;
  EXPECT_NE(vad.err.find("graph input 'sr'"), std::string::npos) << vad.err;
  EXPECT_NE(vad.err.find("--value"), std::string::npos) << vad.err;
  auto wrong = RunHetplan({"graph", File("vad.onnx"), "--shape", "input=1x512", "--value", "sr=16000", "--branch",
                           "sr_if=else"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("folds to true"), std::string::npos) << wrong.err;
  // Another length takes the other nested branch: no LSTM then.
  ImportOptions shorter;
  shorter.input_shapes["input"] = {1, 256};
  shorter.input_values["sr"] = {"16000"};
  auto other = LoadOnnxModel(File("vad.onnx"), shorter);
  ASSERT_TRUE(other.ok()) << other.status().message();
  for (const Operator& op : other->graph.operators()) EXPECT_NE(op.type, "LSTM");
}

}  // namespace
}  // namespace hetplan
