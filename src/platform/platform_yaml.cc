// Reading platform YAML (ParsePlatformYaml) and finding the file or preset
// (LoadPlatform). Errors carry the line of the key they are about.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "hetplan/platform/platform.h"
#include "hetplan/util/io.h"
#include "hetplan/util/utf8.h"
#include "platform/platform_internal.h"

#ifndef HETPLAN_SOURCE_DIR
#define HETPLAN_SOURCE_DIR ""
#endif

namespace hetplan {

using platform_internal::Problem;
using platform_internal::Check;
using platform_internal::Join;
using platform_internal::Shorten;
using platform_internal::Contains;
using platform_internal::JoinKeys;
using platform_internal::KeyType;
using platform_internal::KeySpec;
using platform_internal::FindPuKey;
using platform_internal::Applies;
using platform_internal::ScopeText;
using platform_internal::ValidPuKeys;
using platform_internal::kLinkKeys;
using platform_internal::Scalar;
using platform_internal::ParseStringText;
using platform_internal::SetPuScalar;
using platform_internal::SetPuMapEntry;
using platform_internal::SetLinkScalar;
using platform_internal::ValidPuName;
using platform_internal::ValidateImpl;

namespace {

// Nesting deeper than this is refused before yaml-cpp sees the text (its
// parser recurses once per level). A platform file needs 4 levels.
constexpr int kMaxNesting = 32;
constexpr int kMaxIndentColumns = 512;

constexpr std::array<std::string_view, 4> kTopKeys = {"name", "description", "pus", "links"};

// Defaults that depend on the kind; documented in docs/platform-format.md.
void ApplyKindDefaults(ProcessingUnit& pu) {
  pu.execution = pu.kind == PuKind::kCim ? Execution::kSpatial : Execution::kSerial;
  switch (pu.kind) {
    case PuKind::kCpu: pu.cost_source = CostSource::kProfile; break;
    case PuKind::kCim: pu.cost_source = CostSource::kCim; break;
    case PuKind::kGpu:
    case PuKind::kNpu: pu.cost_source = CostSource::kRoofline; break;
  }
}

// Refuses absurd nesting before yaml-cpp, whose parser recurses per level:
// flow brackets, chained block-sequence dashes ("- - - x") and indentation.
Check ScanNesting(std::string_view text, int* bad_line) {
  int flow = 0;
  int line = 1;
  char quote = 0;
  bool line_start = true;
  int indent = 0;
  int dashes = 0;
  char last = '\n';  // last non-blank character outside quotes on this line
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      indent = 0;
      dashes = 0;
      last = '\n';
      continue;
    }
    if (quote != 0) {
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
        last = c;
      }
      continue;
    }
    if (line_start) {
      if (c == ' ') {
        if (++indent > kMaxIndentColumns) {
          *bad_line = line;
          return Problem{fmt::format("indented more than {} columns", kMaxIndentColumns),
                         "a platform file needs a few levels of nesting; fix the indentation"};
        }
        continue;
      }
      if (c == '-' && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
        last = '-';
        if (++dashes > kMaxNesting) {
          *bad_line = line;
          return Problem{fmt::format("sequences nested more than {} levels deep", kMaxNesting),
                         "a platform file needs a few levels of nesting"};
        }
        continue;
      }
      line_start = false;
    }
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '"' || c == '\'') {
      // A quote opens a string only at the start of a scalar.
      if (last == '\n' || last == '-' || last == ':' || last == '[' || last == '{' || last == ',' ||
          last == '?') {
        quote = c;
      }
      last = c;
      continue;
    }
    last = c;
    if (c == '[' || c == '{') {
      if (++flow > kMaxNesting) {
        *bad_line = line;
        return Problem{fmt::format("brackets nested more than {} levels deep", kMaxNesting),
                       "a platform file needs a few levels of nesting"};
      }
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    }
  }
  return std::nullopt;
}

