// The validator as the trust anchor (issue 59): schedule files hetplan writes
// by several planning methods are each accepted as written, and each edit of
// a kind a reviewer tried (a quantity the file can recompute, a negative
// number, crossbars named twice, devices that disagree with the platform
// block, missing work, slack gained by starting late, malformed fields) is
// refused by `hetplan validate` with a line naming the element and the rule.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/helpers.h"
#include "testing/scratch.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;
using test_util::CmdResult;
using test_util::Hetplan;

using test_util::ReadJson;
using test_util::Zoo;

void WriteJson(const fs::path& p, const nlohmann::json& j) { std::ofstream(p) << j.dump(); }

// Two CIMs of different geometry, in the order given (issue 59: the writer
// recorded the first CIM's crossbars for operators on the second).
std::string TwoCims(const fs::path& dir, bool big_first) {
  const std::string big =
      "  - {name: cimB, kind: cim, execution: spatial, cost: cim, crossbar_rows: 256, crossbar_cols: 256, "
      "crossbars: 40, mvm_latency_ns: 50, bandwidth_gbps: 10.24}\n";
  const std::string small =
      "  - {name: cimL, kind: cim, execution: spatial, cost: cim, crossbar_rows: 128, crossbar_cols: 128, "
      "crossbars: 120, mvm_latency_ns: 40, bandwidth_gbps: 10.24}\n";
  const fs::path path = dir / (big_first ? "big_first.yaml" : "small_first.yaml");
  std::ofstream(path) << "name: two-cims\npus:\n  - {name: cpu, kind: cpu, execution: serial, cost: profile, "
                         "threads: 1}\n"
                      << (big_first ? big + small : small + big)
                      << "links:\n  - {between: [cpu, cimB], bandwidth_gbps: 10.24, latency_us: 0}\n"
                         "  - {between: [cpu, cimL], bandwidth_gbps: 10.24, latency_us: 0}\n"
                         "  - {between: [cimB, cimL], bandwidth_gbps: 10.24, latency_us: 0}\n";
  return path.string();
}

