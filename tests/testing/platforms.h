// Platforms the tests write to a scratch folder.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace hetplan::test_util {

// A roofline CPU beside the CIM paper's crossbars (256x256, 100 of them,
// T_mvm 50 ns): every cost analytical, so nothing is profiled. Written to
// `dir`; returns its path.
inline std::string WriteRooflineCimPlatform(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "cpu-roofline-cim.yaml";
  std::ofstream(path) << R"(name: cpu-roofline-cim
description: "test: roofline CPU + the paper's CIM"
pus:
  - name: cpu
    kind: cpu
    execution: serial
    cost: roofline
    peak_gflops: {float32: 20, int8: 40}
    memory_bandwidth_gbps: 10
    dispatch_us: 2
    efficiency: {default: 0.5}
  - name: cim
    kind: cim
    execution: spatial
    cost: cim
    crossbar_rows: 256
    crossbar_cols: 256
    crossbars: 100
    mvm_latency_ns: 50
    bandwidth_gbps: 10.24
    supported_ops: [Conv, Gemm, MatMul]
links:
  - between: [cpu, cim]
    bandwidth_gbps: 10.24
    latency_us: 0
)";
  return path.string();
}

}  // namespace hetplan::test_util