// Receives the events of the document-counting pass.
class IgnoreEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::string NodeKind(const YAML::Node& n) {
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "empty";
  return "a scalar";
}

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  void Note(const std::string& path, const YAML::Node& n) {
    if (n.Mark().line >= 0) lines_.emplace(path, n.Mark().line + 1);
  }

  // "<file>:<line>" for a key path, from the nearest recorded ancestor.
  std::string Where(const std::string& key_path) const {
    std::string path = key_path;
    while (true) {
      auto it = lines_.find(path);
      if (it != lines_.end()) return fmt::format("{}:{}", file_, it->second);
      size_t cut = path.find_last_of(".[");
      if (cut == std::string::npos || cut == 0) break;
      path.resize(cut);
    }
    return fmt::format("{}:1", file_);
  }

  Status Fail(const std::string& path, const Problem& p) const {
    if (path.empty()) {
      return Error(ErrorCode::kInvalidArgument, "{}: {}; {}", Where(path), p.what, p.fix);
    }
    return Error(ErrorCode::kInvalidArgument, "{}: {}: {}; {}", Where(path), path, p.what, p.fix);
  }

  // The entries of a map, keys checked (scalar, unique) and their lines noted.
  Result<std::vector<std::pair<std::string, YAML::Node>>> Entries(const YAML::Node& map,
                                                                   const std::string& path) {
    std::vector<std::pair<std::string, YAML::Node>> out;
    for (const auto& kv : map) {
      const YAML::Node k = kv.first;
      if (!k.IsScalar()) {
        Note(path + ".?", k);
        return Fail(path + ".?", {fmt::format("a key is {}", NodeKind(k)), "keys must be plain names"});
      }
      std::string key = k.Scalar();
      std::string child = path.empty() ? key : path + "." + key;
      Note(child, k);
      for (const auto& [seen, unused] : out) {
        if (seen == key) {
          return Error(ErrorCode::kInvalidArgument, "{}:{}: {}: duplicate key '{}'; keep one of them", file_,
                       k.Mark().line + 1, child, Shorten(key));
        }
      }
      out.emplace_back(key, kv.second);
    }
    return out;
  }

  // A scalar value, or a problem if the node is a map, list or empty.
  Check AsScalar(const YAML::Node& n, std::string_view expected, Scalar* out) const {
    if (n.IsNull()) return Problem{"has no value", fmt::format("write {}", expected)};
    if (!n.IsScalar()) return Problem{fmt::format("must be {}, got {}", expected, NodeKind(n)),
                                      fmt::format("write {}", expected)};
    out->text = n.Scalar();
    out->quoted = n.Tag() == "!";
    return std::nullopt;
  }

  Status ReadString(const YAML::Node& n, const std::string& path, std::string* out) const {
    Scalar s;
    if (Check c = AsScalar(n, "a string", &s)) return Fail(path, *c);
    if (Check c = ParseStringText(s, out)) return Fail(path, *c);
    return Status::Ok();
  }

  Status ReadPu(const YAML::Node& n, const std::string& path, ProcessingUnit* pu) {
    if (!n.IsMap()) {
      return Fail(path, {fmt::format("must be a map, got {}", NodeKind(n)),
                         "write each PU as a map with at least name: and kind:"});
    }
    HETPLAN_ASSIGN_OR_RETURN(auto entries, Entries(n, path));
    auto find = [&](std::string_view key) -> const YAML::Node* {
      for (const auto& [k, v] : entries) {
        if (k == key) return &v;
      }
      return nullptr;
    };
    for (std::string_view required : {"name", "kind"}) {
      if (find(required) == nullptr) {
        return Fail(path, {fmt::format("missing required key '{}'", required),
                           required == "name" ? "add name: <PU name>" : "add kind: cpu, cim, gpu or npu"});
      }
    }
    HETPLAN_RETURN_IF_ERROR(ReadString(*find("name"), path + ".name", &pu->name));
    // kind first: it sets the defaults of execution and cost.
    for (std::string_view key : {"kind", "execution", "cost"}) {
      const YAML::Node* v = find(key);
      if (v == nullptr) continue;
      std::string child = fmt::format("{}.{}", path, key);
      Scalar s;
      if (Check c = AsScalar(*v, "a name", &s)) return Fail(child, *c);
      if (Check c = SetPuScalar(*pu, key, s)) return Fail(child, *c);
      if (key == "kind") ApplyKindDefaults(*pu);
    }
    for (const auto& [key, v] : entries) {
      if (key == "name" || key == "kind" || key == "execution" || key == "cost") continue;
      std::string child = fmt::format("{}.{}", path, key);
      const KeySpec* spec = FindPuKey(key);
      if (spec == nullptr) {
        return Fail(child, {fmt::format("unknown key '{}'", Shorten(key)),
                            fmt::format("valid keys for this PU: {}", ValidPuKeys(*pu, false))});
      }
      if (!Applies(spec->scope, *pu)) {
        return Fail(child, {fmt::format("'{}' applies only to {}; this PU is kind: {}, cost: {}", key,
                                        ScopeText(spec->scope), ToString(pu->kind), ToString(pu->cost_source)),
                            fmt::format("remove it; valid keys for this PU: {}", ValidPuKeys(*pu, false))});
      }
      if (spec->type == KeyType::kList) {
        if (!v.IsSequence()) {
          return Fail(child, {fmt::format("must be a list, got {}", NodeKind(v)),
                              "write e.g. [Conv, Gemm, MatMul]"});
        }
        pu->cim.supported_ops.clear();
        for (size_t k = 0; k < v.size(); ++k) {
          std::string item_path = fmt::format("{}[{}]", child, k);
          Note(item_path, v[k]);
          std::string op;
          HETPLAN_RETURN_IF_ERROR(ReadString(v[k], item_path, &op));
          pu->cim.supported_ops.push_back(std::move(op));
        }
        continue;
      }
      if (spec->type == KeyType::kIntList) {
        if (!v.IsSequence()) {
          return Fail(child, {fmt::format("must be a list, got {}", NodeKind(v)), "write e.g. cores: [0, 1]"});
        }
        pu->cores.clear();
        for (size_t k = 0; k < v.size(); ++k) {
          std::string item_path = fmt::format("{}[{}]", child, k);
          Note(item_path, v[k]);
          Scalar s;
          if (Check c = AsScalar(v[k], "a whole number", &s)) return Fail(item_path, *c);
          if (Check c = platform_internal::AddPuCore(*pu, s)) return Fail(item_path, *c);
        }
        continue;
      }
      if (spec->type == KeyType::kNumberMap || spec->type == KeyType::kStringMap) {
        const bool text = spec->type == KeyType::kStringMap;
        if (!v.IsMap()) {
          return Fail(child, {fmt::format("must be a map, got {}", NodeKind(v)),
                              key == "peak_gflops" ? "write e.g. {float32: 50, int8: 200}"
                              : text               ? "write e.g. {device_id: 0}"
                                                   : "write e.g. {Conv: 0.6, default: 0.5}"});
        }
        HETPLAN_ASSIGN_OR_RETURN(auto sub, Entries(v, child));
        if (text) {
          pu->provider_options.clear();
        } else {
          (key == "peak_gflops" ? pu->roofline.peak_gflops : pu->roofline.efficiency).clear();
        }
        for (const auto& [entry, ev] : sub) {
          std::string entry_path = fmt::format("{}.{}", child, entry);
          Scalar s;
          if (Check c = AsScalar(ev, text ? "a value" : "a number", &s)) return Fail(entry_path, *c);
          if (Check c = SetPuMapEntry(*pu, key, entry, s)) return Fail(entry_path, *c);
        }
        continue;
      }
      Scalar s;
      std::string_view expected = spec->type == KeyType::kInt      ? "a whole number"
                                  : spec->type == KeyType::kNumber ? "a number"
                                  : spec->type == KeyType::kBool   ? "true or false"
                                                                   : "a string";
      if (Check c = AsScalar(v, expected, &s)) return Fail(child, *c);
      if (Check c = SetPuScalar(*pu, key, s)) return Fail(child, *c);
    }
    return Status::Ok();
  }

  Status ReadLink(const YAML::Node& n, const std::string& path, Link* link) {
    if (!n.IsMap()) {
      return Fail(path, {fmt::format("must be a map, got {}", NodeKind(n)),
                         "write each link as {between: [a, b], bandwidth_gbps: <GB/s>}"});
    }
    HETPLAN_ASSIGN_OR_RETURN(auto entries, Entries(n, path));
    bool has_between = false, has_bandwidth = false;
    for (const auto& [key, v] : entries) {
      std::string child = fmt::format("{}.{}", path, key);
      if (!Contains(kLinkKeys, key)) {
        return Fail(child, {fmt::format("unknown key '{}'", Shorten(key)),
                            fmt::format("valid keys for a link: {}", JoinKeys(kLinkKeys))});
      }
      if (key == "between") {
        has_between = true;
        if (!v.IsSequence() || v.size() != 2) {
          return Fail(child, {v.IsSequence() ? fmt::format("names {} PUs", v.size())
                                             : fmt::format("must be a list, got {}", NodeKind(v)),
                              "name exactly two PUs, e.g. between: [cpu, cim]"});
        }
        HETPLAN_RETURN_IF_ERROR(ReadString(v[0], child, &link->a));
        HETPLAN_RETURN_IF_ERROR(ReadString(v[1], child, &link->b));
        continue;
      }
      has_bandwidth |= key == "bandwidth_gbps";
      Scalar s;
      if (Check c = AsScalar(v, key == "element_bytes" ? "a whole number" : "a number", &s)) {
        return Fail(child, *c);
      }
      if (Check c = SetLinkScalar(*link, key, s)) return Fail(child, *c);
    }
    if (!has_between) {
      return Fail(path, {"missing required key 'between'", "add between: [<pu>, <pu>]"});
    }
    if (!has_bandwidth) {
      return Fail(path, {"missing required key 'bandwidth_gbps'", "add bandwidth_gbps: <GB/s>, e.g. 10.24"});
    }
    return Status::Ok();
  }

  Result<Platform> Read(std::string_view text) {
    if (text.size() > kMaxPlatformYamlBytes) {
      return Error(ErrorCode::kLimitExceeded,
                   "{}: the platform file has {} bytes, more than the limit of {} (1 MiB); a platform "
                   "file is a few hundred bytes, check that this is the right file",
                   file_, text.size(), kMaxPlatformYamlBytes);
    }
    if (std::string bad = DescribeInvalidUtf8(text, file_); !bad.empty()) {
      return Error(ErrorCode::kParseError, "{}; save the file as UTF-8", bad);
    }
    int bad_line = 0;
    if (Check c = ScanNesting(text, &bad_line)) {
      return Error(ErrorCode::kParseError, "{}:{}: {}; {}", file_, bad_line, c->what, c->fix);
    }
    // Count documents with the event parser rather than YAML::LoadAll, which
    // loops forever on some malformed input in yaml-cpp 0.7 (a lone ',';
    // jbeder/yaml-cpp#1040, fixed by #1319): stop at the second document.
    YAML::Node root;
    try {
      std::istringstream in{std::string(text)};
      YAML::Parser parser(in);
      IgnoreEvents ignore;
      int docs = 0;
      while (docs < 2 && parser.HandleNextDocument(ignore)) ++docs;
      if (docs == 0) {
        return Error(ErrorCode::kParseError,
                     "{}:1: the platform file is empty; write name:, pus: and links: (see "
                     "docs/platform-format.md)",
                     file_);
      }
      if (docs > 1) {
        return Error(ErrorCode::kParseError,
                     "{}:1: the file holds more than one YAML document (a second '---', or stray text "
                     "such as a lone ',' that starts one); keep one platform map per file",
                     file_);
      }
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      return Error(ErrorCode::kParseError, "{}:{}: YAML syntax error: {}; fix the YAML at that line",
                   file_, e.mark.line >= 0 ? e.mark.line + 1 : 1, e.msg);
    }
    if (root.IsNull()) {
      return Error(ErrorCode::kParseError, "{}:1: the platform file is empty; write name:, pus: and links: "
                   "(see docs/platform-format.md)", file_);
    }
    if (!root.IsMap()) {
      return Fail("", {fmt::format("the document is {}, not a map", NodeKind(root)),
                       "write name:, pus: and links: at the top level"});
    }
    Platform p;
    p.source = file_;
    HETPLAN_ASSIGN_OR_RETURN(auto entries, Entries(root, ""));
    bool has_name = false, has_pus = false;
    for (const auto& [key, v] : entries) {
      if (!Contains(kTopKeys, key)) {
        return Fail(key, {fmt::format("unknown key '{}'", Shorten(key)),
                          fmt::format("valid top-level keys: {}", JoinKeys(kTopKeys))});
      }
      if (key == "name") {
        has_name = true;
        HETPLAN_RETURN_IF_ERROR(ReadString(v, key, &p.name));
      } else if (key == "description") {
        HETPLAN_RETURN_IF_ERROR(ReadString(v, key, &p.description));
      } else if (key == "pus" || key == "links") {
        has_pus |= key == "pus";
        if (v.IsNull()) continue;  // checked by ValidateImpl (pus) or means "no links"
        if (!v.IsSequence()) {
          return Fail(key, {fmt::format("must be a list, got {}", NodeKind(v)),
                            fmt::format("write each {} as a '- ' entry", key == "pus" ? "PU" : "link")});
        }
        if (key == "pus" && v.size() > static_cast<size_t>(kMaxPus)) {
          return Fail(key, {fmt::format("{} processing units, more than the limit of {}", v.size(), kMaxPus),
                            "merge or remove PUs"});
        }
        for (size_t i = 0; i < v.size(); ++i) {
          std::string path = fmt::format("{}[{}]", key, i);
          Note(path, v[i]);
          if (key == "pus") {
            p.pus.emplace_back();
            HETPLAN_RETURN_IF_ERROR(ReadPu(v[i], path, &p.pus.back()));
          } else {
            p.links.emplace_back();
            HETPLAN_RETURN_IF_ERROR(ReadLink(v[i], path, &p.links.back()));
          }
        }
      }
    }
    if (!has_name) return Fail("", {"missing required key 'name'", "add name: <platform name>"});
    if (!has_pus) return Fail("", {"missing required key 'pus'", "add pus: with at least one PU"});
    HETPLAN_RETURN_IF_ERROR(ValidateImpl(p, [this](const std::string& path) { return Where(path); }));
    return p;
  }

 private:
  std::string file_;
  std::map<std::string, int> lines_;
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string> PresetDirs() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("HETPLAN_PLATFORM_DIR");
  if (env != nullptr && *env != '\0') dirs.emplace_back(env);
  std::string source_dir = HETPLAN_SOURCE_DIR;
  if (!source_dir.empty()) dirs.push_back(source_dir + "/platforms");
  return dirs;
}