class Tamper : public ::testing::Test {
 protected:
  // The schedule files, written once by the planning methods.
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("hetplan_tamper_" + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    files_ = new std::map<std::string, fs::path>();
    printed_ = new std::map<std::string, std::string>();
    const std::string profile = " --warmup 1 --runs 2 --cache-dir " + (*dir_ / "cache").string();
    const std::map<std::string, std::string> commands = {
        {"latency", "partition " + Zoo("resnet18") + " --platform klein-arm" + profile},
        {"energy", "partition " + Zoo("resnet18") + " --platform soc-example --objective energy" + profile},
        {"throughput", "partition " + Zoo("resnet18") + " --platform klein-arm --set cim.crossbars=400 "
                       "--objective throughput" + profile},
        {"shared_adcs", "partition " + Zoo("resnet18") + " --platform puma --set cim.crossbars=256 "
                        "--set cim.shared_adcs=16" + profile},
        {"reprogram", "partition " + Zoo("vgg8") + " --platform puma --set cim.crossbars=1200 --solver exact "
                      "--time-limit 5 --set cim.write_ns_per_row=100 --set cim.write_energy_pj_per_row=10 "
                      "--set cim.endurance_writes=1e8 --set cim.lifetime_inferences=1e6 --set cim.reprogram=true" +
                      profile},
        {"two_requests", "map " + Zoo("resnet18") + " --platform soc-example --mode concurrent" + profile},
        {"fitted", "partition " + Zoo("resnet18") + " --platform klein-arm --boundary-cost fitted" + profile},
        {"big_first", "partition " + Zoo("resnet18") + " --platform " + TwoCims(*dir_, true) + profile},
        {"small_first", "partition " + Zoo("resnet18") + " --platform " + TwoCims(*dir_, false) + profile},
    };
    for (const auto& [name, command] : commands) {
      const fs::path out = *dir_ / (name + ".json");
      CmdResult r = Hetplan(command + " --out " + out.string());
      if (r.code != 0) {
        error_ = new std::string(name + ": " + r.out);
        return;
      }
      (*files_)[name] = out;
      (*printed_)[name] = r.out;
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete files_;
    delete printed_;
  }
  void SetUp() override { ASSERT_EQ(error_, nullptr) << *error_; }

  static nlohmann::json File(const std::string& name) { return ReadJson(files_->at(name)); }

  // `hetplan validate` on `s` written to a file: its exit code and output.
  static CmdResult Validate(const nlohmann::json& s) {
    static int n = 0;
    const fs::path p = *dir_ / ("edited_" + std::to_string(n++) + ".json");
    WriteJson(p, s);
    return Hetplan("validate " + p.string());
  }

  static inline fs::path* dir_ = nullptr;
  static inline std::map<std::string, fs::path>* files_ = nullptr;
  static inline std::map<std::string, std::string>* printed_ = nullptr;  // what each command printed
  static inline std::string* error_ = nullptr;
};

// The index of the first operator on `device` (-1 when none).
int FirstOn(const nlohmann::json& s, const std::string& device) {
  for (size_t i = 0; i < s["operators"].size(); ++i) {
    if (s["operators"][i]["device"] == device) return static_cast<int>(i);
  }
  return -1;
}

// The index of the first edge between two devices (-1 when none).
int FirstCrossEdge(const nlohmann::json& s) {
  std::map<int64_t, std::string> device;
  for (const auto& o : s["operators"]) device[o["id"].get<int64_t>()] = o["device"].get<std::string>();
  for (size_t i = 0; i < s["edges"].size(); ++i) {
    const auto& e = s["edges"][i];
    if (device[e["from"].get<int64_t>()] != device[e["to"].get<int64_t>()]) return static_cast<int>(i);
  }
  return -1;
}

TEST_F(Tamper, EveryUntamperedFileIsAccepted) {
  for (const auto& [name, path] : *files_) {
    CmdResult r = Hetplan("validate " + path.string());
    EXPECT_EQ(r.code, 0) << name << ": " << r.out;
  }
}

// Both orders of two CIMs of different geometry plan and validate, and the
// file's crossbars on each CIM add up to what partition printed for it.
TEST_F(Tamper, TwoCimsOfDifferentGeometryRecordEachOperatorsOwnCrossbars) {
  for (const char* name : {"big_first", "small_first"}) {
    const auto s = File(name);
    std::map<std::string, long long> used;
    for (const auto& o : s["operators"]) {
      if (o["device"] != "cpu") used[o["device"].get<std::string>()] += o["crossbars"].get<long long>();
    }
    for (const auto& [cim, capacity] : std::map<std::string, long long>{{"cimB", 40}, {"cimL", 120}}) {
      EXPECT_LE(used[cim], capacity) << name;
      const std::string line = "crossbars " + std::to_string(used[cim]) + " / " + std::to_string(capacity);
      EXPECT_NE(printed_->at(name).find(line), std::string::npos) << name << " " << line << "\n" << printed_->at(name);
    }
  }
}

struct Edit {
  std::string file, what;
  std::function<void(nlohmann::json&)> edit;
  std::string expect;  // in the refusal
};

TEST_F(Tamper, EachEditIsRefusedNamingTheElementAndTheRule) {
  const std::vector<Edit> edits = {
      // 1. Quantities the file can recompute.
      {"latency", "a transfer set to 0", [](nlohmann::json& s) { s["edges"][FirstCrossEdge(s)]["transfer_us"] = 0.0; },
       "transfer_us = 0 but"},
      {"energy", "a transfer halved",
       [](nlohmann::json& s) {
         auto& e = s["edges"][FirstCrossEdge(s)];
         e["transfer_us"] = e["transfer_us"].get<double>() / 2;
       },
       "over the link"},
      {"two_requests", "a transfer where a concurrent mapping's costs hold the copies",
       [](nlohmann::json& s) { s["edges"][FirstCrossEdge(s)]["transfer_us"] = 5.0; }, "in a concurrent mapping"},
      {"latency", "crossbars 0 on a CIM operator", [](nlohmann::json& s) { s["operators"][FirstOn(s, "cim")]["crossbars"] = 0; },
       "crossbars = 0 but its"},
      {"small_first", "a 128x128 CIM operator given the 256x256 count",
       [](nlohmann::json& s) {
         auto& o = s["operators"][FirstOn(s, "cimL")];
         o["crossbars"] = std::max<int64_t>(1, o["crossbars"].get<int64_t>() / 4);
       },
       "crossbars of 128×128 on 'cimL'"},
      {"shared_adcs", "an operator's ADCs set to 0",
       [](nlohmann::json& s) { s["operators"][FirstOn(s, "cim")]["adcs"]["cim"] = 0; }, "holds 0 ADCs of 'cim'"},
      {"reprogram", "a write's rows and time set to 0",
       [](nlohmann::json& s) {
         for (auto& o : s["operators"]) {
           if (o.contains("write")) {
             const double us = o["write"]["write_us"].get<double>();
             o["write"]["rows"] = 0;
             o["write"]["write_us"] = 0.0;
             o["write"]["finish_us"] = o["start_us"];
             o["finish_us"] = o["finish_us"].get<double>() - us;
             break;
           }
         }
       },
       "its write says rows 0"},
      {"throughput", "a copied operator's mvm_us inflated",
       [](nlohmann::json& s) {
         for (auto& o : s["operators"]) {
           if (o.contains("mvm_us") && o["mvm_us"].contains("cim")) {
             o["mvm_us"]["cim"] = 2 * o["mvm_us"]["cim"].get<double>();
             break;
           }
         }
       },
       "input vectors at 50 ns"},
      {"latency", "a CIM cost below its MVMs",
       [](nlohmann::json& s) {
         auto& o = s["operators"][FirstOn(s, "cim")];
         o["cost_us"]["cim"] = 0.001;
         o["finish_us"] = o["start_us"].get<double>() + 0.001;
       },
       "less than its"},
      {"latency", "a Relu placed on the CIM",
       [](nlohmann::json& s) {
         auto& o = s["operators"][FirstOn(s, "cim")];
         o["type"] = "Relu";
         o["weight"]["product"] = "Relu";
       },
       "whose supported_ops do not list it"},
      {"latency", "a CIM operator's weight deleted",
       [](nlohmann::json& s) { s["operators"][FirstOn(s, "cim")].erase("weight"); }, "'weight' (rows, cols"},
      {"latency", "a version-3 termination spelled as version 2 did (a status's name)",
       [](nlohmann::json& s) { s["solver"]["termination"] = "optimal"; },
       "solver.termination \"optimal\" is not one of"},
      // 2. Negative numbers.
      {"latency", "negative crossbars", [](nlohmann::json& s) { s["operators"][FirstOn(s, "cim")]["crossbars"] = -60; },
       "crossbars -60 is negative"},
      {"latency", "a negative cost elsewhere",
       [](nlohmann::json& s) { s["operators"][FirstOn(s, "cim")]["cost_us"]["cpu"] = -5.0; }, "cost_us on 'cpu' is negative"},
      {"reprogram", "negative write rows",
       [](nlohmann::json& s) {
         for (auto& o : s["operators"]) {
           if (o.contains("write")) {
             o["write"]["rows_written"] = -o["write"]["rows_written"].get<double>();
             break;
           }
         }
       },
       "must all be ≥ 0"},
      // 3. The same crossbars named twice.
      {"reprogram", "one range listed twice",
       [](nlohmann::json& s) {
         auto& o = s["operators"][FirstOn(s, "cim")];
         o["crossbar_ids"].push_back(o["crossbar_ids"][0]);
       },
       "twice in its crossbar_ids"},
      // 4. devices[] against the platform block.
      {"latency", "a capacity raised", [](nlohmann::json& s) { s["devices"][1]["capacity_crossbars"] = 1000; },
       "capacity_crossbars 1000 but the platform's PU has 100"},
      {"latency", "a serial CPU declared spatial",
       [](nlohmann::json& s) {
         s["devices"][0]["execution"] = "spatial";
         s["devices"][0]["capacity_crossbars"] = 1;
       },
       "says execution 'spatial' but the platform's PU says 'serial'"},
      {"latency", "a device the platform lacks",
       [](nlohmann::json& s) {
         auto d = s["devices"][1];
         d["name"] = "cim2";
         s["devices"].push_back(d);
       },
       "device 'cim2' is not a PU of the file's platform"},
      {"energy", "a device's power lowered",
       [](nlohmann::json& s) { s["devices"][1]["power_w"] = s["devices"][1]["power_w"].get<double>() / 2; },
       "says power_w"},
      {"shared_adcs", "the ADC pool deleted", [](nlohmann::json& s) { s["devices"][1].erase("shared_adcs"); },
       "says shared_adcs none but the platform's PU says 16"},
      {"reprogram", "write_ns_per_row lowered",
       [](nlohmann::json& s) { s["devices"][1]["reprogram"]["write_ns_per_row"] = 1.0; },
       "says write_ns_per_row 1 but the platform's PU says 100"},
      // The CPU's boundary raised by 5 µs and its transfers left as they were:
      // they now lack part of the receiver's boundary. (The fitted boundary
      // itself can be 0 on a loaded machine, when the file omits it.)
      {"fitted", "transfers without the receiver's boundary",
       [](nlohmann::json& s) {
         auto& cpu = s["devices"][0];
         cpu["boundary_us"] = cpu.value("boundary_us", 0.0) + 5.0;
       },
       "with the receiver's boundary"},
      // 5. Missing work.
      {"latency", "an operator deleted",
       [](nlohmann::json& s) {
         const int64_t id = s["operators"].back()["id"].get<int64_t>();
         s["operators"].erase(s["operators"].size() - 1);
         nlohmann::json kept = nlohmann::json::array();
         for (const auto& e : s["edges"]) {
           if (e["from"] != id && e["to"] != id) kept.push_back(e);
         }
         s["edges"] = kept;
       },
       "completeness: the file lists 48 operators but its model block has 49"},
      {"two_requests", "half a request deleted",
       [](nlohmann::json& s) {
         nlohmann::json kept = nlohmann::json::array();
         for (const auto& o : s["operators"]) {
           if (o.value("request", 0) == 1 && o["id"].get<int64_t>() % 2 == 0) continue;
           kept.push_back(o);
         }
         s["operators"] = kept;
       },
       "completeness: request 1 has"},
      // 7. Slack from starting late: everything 10^8 µs later, and one
      // operator 1 µs before its input arrives.
      {"latency", "10^8 µs late, one precedence broken by 1 µs",
       [](nlohmann::json& s) {
         for (auto& o : s["operators"]) {
           o["start_us"] = o["start_us"].get<double>() + 1e8;
           o["finish_us"] = o["finish_us"].get<double>() + 1e8;
         }
         s["makespan_us"] = s["makespan_us"].get<double>() + 1e8;
         auto& e = s["edges"][0];
         for (auto& o : s["operators"]) {
           if (o["id"] == e["to"]) {
             o["start_us"] = o["start_us"].get<double>() - 1;
             o["finish_us"] = o["finish_us"].get<double>() - 1;
           }
         }
       },
       "precedence"},
      // 8. Reported numbers.
      {"latency", "speedup doubled", [](nlohmann::json& s) { s["speedup"] = 2 * s["speedup"].get<double>(); },
       "speedup = "},
      {"latency", "cpu_only_us halved, speedup with it",
       [](nlohmann::json& s) {
         s["baselines"]["cpu_only_us"] = s["baselines"]["cpu_only_us"].get<double>() / 2;
         s["speedup"] = s["speedup"].get<double>() / 2;
       },
       "baselines.cpu_only_us = "},
      {"latency", "pipelined_ii_us lowered",
       [](nlohmann::json& s) { s["pipelined_ii_us"] = s["pipelined_ii_us"].get<double>() / 2; }, "pipelined_ii_us = "},
      {"latency", "inputs_per_s without an II", [](nlohmann::json& s) { s["inputs_per_s"] = 1000.0; },
       "inputs_per_s is given without an initiation_interval_us"},
      // 6. A stream's boundary cost on the receiving serial PU.
      {"throughput", "a boundary on the CPU the II leaves no room for",
       [](nlohmann::json& s) { s["devices"][0]["boundary_us"] = s["initiation_interval_us"].get<double>(); },
       "stream: serial 'cpu' is busy"},
      // 9. Malformed fields.
      {"latency", "edges an object", [](nlohmann::json& s) { s["edges"] = nlohmann::json::object(); },
       "'edges' is not a list"},
      {"throughput", "an II of 1e-300",
       [](nlohmann::json& s) {
         s["initiation_interval_us"] = 1e-300;
         s.erase("inputs_per_s");
       },
       "10^15 initiation intervals"},
  };
  for (const Edit& e : edits) {
    SCOPED_TRACE(e.file + ": " + e.what);
    nlohmann::json s = File(e.file);
    e.edit(s);
    CmdResult r = Validate(s);
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(e.expect), std::string::npos) << r.out;
  }
}

