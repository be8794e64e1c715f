// A PU as an ONNX Runtime configuration: provider, provider options,
// threads, cores (docs/platform-format.md), the presets that use them, and
// the one-line errors for configurations that cannot be.
#include <gtest/gtest.h>

#include <string>

#include "testing/expect.h"
#include "hetplan/platform/platform.h"

namespace hetplan {
namespace {

Result<Platform> ParsePus(const std::string& pu_keys) {
  return ParsePlatformYaml("name: p\npus:\n  - name: cpu0\n    kind: cpu\n" + pu_keys, "p.yaml");
}

// PU keys that must fail, where the error must point and what it must say.
struct Case {
  std::string keys, where, what;
};

template <size_t N>
void ExpectOneLineErrors(const Case (&cases)[N]) {
  for (const Case& c : cases) {
    auto p = ParsePus(c.keys);
    ASSERT_FALSE(p.ok()) << c.keys;
    const std::string& msg = p.status().message();
    EXPECT_HAS(msg, c.where);
    EXPECT_HAS(msg, c.what);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(PuRuntime, HostTwoCorePresetIsTwoPinnedCpuPus) {
  auto p = LoadPlatform("host-2core");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->pus.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const ProcessingUnit& pu = p->pus[static_cast<size_t>(i)];
    EXPECT_EQ(pu.name, "cpu" + std::to_string(i));
    EXPECT_EQ(pu.kind, PuKind::kCpu);
    EXPECT_EQ(pu.cost_source, CostSource::kProfile);
    EXPECT_EQ(pu.provider, "cpu");
    EXPECT_EQ(pu.threads, 1);
    EXPECT_EQ(pu.cores, std::vector<int>{i});
  }
  EXPECT_TRUE(p->links.empty());
}

TEST(PuRuntime, CudaExampleNamesItsProviderAndOptions) {
  auto p = LoadPlatform("cpu-cuda-example");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const ProcessingUnit& gpu = p->pus[static_cast<size_t>(p->FindPu("gpu"))];
  EXPECT_EQ(gpu.kind, PuKind::kGpu);
  EXPECT_EQ(gpu.cost_source, CostSource::kProfile);
  EXPECT_EQ(gpu.provider, "cuda");
  EXPECT_EQ(gpu.provider_options.at("device_id"), "0");
  EXPECT_EQ(gpu.provider_options.at("cudnn_conv_algo_search"), "DEFAULT");
  EXPECT_EQ(gpu.cores, std::vector<int>{4});
  EXPECT_NE(p->description.find("UNTESTED"), std::string::npos);
}

TEST(PuRuntime, ProviderNamesAreHetplansOrOrts) {
  EXPECT_EQ(CanonicalProvider("CUDA"), "cuda");
  EXPECT_EQ(CanonicalProvider("CUDAExecutionProvider"), "cuda");
  EXPECT_EQ(CanonicalProvider("OpenVINOExecutionProvider"), "openvino");
  EXPECT_EQ(CanonicalProvider("cpu"), "cpu");
  EXPECT_EQ(CanonicalProvider("cdua"), "");
  EXPECT_EQ(CanonicalProvider(""), "");
}

TEST(PuRuntime, BadConfigurationsAreOneLineErrorsWithTheLine) {
  const Case cases[] = {
      {"    provider: cdua\n", "p.yaml:5: pus[0].provider", "use one of: cpu, cuda"},
      {"    cores: [0, 0]\n", "pus[0].cores[1]", "listed twice"},
      {"    cores: [-1]\n", "pus[0].cores[0]", "out of range"},
      {"    cores: 0\n", "pus[0].cores", "must be a list"},
      {"    threads: 2\n    cores: [0]\n", "pus[0].threads", "share cores"},
      {"    provider_options: {device_id: 0}\n", "pus[0].provider_options", "cpu provider takes no options"},
      {"    cost: table\n    table: t.csv\n    cores: [0]\n", "pus[0].cores", "applies only to PUs with cost: profile"},
  };
  ExpectOneLineErrors(cases);
}

TEST(PuRuntime, OverridesSetProviderOptionsAndCores) {
  auto p = ParsePus("    cores: [0]\n");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(ApplyOverride(*p, "cpu0.cores=2,3").ok());
  EXPECT_EQ(p->pus[0].cores, (std::vector<int>{2, 3}));
  ASSERT_TRUE(ApplyOverride(*p, "cpu0.provider=openvino").ok());
  ASSERT_TRUE(ApplyOverride(*p, "cpu0.provider_options.device_type=CPU").ok());
  EXPECT_EQ(p->pus[0].provider_options.at("device_type"), "CPU");
  Status bad = ApplyOverride(*p, "cpu0.provider=npu9");
  EXPECT_FALSE(bad.ok());
  EXPECT_HAS(bad.message(), "unknown execution provider 'npu9'");
  EXPECT_EQ(p->pus[0].provider, "openvino");  // unchanged after the failed override
}

TEST(PuRuntime, JsonCarriesTheConfiguration) {
  auto p = LoadPlatform("host-2core");
  ASSERT_TRUE(p.ok());
  nlohmann::json j = PlatformToJson(*p);
  EXPECT_EQ(j["cpu1"]["provider"], "cpu");
  EXPECT_EQ(j["cpu1"]["cores"], nlohmann::json::array({1}));
  EXPECT_EQ(j["cpu1"]["threads"], 1);
  EXPECT_TRUE(j["cpu1"]["provider_options"].is_object());
  // Analytical PUs keep their JSON as it was: no runtime keys.
  auto klein = LoadPlatform("klein-arm");
  ASSERT_TRUE(klein.ok());
  nlohmann::json k = PlatformToJson(*klein);
  EXPECT_FALSE(k["cim"].contains("provider"));
  EXPECT_EQ(k["cpu"]["cores"], nlohmann::json::array());
}


// runtime: openvino (docs/openvino.md): the device and its properties, the
// BIDENT preset, and the combinations that cannot be.
TEST(PuRuntime, OpenVinoPusNameTheirDevice) {
  auto p = ParsePus("    cost: profile\n    runtime: openvino\n    device: GPU.1\n"
                    "    provider_options: {INFERENCE_PRECISION_HINT: f16}\n");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->pus[0].OpenVino());
  EXPECT_EQ(p->pus[0].OpenVinoDevice(), "GPU.1");
  EXPECT_EQ(p->pus[0].provider_options.at("INFERENCE_PRECISION_HINT"), "f16");
  nlohmann::json j = PlatformToJson(*p);
  EXPECT_EQ(j["cpu0"]["runtime"], "openvino");
  EXPECT_EQ(j["cpu0"]["device"], "GPU.1");
  EXPECT_FALSE(j["cpu0"].contains("provider"));
  auto plain = ParsePus("    runtime: openvino\n");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->pus[0].OpenVinoDevice(), "CPU");
  ASSERT_TRUE(ApplyOverride(*plain, "cpu0.device=NPU").ok());
  EXPECT_EQ(plain->pus[0].OpenVinoDevice(), "NPU");

