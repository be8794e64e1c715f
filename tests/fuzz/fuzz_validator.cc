// libFuzzer target: the independent schedule validator on arbitrary JSON.
// Structural problems must come back as violations, never as a crash or an
// exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hetplan/validate/validator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  hetplan::ValidationReport r = hetplan::ValidateScheduleJson(j);
  for (const auto& v : r.violations) {
    if (v.empty()) __builtin_trap();
  }
  return 0;
}