// With the model at hand (--model): the file's SHA-256, operators and edges
// against it; an edge deleted from the file, which the file alone cannot
// show, is refused, and so is another model.
TEST_F(Tamper, AgainstTheModelADeletedEdgeIsRefused) {
  for (const char* name : {"latency", "two_requests"}) {
    CmdResult ok = Hetplan("validate " + files_->at(name).string() + " --model " + Zoo("resnet18"));
    EXPECT_EQ(ok.code, 0) << name << ": " << ok.out;
  }
  nlohmann::json s = File("latency");
  const auto e = s["edges"][0];
  s["edges"].erase(0);
  static int n = 0;
  const fs::path p = *dir_ / ("model_edit_" + std::to_string(n++) + ".json");
  WriteJson(p, s);
  EXPECT_EQ(Hetplan("validate " + p.string()).code, 0) << "the file alone cannot tell";
  CmdResult r = Hetplan("validate " + p.string() + " --model " + Zoo("resnet18"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find(fmt::format("model: edge {} -> {}", e["from"].get<int>(), e["to"].get<int>())),
            std::string::npos)
      << r.out;
  CmdResult other = Hetplan("validate " + files_->at("latency").string() + " --model " + Zoo("resnet50"));
  EXPECT_NE(other.code, 0);
  EXPECT_NE(other.out.find("model: the file plans a model with SHA-256"), std::string::npos) << other.out;
}

// A legal re-timing (everything later by the same random amount, the
// makespan with it) is accepted; an illegal one (an operator started before
// its input arrives, by a random amount) is refused.
TEST_F(Tamper, RandomLegalRetimingsAreAcceptedAndIllegalOnesRefused) {
  std::mt19937 rng(59);
  std::uniform_real_distribution<double> delay(0.5, 5000.0);
  const auto base = File("latency");
  for (int trial = 0; trial < 5; ++trial) {
    nlohmann::json s = base;
    const double d = delay(rng);
    for (auto& o : s["operators"]) {
      o["start_us"] = o["start_us"].get<double>() + d;
      o["finish_us"] = o["finish_us"].get<double>() + d;
    }
    s["makespan_us"] = s["makespan_us"].get<double>() + d;
    s["speedup"] = s["baselines"]["cpu_only_us"].get<double>() / s["makespan_us"].get<double>();
    CmdResult ok = Validate(s);
    EXPECT_EQ(ok.code, 0) << "delay " << d << ": " << ok.out;
    // Now one operator with an input starts earlier than that input arrives.
    const auto& e = s["edges"][static_cast<size_t>(rng() % s["edges"].size())];
    const double early = 1 + delay(rng) / 100;
    for (auto& o : s["operators"]) {
      if (o["id"] == e["to"]) {
        o["start_us"] = o["start_us"].get<double>() - early;
        o["finish_us"] = o["finish_us"].get<double>() - early;
      }
    }
    CmdResult bad = Validate(s);
    EXPECT_NE(bad.code, 0) << "moved " << early << " µs early";
  }
}

}  // namespace
}  // namespace hetplan
