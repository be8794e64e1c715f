// The MPI sweep's messages that need no MPI (protocol.h).
#include "dse/protocol.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "hetplan/cost/cost_table.h"
#include "hetplan/util/sha256.h"

namespace hetplan::dse {
namespace {

// The parts of the spec that decide the points and their results.
nlohmann::json SpecFingerprint(const DseSpec& s) {
  nlohmann::json sweeps = nlohmann::json::array();
  for (const SweepAxis& a : s.sweeps) sweeps.push_back({a.key, a.values});
  std::vector<std::string> objectives;
  for (Objective o : s.objectives) objectives.push_back(ToString(o));
  return {{"models", s.models},
          {"platforms", s.platforms},
          {"overrides", s.overrides},
          {"sweeps", sweeps},
          {"solvers", s.solvers},
          {"objectives", objectives},
          {"latency_cap_us", s.latency_cap_us ? nlohmann::json(*s.latency_cap_us) : nlohmann::json(nullptr)},
          {"fusion", static_cast<int>(s.import.fusion)},
          {"warmup", s.profile.warmup},
          {"runs", s.profile.runs},
          {"boundary_cost", s.charge_boundary},
          {"time_limit_s", s.solve.time_limit_s},
          {"relative_gap", s.solve.relative_gap},
          {"jobs", s.jobs},
          {"out", s.out_path},
          {"resume", s.resume},
          {"schedules", s.schedules_dir}};
}

// Text → (the first line that differs: here, there).
std::pair<std::string, std::string> FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(sa, la));
    const bool gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return {"", ""};
    if (!ga) la = "(nothing)";
    if (!gb) lb = "(nothing)";
    if (la != lb || !ga || !gb) return {la, lb};
  }
}

}  // namespace

std::string HostName() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

void Prepare(const DseSpec& spec_in, const std::string& build, const std::string& arguments, int rank, int threads,
             Start* s) {
  s->spec = spec_in;
  s->sh.spec = &s->spec;
  s->sh.run_host = HostName();
  s->sh.run_rank = rank;
  const nlohmann::json fingerprint = SpecFingerprint(s->spec);
  s->status = CheckSpec(&s->spec);
  std::vector<Platform> bases;
  if (s->status.ok()) {
    s->points = ExpandPoints(s->spec);
    s->status = LoadVariants(s->spec, s->points, &s->sh, &bases);
  }
  nlohmann::json models = nlohmann::json::array();
  for (const std::string& m : s->spec.models) {
    std::ifstream probe(m, std::ios::binary);
    std::error_code ec;
    const bool exists = std::filesystem::exists(m, ec);
    models.push_back({{"path", m},
                      {"readable", static_cast<bool>(probe)},
                      {"problem", exists ? (probe ? "" : "cannot be read (permissions?)") : "no such file"}});
  }
  nlohmann::json platforms = nlohmann::json::array();
  for (const Platform& p : bases) platforms.push_back(Sha256Hex(PlatformToJson(p).dump()));
  s->hello = {{"build", build},
              {"arguments", arguments},
              {"spec", fingerprint},
              {"host", s->sh.run_host},
              {"pid", static_cast<int>(getpid())},
              {"cwd", std::filesystem::current_path().string()},
              {"threads", threads},
              {"status", s->status.ok() ? "" : s->status.message()},
              {"models", models},
              {"platforms", platforms},
              {"points", static_cast<int>(s->points.size())}};
}

std::string Who(const nlohmann::json& hello, int rank) {
  return fmt::format("rank {} (host {}, pid {})", rank, hello.value("host", "?"), hello.value("pid", 0));
}

Status CompareHello(const nlohmann::json& ours, const nlohmann::json& theirs, int r) {
  const std::string who = Who(theirs, r);
  if (theirs.value("build", "") != ours.value("build", "")) {
    return Error(ErrorCode::kInvalidArgument,
                 "dse: {} runs {} but rank 0 runs {}: install the same hetplan build on every node", who,
                 theirs.value("build", "?"), ours.value("build", "?"));
  }
  const std::string oa = ours.value("arguments", ""), ta = theirs.value("arguments", "");
  if (oa != ta || ours["spec"] != theirs["spec"]) {
    auto [here, there] = FirstDifference(oa, ta);
    if (here.empty()) std::tie(here, there) = FirstDifference(ours["spec"].dump(), theirs["spec"].dump());
    return Error(ErrorCode::kInvalidArgument,
                 "dse: {} was started with other arguments than rank 0 ({} there, {} on rank 0): start every "
                 "rank with the same command line",
                 who, there, here);
  }
  if (const std::string st = theirs.value("status", ""); !st.empty()) {
    return Error(ErrorCode::kInvalidArgument, "dse: on {}: {}", who, st);
  }
  for (const nlohmann::json& m : theirs["models"]) {
    if (!m.value("problem", "").empty()) {
      return Error(ErrorCode::kNotFound,
                   "dse: {} (working folder {}): model {}: {} on that rank's file system; every rank reads the "
                   "models at the same path (a shared file system, or the same files copied to every node)",
                   who, theirs.value("cwd", "?"), m.value("path", "?"), m.value("problem", ""));
    }
  }
  if (theirs["platforms"] != ours["platforms"]) {
    for (size_t i = 0; i < ours["platforms"].size() && i < theirs["platforms"].size(); ++i) {
      if (ours["platforms"][i] != theirs["platforms"][i]) {
        return Error(ErrorCode::kInvalidArgument,
                     "dse: {}: platform '{}' reads differently there than on rank 0 (another preset folder or "
                     "YAML file): give every rank the same platform files",
                     who, ours["spec"]["platforms"][i].get<std::string>());
      }
    }
  }
  return Status::Ok();
}