  auto bident = LoadPlatform("bident-lunar-lake");
  ASSERT_TRUE(bident.ok()) << bident.status().message();
  ASSERT_EQ(bident->pus.size(), 3u);
  const char* devices[] = {"CPU", "GPU", "NPU"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(bident->pus[i].OpenVino());
    EXPECT_EQ(bident->pus[i].OpenVinoDevice(), devices[i]);
    EXPECT_EQ(bident->pus[i].cost_source, CostSource::kProfile);
  }
}

TEST(PuRuntime, OpenVinoMisconfigurationsAreOneLineErrors) {
  const Case cases[] = {
      {"    runtime: tvm\n", "pus[0].runtime", "use one of: onnxruntime, openvino"},
      {"    device: GPU\n", "pus[0].device", "add runtime: openvino"},
      {"    runtime: openvino\n    provider: cuda\n", "pus[0].provider", "name the OpenVINO device with device:"},
      {"    runtime: openvino\n    cores: [0]\n", "pus[0].cores", "OpenVINO places its own threads"},
      {"    runtime: openvino\n    device: \"HETERO:GPU,CPU\"\n", "pus[0].device", "not an OpenVINO device name"},
  };
  ExpectOneLineErrors(cases);
  auto cim = ParsePlatformYaml("name: p\npus:\n  - {name: c, kind: cim, runtime: openvino}\n", "p.yaml");
  ASSERT_FALSE(cim.ok());
  EXPECT_HAS(cim.status().message(), "pus[0].runtime");
  EXPECT_HAS(cim.status().message(), "PUs of kind cpu, gpu or npu");
}

}  // namespace
}  // namespace hetplan
