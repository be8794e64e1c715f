// ApplyOverride: one `--set` assignment on a copy of the platform, through
// the same key table and setters as the YAML reader, re-validated before it
// replaces the original.
#include <algorithm>

#include "hetplan/platform/platform.h"
#include "platform/platform_internal.h"

namespace hetplan {

using platform_internal::Check;
using platform_internal::Join;
using platform_internal::Shorten;
using platform_internal::Contains;
using platform_internal::KeyType;
using platform_internal::KeySpec;
using platform_internal::FindPuKey;
using platform_internal::Applies;
using platform_internal::ValidPuKeys;
using platform_internal::kLinkKeys;
using platform_internal::Scalar;
using platform_internal::SetPuScalar;
using platform_internal::SetPuMapEntry;
using platform_internal::SetLinkScalar;

Status ApplyOverride(Platform& p, std::string_view assignment) {
  auto fail = [&](std::string_view what, std::string_view fix) {
    return Error(ErrorCode::kInvalidArgument, "override '{}': {}; {}", Shorten(assignment), what, fix);
  };
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  std::vector<std::string> pu_names;
  for (const ProcessingUnit& pu : p.pus) pu_names.push_back(pu.name);
  constexpr std::string_view kForm = "write <pu>.<key>=<value> (e.g. cim.crossbars=200) or "
                                     "link.<a>-<b>.<key>=<value> (e.g. link.cpu-cim.bandwidth_gbps=5)";
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) return fail("expected KEY=VALUE", kForm);
  std::string_view key = trim(assignment.substr(0, eq));
  std::string_view value = trim(assignment.substr(eq + 1));
  if (key.empty()) return fail("no key before '='", kForm);
  if (value.empty()) return fail(fmt::format("no value for '{}'", key), "write a value after '='");
  Scalar scalar{value, false};
  Platform copy = p;

  if (key.substr(0, 5) == "link.") {
    std::string_view rest = key.substr(5);
    size_t dot = rest.rfind('.');
    std::vector<std::string> link_names;
    for (const Link& l : p.links) link_names.push_back(l.a + "-" + l.b);
    if (dot == std::string_view::npos) {
      return fail("a link override needs a key", "write link.<a>-<b>.<key>=<value>, e.g. link.cpu-cim.latency_us=1");
    }
    std::string_view pair = rest.substr(0, dot);
    std::string_view field = rest.substr(dot + 1);
    // PU names may contain '-': try every split.
    std::vector<int> matches;
    for (size_t i = 0; i < pair.size(); ++i) {
      if (pair[i] != '-') continue;
      const Link* l = p.FindLink(pair.substr(0, i), pair.substr(i + 1));
      if (l != nullptr) matches.push_back(static_cast<int>(l - p.links.data()));
    }
    std::sort(matches.begin(), matches.end());
    matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
    if (matches.empty()) {
      return fail(fmt::format("no link '{}'", Shorten(pair)),
                  link_names.empty() ? std::string("the platform has no links")
                                     : fmt::format("links: {}", Join(link_names)));
    }
    if (matches.size() > 1) {
      return fail(fmt::format("'{}' names more than one link", pair), "rename PUs so their names hold no '-'");
    }
    if (!Contains(kLinkKeys, field) || field == "between") {
      return fail(fmt::format("unknown link key '{}'", Shorten(field)),
                  "valid keys for a link: bandwidth_gbps, latency_us, element_bytes");
    }
    if (Check c = SetLinkScalar(copy.links[matches[0]], field, scalar)) {
      return fail(fmt::format("{}: {}", key, c->what), c->fix);
    }
  } else {
    size_t dot = key.find('.');
    if (dot == std::string_view::npos) return fail(fmt::format("'{}' names no PU key", key), kForm);
    std::string_view pu_name = key.substr(0, dot);
    std::string_view field = key.substr(dot + 1);
    int index = p.FindPu(pu_name);
    if (index < 0) {
      return fail(fmt::format("no PU named '{}'", Shorten(pu_name)),
                  fmt::format("PUs: {}; links: link.<a>-<b>.<key>", Join(pu_names)));
    }
    ProcessingUnit& pu = copy.pus[index];
    std::string_view sub;
    size_t dot2 = field.find('.');
    if (dot2 != std::string_view::npos) {
      sub = field.substr(dot2 + 1);
      field = field.substr(0, dot2);
    }
    const KeySpec* spec = FindPuKey(field);
    std::string valid = fmt::format("valid keys for {} (kind: {}, cost: {}): {}", pu.name, ToString(pu.kind),
                                    ToString(pu.cost_source), ValidPuKeys(pu, true));
    if (spec == nullptr || !Applies(spec->scope, pu)) {
      return fail(fmt::format("unknown key '{}' for PU '{}'", Shorten(field), pu.name), valid);
    }
    if (!spec->overridable) {
      return fail(fmt::format("'{}' cannot be overridden", field),
                  fmt::format("write another platform file instead; {}", valid));
    }
    if (spec->type == KeyType::kNumberMap || spec->type == KeyType::kStringMap) {
      if (sub.empty()) {
        return fail(fmt::format("'{}' is a map", field),
                    fmt::format("set one entry: {}.{}.<{}>=<value>", pu.name, field,
                                field == "peak_gflops"      ? "dtype"
                                : field == "provider_options" ? "option"
                                                              : "op type"));
      }
      if (Check c = SetPuMapEntry(pu, field, sub, scalar)) return fail(fmt::format("{}: {}", key, c->what), c->fix);
    } else {
      if (!sub.empty()) return fail(fmt::format("'{}' has no entries", field), valid);
      if (Check c = SetPuScalar(pu, field, scalar)) return fail(fmt::format("{}: {}", key, c->what), c->fix);
    }
  }
  if (Status s = ValidatePlatform(copy); !s.ok()) {
    return Error(ErrorCode::kInvalidArgument, "override '{}': {}", Shorten(assignment), s.message());
  }
  copy.overrides.emplace_back(assignment);
  p = std::move(copy);
  return Status::Ok();
}

}  // namespace hetplan