std::string CostsPayload(const Shared& sh) {
  nlohmann::json tables = nlohmann::json::object();
  nlohmann::json costs = nlohmann::json::array();
  for (const auto& [key, resolved] : sh.costs) {
    nlohmann::json sources = nlohmann::json::object();
    for (const auto& [pu, table] : resolved.sources.tables) {
      nlohmann::json tj = CostTableToJson(table);
      const std::string id = Sha256Hex(tj.dump()).substr(0, 16);
      if (!tables.contains(id)) tables[id] = std::move(tj);
      sources[pu] = id;
    }
    costs.push_back({{"model", key.first}, {"variant", key.second}, {"sources", sources}, {"notes", resolved.notes}});
  }
  nlohmann::json models = nlohmann::json::array();
  for (const LoadedModel& m : sh.models) models.push_back(m.sha256);
  return nlohmann::json{{"host_cpu", sh.host_cpu}, {"models", models}, {"tables", tables}, {"costs", costs}}.dump();
}

Status LoadModels(Start* s) {
  s->sh.models.clear();
  for (const std::string& path : s->spec.models) {
    HETPLAN_ASSIGN_OR_RETURN(LoadedModel model, LoadOnnxModel(path, s->spec.import));
    s->sh.models.push_back(std::move(model));
  }
  return Status::Ok();
}

Status AcceptCosts(const std::string& payload, Start* s) {
  const nlohmann::json j = nlohmann::json::parse(payload, nullptr, false);
  if (j.is_discarded()) return Error(ErrorCode::kInternal, "dse: the cost tables from rank 0 do not parse (a bug)");
  s->sh.host_cpu = j.value("host_cpu", "");
  std::map<std::string, CostTable> tables;
  for (const auto& [id, tj] : j["tables"].items()) {
    HETPLAN_ASSIGN_OR_RETURN(CostTable t, CostTableFromJson(tj, "cost table " + id + " from rank 0"));
    tables.emplace(id, std::move(t));
  }
  if (s->sh.models.empty()) HETPLAN_RETURN_IF_ERROR(LoadModels(s));
  for (size_t m = 0; m < s->spec.models.size(); ++m) {
    const std::string& ours = s->sh.models[m].sha256;
    const std::string theirs = j["models"].at(m).get<std::string>();
    if (ours != theirs) {
      return Error(ErrorCode::kInvalidArgument,
                   "{}: this file differs from rank 0's (sha256 {}… here, {}… there): give every rank the same "
                   "model files",
                   s->spec.models[m], ours.substr(0, 12), theirs.substr(0, 12));
    }
  }
  for (const nlohmann::json& c : j["costs"]) {
    ResolvedCosts rc;
    for (const auto& [pu, id] : c["sources"].items()) rc.sources.tables[pu] = tables.at(id.get<std::string>());
    rc.notes = c["notes"].get<std::vector<std::string>>();
    s->sh.costs.emplace(std::make_pair(c["model"].get<int>(), c["variant"].get<std::string>()), std::move(rc));
  }
  return Status::Ok();
}

std::string LineText(const nlohmann::json& line) {
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ResultFrame(int index, const std::string& line, const std::string& schedule) {
  return fmt::format("{}\n{}\n{}", index, line, schedule);
}

bool ParseResultFrame(const std::string& bytes, int* index, std::string* line, std::string* schedule) {
  const size_t a = bytes.find('\n');
  if (a == std::string::npos) return false;
  const size_t b = bytes.find('\n', a + 1);
  if (b == std::string::npos) return false;
  *index = std::atoi(bytes.substr(0, a).c_str());
  *line = bytes.substr(a + 1, b - a - 1);
  *schedule = bytes.substr(b + 1);
  return true;
}

std::vector<int> Ints(const std::string& bytes) {
  std::vector<int> v(bytes.size() / sizeof(int));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(int));
  return v;
}

}  // namespace hetplan::dse
