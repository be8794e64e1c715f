// What the platform_*.cc files share: the problem type the checks return, the
// key table and the setters that turn scalar text into PU and link fields
// (the YAML reader and ApplyOverride both go through them), and the
// validation the reader runs with line numbers. Internal to the library.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hetplan/platform/platform.h"
#include "hetplan/util/status.h"

namespace hetplan::platform_internal {

// A problem with a value and how to fix it; the caller adds where.
struct Problem {
  std::string what;
  std::string fix;
};
using Check = std::optional<Problem>;

std::string Join(const std::vector<std::string>& items, std::string_view sep = ", ");
// `s`, cut to 40 characters for an error message.
std::string Shorten(std::string_view s);

template <size_t N>
bool Contains(const std::array<std::string_view, N>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}
template <size_t N>
std::string JoinKeys(const std::array<std::string_view, N>& keys) {
  std::vector<std::string> v(keys.begin(), keys.end());
  return Join(v);
}

inline constexpr int kMaxThreads = 4096;

// ---------------------------------------------------------------------------
// Keys (platform_keys.cc).

enum class Scope { kAll, kProfile, kTable, kCim, kRoofline, kDevice };  // kDevice: kinds cpu, gpu, npu
enum class KeyType { kString, kInt, kNumber, kBool, kChoice, kList, kIntList, kNumberMap, kStringMap };

struct KeySpec {
  std::string_view key;
  Scope scope;
  KeyType type;
  bool overridable;
};

// The PU key called `key`, nullptr if none.
const KeySpec* FindPuKey(std::string_view key);
// Whether a key of `scope` applies to `pu` (its kind and cost source).
bool Applies(Scope scope, const ProcessingUnit& pu);
// "PUs of kind: cim", ...: the PUs a key of `scope` applies to.
std::string ScopeText(Scope scope);
// The keys that apply to `pu`, comma-separated; only the overridable ones
// when `for_override`.
std::string ValidPuKeys(const ProcessingUnit& pu, bool for_override);

inline constexpr std::array<std::string_view, 4> kLinkKeys = {"between", "bandwidth_gbps", "latency_us",
                                                              "element_bytes"};

// The names each enum is written with, in YAML, overrides and JSON.
inline constexpr std::array<std::pair<std::string_view, PuKind>, 4> kKinds = {{
    {"cpu", PuKind::kCpu}, {"cim", PuKind::kCim}, {"gpu", PuKind::kGpu}, {"npu", PuKind::kNpu}}};
inline constexpr std::array<std::pair<std::string_view, Execution>, 2> kExecutions = {{
    {"serial", Execution::kSerial}, {"spatial", Execution::kSpatial}}};
inline constexpr std::array<std::pair<std::string_view, CostSource>, 4> kCostSources = {{
    {"profile", CostSource::kProfile},
    {"cim", CostSource::kCim},
    {"table", CostSource::kTable},
    {"roofline", CostSource::kRoofline}}};
inline constexpr std::array<std::pair<std::string_view, GroupedConvMapping>, 2> kMappings = {{
    {"block_diagonal", GroupedConvMapping::kBlockDiagonal},
    {"per_group", GroupedConvMapping::kPerGroup}}};
inline constexpr std::array<std::pair<std::string_view, SignedWeights>, 2> kSignedWeights = {{
    {"offset", SignedWeights::kOffset}, {"differential", SignedWeights::kDifferential}}};
inline constexpr std::array<std::pair<std::string_view, SliceMapping>, 2> kSliceMappings = {{
    {"columns", SliceMapping::kColumns}, {"crossbars", SliceMapping::kCrossbars}}};

template <typename E, size_t N>
Check ParseChoice(std::string_view text, const std::array<std::pair<std::string_view, E>, N>& choices,
                  E* out) {
  std::vector<std::string> names;
  for (const auto& [name, value] : choices) {
    if (name == text) {
      *out = value;
      return std::nullopt;
    }
    names.emplace_back(name);
  }
  return Problem{fmt::format("unknown value '{}'", Shorten(text)),
                 fmt::format("use one of: {}", Join(names))};
}

// Scalars. Range checks live in ValidateImpl so that programmatic platforms
// get them too; the setters only check the form.
struct Scalar {
  std::string_view text;
  bool quoted = false;  // a quoted YAML scalar is a string, never a number
};

Check ParseStringText(const Scalar& s, std::string* out);

// Sets one scalar-valued PU key (everything but the maps; supported_ops and
// cores take a comma list here). `key` must be a known PU key.
Check SetPuScalar(ProcessingUnit& pu, std::string_view key, const Scalar& v);
// Sets one entry of peak_gflops, efficiency or provider_options.
Check SetPuMapEntry(ProcessingUnit& pu, std::string_view key, std::string_view entry, const Scalar& v);
// Appends one item of `cores` (a YAML list item).
Check AddPuCore(ProcessingUnit& pu, const Scalar& v);
Check SetLinkScalar(Link& link, std::string_view key, const Scalar& v);

// ---------------------------------------------------------------------------
// Validation (platform_validate.cc), shared by the parser (which maps key
// paths to lines) and ValidatePlatform.

using Locator = std::function<std::string(const std::string& key_path)>;

// Letters, digits, '_' and '-' only.
bool ValidPuName(std::string_view name);
// Every rule of docs/platform-format.md; `where` names the place of a key path.
Status ValidateImpl(const Platform& p, const Locator& where);

}  // namespace hetplan::platform_internal
