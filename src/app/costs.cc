// Cost-source selection (app/costs.h).
#include "hetplan/app/costs.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace hetplan {
namespace {

std::string Meta(const CostTable& t, const char* key, const char* fallback) {
  auto it = t.meta.find(key);
  return it == t.meta.end() ? fallback : it->second;
}

// Co-runs the measured PUs (cached on disk like their profiles and in
// `tables`) and adds the rows to each one's table.
Status AddCoRun(const LoadedModel& model, const std::vector<CoRunPu>& pus, const CostInputs& in, TableCache& tables,
                ResolvedCosts& out) {
  CoRunOptions co = in.corun_options;
  co.cache_dir = in.profile.cache_dir;
  std::vector<std::string> names;
  for (const CoRunPu& pu : pus) names.push_back(pu.name);
  const std::string label = fmt::format("{}", fmt::join(names, "+"));
  const std::string key = "corun:" + CoRunCacheKey(model, pus, co);
  const CostTable* t = tables.Find(key);
  if (t == nullptr) {
    if (in.progress) co.progress = [&in, &label](int done, int total) { in.progress(label, done, total); };
    const auto t0 = std::chrono::steady_clock::now();
    HETPLAN_ASSIGN_OR_RETURN(CostTable measured, ProfileCoRun(model, pus, co));
    t = &tables.Put(key, std::move(measured));
    out.profiled.push_back({label, 0, Meta(*t, "cache", "off"),
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
  }
  out.notes.push_back(fmt::format("{}: slowdown, co-execution and hand-off costs measured by co-running with {} on {}{}",
                                  label, Meta(*t, "runtime", "onnxruntime"), Meta(*t, "cpu", "this host"),
                                  t->meta.count("profiled_on") ? ", on a float32 copy of the model" : ""));
  out.run_notes.push_back(fmt::format("{}: co-run profile cache {}", label, Meta(*t, "cache", "off")));
  for (const CoRunPu& pu : pus) MergeCoRun(*t, &out.sources.tables[pu.name]);
  return Status::Ok();
}

}  // namespace

const CostTable* TableCache::Find(const std::string& key) const {
  auto it = tables_.find(key);
  return it == tables_.end() ? nullptr : &it->second;
}

const CostTable& TableCache::Put(const std::string& key, CostTable table) {
  return tables_.insert_or_assign(key, std::move(table)).first->second;
}

Result<const ProcessingUnit*> ProfiledPu(const Platform& platform, const std::string& pu_name) {
  const ProcessingUnit* chosen = nullptr;
  for (const ProcessingUnit& pu : platform.pus) {
    const bool named = !pu_name.empty() ? pu.name == pu_name : pu.cost_source == CostSource::kProfile;
    if (named && chosen == nullptr) chosen = &pu;
  }
  if (chosen == nullptr || chosen->cost_source != CostSource::kProfile) {
    return Error(ErrorCode::kInvalidArgument, "{}: no PU {}takes its costs from `cost: profile`; nothing to measure",
                 platform.source, pu_name.empty() ? "" : "'" + pu_name + "' ");
  }
  return chosen;
}

Result<ResolvedCosts> ResolveCosts(const LoadedModel& model, const Platform& platform, const CostInputs& in,
                                   TableCache* cache) {
  TableCache local;
  TableCache& tables = cache != nullptr ? *cache : local;
  ResolvedCosts out;
  // A table read from a file, checked against this model.
  auto load = [&](const std::string& path) -> Result<const CostTable*> {
    const std::string key = "table:" + path;
    const CostTable* t = tables.Find(key);
    if (t == nullptr) {
      HETPLAN_ASSIGN_OR_RETURN(CostTable loaded, LoadCostTable(path));
      t = &tables.Put(key, std::move(loaded));
    }
    HETPLAN_RETURN_IF_ERROR(CheckCostTable(*t, model.graph, path));
    return t;
  };
  const CostTable* user_table = nullptr;
  if (in.table != nullptr) {
    HETPLAN_RETURN_IF_ERROR(CheckCostTable(*in.table, model.graph, in.table_label));
    user_table = in.table;
  } else if (!in.costs_path.empty()) {
    HETPLAN_ASSIGN_OR_RETURN(user_table, load(in.costs_path));
  }

  auto covered = [&](const ProcessingUnit& pu) {
    return user_table != nullptr && model.graph.size() > 0 && user_table->Find(model.graph.op(0).name, pu.name);
  };
  // Every PU to profile must be one this machine can run, before any is profiled.
  std::vector<std::string> to_profile;
  for (const ProcessingUnit& pu : platform.pus) {
    if (pu.cost_source == CostSource::kProfile && !covered(pu)) to_profile.push_back(pu.name);
  }
  HETPLAN_RETURN_IF_ERROR(CheckPuRuntimes(platform, to_profile));
  std::vector<CoRunPu> measured;  // profiled here, as they will run
  for (const ProcessingUnit& pu : platform.pus) {
    if (pu.cost_source == CostSource::kProfile) {
      if (covered(pu)) {
        out.sources.tables[pu.name] = *user_table;
        continue;
      }
      ProfileOptions po = ForPu(in.profile, pu);
      po.progress = nullptr;
      po.stage = nullptr;
      const std::string key = ProfileCacheKey(model, pu.name, po);
      const CostTable* t = tables.Find(key);
      if (t == nullptr) {
        if (in.progress) {
          po.progress = [&in, name = pu.name](int done, int total) { in.progress(name, done, total); };
        }
        if (in.stage) {
          po.stage = [&in, name = pu.name](const std::string& what, double left) { in.stage(name, what, left); };
        }
        const auto t0 = std::chrono::steady_clock::now();
        HETPLAN_ASSIGN_OR_RETURN(CostTable measured, ProfileOperators(model, pu.name, po));
        t = &tables.Put(key, std::move(measured));
        out.profiled.push_back({pu.name, pu.threads, Meta(*t, "cache", "off"),
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
      }
      out.notes.push_back(fmt::format("{}: measured with {} on {} ({} thread{}{}{})", pu.name,
                                      Meta(*t, "runtime", "onnxruntime"),
                                      pu.OpenVino() ? "device " + Meta(*t, "device", "CPU") + " of " + Meta(*t, "cpu", "this host")
                                                    : Meta(*t, "cpu", "this host"),
                                      pu.threads,
                                      pu.threads == 1 ? "" : "s",
                                      po.provider == "cpu" ? std::string() : ", provider " + po.provider,
                                      po.cores.empty() ? std::string()
                                                       : fmt::format(", pinned to core{} {}", po.cores.size() == 1 ? "" : "s",
                                                                     fmt::join(po.cores, ","))));
      if (t->meta.count("profiled_on")) {
        out.notes.push_back(fmt::format("{}: measured on a {} of the model, not in its own types: {}", pu.name,
                                        Meta(*t, "profiled_on", ""), Meta(*t, "profiled_on_reason", "")));
      }
      if (std::string w = ProfileStabilityWarning(*t, pu.name); !w.empty()) out.notes.push_back("warning: " + w);
      // What this run's profile held (a cache hit's would be another run's).
      if (std::string mem = ProfileMemoryText(*t); !mem.empty() && Meta(*t, "cache", "") != "hit") {
        out.run_notes.push_back(pu.name + ": " + mem);
      }
      if (t->meta.count("memory_warning")) {
        out.notes.push_back(fmt::format("warning: {}: {}", pu.name, Meta(*t, "memory_warning", "")));
      }
      if (t->meta.count("boundary_memory")) {
        out.notes.push_back(fmt::format("{}: boundary fit: {}", pu.name, Meta(*t, "boundary_memory", "")));
      }
      out.run_notes.push_back(fmt::format("{}: profile cache {}", pu.name, Meta(*t, "cache", "off")));
      out.sources.tables[pu.name] = *t;
      po.cache_dir.clear();
      // The co-run profiler measures with ONNX Runtime only.
      if (!pu.OpenVino()) measured.push_back({pu.name, po, t});
    } else if (pu.cost_source == CostSource::kTable) {
      if (user_table != nullptr) {
        out.sources.tables[pu.name] = *user_table;
      } else if (!pu.table.empty()) {
        HETPLAN_ASSIGN_OR_RETURN(const CostTable* t, load(pu.table));
        out.sources.tables[pu.name] = *t;
      }
    } else {
      out.notes.push_back(fmt::format("{}: analytical costs ({})", pu.name, ToString(pu.cost_source)));
    }
  }
  if (in.corun && measured.size() >= 2) HETPLAN_RETURN_IF_ERROR(AddCoRun(model, measured, in, tables, out));
  out.sources.charge_boundary = in.charge_boundary;
  if (in.charge_boundary) {
    for (const auto& [name, t] : out.sources.tables) {
      auto b = t.boundary_us.find(name);
      if (b == t.boundary_us.end()) continue;  // BuildCostModel names the PU
      // boundary_points: "segments:µs" per cut, space-separated.
      const std::string points = Meta(t, "boundary_points", "");
      const long cuts = points.empty() ? 0 : std::count(points.begin(), points.end(), ' ') + 1;
      out.notes.push_back(fmt::format("{}: boundary cost {:.1f} µs per segment charged on every edge into it from "
                                      "another PU (fitted from {} cuts, R² {})",
                                      name, b->second, cuts, Meta(t, "boundary_r2", "?")));
    }
  }
  return out;
}

}  // namespace hetplan