std::vector<std::string> PresetNames(const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".yaml") names.insert(it->path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace

Result<Platform> ParsePlatformYaml(std::string_view yaml_text, const std::string& file_label) {
  // yaml-cpp reports errors by exception; none may escape the library.
  try {
    YamlReader reader(file_label);
    return reader.Read(yaml_text);
  } catch (const YAML::Exception& e) {
    return Error(ErrorCode::kParseError, "{}:{}: YAML error: {}; fix the YAML at that line", file_label,
                 e.mark.line >= 0 ? e.mark.line + 1 : 1, e.msg);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kParseError, "{}: cannot read the platform: {}; check the file", file_label,
                 e.what());
  }
}

Result<Platform> LoadPlatform(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  bool is_path = name_or_path.find('/') != std::string::npos || EndsWith(name_or_path, ".yaml") ||
                 EndsWith(name_or_path, ".yml");
  std::string path = name_or_path;
  std::string source = name_or_path;
  if (!is_path) {
    std::vector<std::string> dirs = PresetDirs();
    path.clear();
    bool valid_name = !name_or_path.empty() && ValidPuName(name_or_path);
    for (const std::string& dir : dirs) {
      std::error_code ec;
      std::string candidate = dir + "/" + name_or_path + ".yaml";
      if (valid_name && fs::is_regular_file(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      std::vector<std::string> searched;
      for (const std::string& dir : dirs) searched.push_back(dir + "/" + name_or_path + ".yaml");
      return Error(ErrorCode::kNotFound,
                   "platform '{}': no such preset (looked for {}); use one of: {}, or give a path to a "
                   ".yaml file",
                   Shorten(name_or_path), searched.empty() ? "no preset folders" : Join(searched),
                   Join(PresetNames(dirs)));
    }
    source = "preset:" + name_or_path;
  } else {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return Error(ErrorCode::kNotFound,
                   "{}: platform file not found; check the path, or use a preset: {}", path,
                   Join(PresetNames(PresetDirs())));
    }
  }
  Result<std::string> text = ReadFile(path, static_cast<int64_t>(kMaxPlatformYamlBytes));
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kLimitExceeded) {
      return Error(ErrorCode::kLimitExceeded,
                   "{}: the platform file is larger than 1 MiB; a platform file is a few hundred bytes, "
                   "check that this is the right file",
                   path);
    }
    return text.status();
  }
  HETPLAN_ASSIGN_OR_RETURN(Platform p, ParsePlatformYaml(*text, path));
  p.source = source;
  fs::path folder = fs::path(path).parent_path();
  for (ProcessingUnit& pu : p.pus) {
    if (!pu.table.empty() && fs::path(pu.table).is_relative()) {
      pu.table = (folder / pu.table).lexically_normal().string();
    }
  }
  return p;
}

}  // namespace hetplan
