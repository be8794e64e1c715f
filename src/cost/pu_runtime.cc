// A PU as an ONNX Runtime configuration (include/hetplan/cost/profiler.h):
// what the profilers and the executor check before they run it.
#include "hetplan/cost/profiler.h"

#include <fmt/format.h>

#include "ort/pinning.h"
#include "ort/session.h"
#include "ov/openvino.h"

namespace hetplan {

ProfileOptions ForPu(ProfileOptions o, const ProcessingUnit& pu) {
  o.threads = pu.threads;
  o.provider = CanonicalProvider(pu.provider);
  o.provider_options = pu.provider_options;
  o.cores = pu.cores;
  o.runtime = pu.runtime;
  o.device = pu.OpenVino() ? pu.OpenVinoDevice() : std::string();
  return o;
}

Status CheckPuRuntime(const ProcessingUnit& pu, const std::string& where) {
  if (pu.OpenVino()) return ov_runtime::CheckDevice(pu.OpenVinoDevice(), where + ".device");
  HETPLAN_RETURN_IF_ERROR(ort::CheckProvider(pu.provider, where + ".provider"));
  return ort::CheckCores(pu.cores, where + ".cores");
}

Status CheckPuRuntimes(const Platform& platform, const std::vector<std::string>& pus) {
  auto where = [&](int i) { return fmt::format("{}: pus[{}] ({})", platform.source, i, platform.pus[static_cast<size_t>(i)].name); };
  for (const std::string& name : pus) {
    const int i = platform.FindPu(name);
    if (i < 0) continue;
    const ProcessingUnit& pu = platform.pus[static_cast<size_t>(i)];
    HETPLAN_RETURN_IF_ERROR(pu.OpenVino() ? ov_runtime::CheckDevice(pu.OpenVinoDevice(), where(i) + ".device")
                                          : ort::CheckProvider(pu.provider, where(i) + ".provider"));
  }
  for (const std::string& name : pus) {
    const int i = platform.FindPu(name);
    if (i >= 0) HETPLAN_RETURN_IF_ERROR(ort::CheckCores(platform.pus[static_cast<size_t>(i)].cores, where(i) + ".cores"));
  }
  return Status::Ok();
}

}  // namespace hetplan
