// Platform's own lookups and the string helpers the platform_*.cc files
// share. Reading YAML: platform_yaml.cc; the key table and setters:
// platform_keys.cc; validation: platform_validate.cc; overrides:
// platform_overrides.cc; JSON and enum names: platform_json.cc.
#include "hetplan/platform/platform.h"

#include <cctype>

#include "platform/platform_internal.h"

namespace hetplan {
namespace platform_internal {

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

std::string Shorten(std::string_view s) {
  if (s.size() <= 40) return std::string(s);
  return std::string(s.substr(0, 37)) + "...";
}

}  // namespace platform_internal

Result<Platform> LoadPlatform(const std::string& name_or_path, const std::vector<std::string>& overrides) {
  HETPLAN_ASSIGN_OR_RETURN(Platform p, LoadPlatform(name_or_path));
  for (const std::string& o : overrides) HETPLAN_RETURN_IF_ERROR(ApplyOverride(p, o));
  return p;
}

int Platform::FindPu(std::string_view pu_name) const {
  for (size_t i = 0; i < pus.size(); ++i) {
    if (pus[i].name == pu_name) return static_cast<int>(i);
  }
  return -1;
}

std::string CanonicalProvider(std::string_view name) {
  std::string l;
  for (char c : name) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  constexpr std::string_view kSuffix = "executionprovider";
  if (l.size() > kSuffix.size() && l.ends_with(kSuffix)) l.resize(l.size() - kSuffix.size());
  for (std::string_view known : kKnownProviders) {
    if (l == known) return l;
  }
  return "";
}

const Link* Platform::FindLink(std::string_view a, std::string_view b) const {
  for (const Link& l : links) {
    if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) return &l;
  }
  return nullptr;
}

}  // namespace hetplan
