// libFuzzer target: the platform YAML parser. ParsePlatformYaml promises it
// never throws and never crashes; a platform it accepts must pass
// ValidatePlatform and survive a JSON dump.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hetplan/platform/platform.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = hetplan::ParsePlatformYaml(text, "fuzz.yaml");
  if (!p.ok()) {
    if (p.status().message().rfind("fuzz.yaml", 0) != 0) std::abort();
    return 0;
  }
  if (!hetplan::ValidatePlatform(*p).ok()) std::abort();
  (void)hetplan::PlatformToJson(*p).dump();
  return 0;
}
