// Cost-source selection (app/costs.h).
#include "hetplan/app/costs.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>

namespace hetplan {
namespace {

std::string Meta(const CostTable& t, const char* key, const char* fallback) {
  auto it = t.meta.find(key);
  return it == t.meta.end() ? fallback : it->second;
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

  for (const ProcessingUnit& pu : platform.pus) {
    if (pu.cost_source == CostSource::kProfile) {
      if (user_table != nullptr && model.graph.size() > 0 && user_table->Find(model.graph.op(0).name, pu.name)) {
        out.sources.tables[pu.name] = *user_table;
        continue;
      }
      ProfileOptions po = in.profile;
      po.threads = pu.threads;
      po.progress = nullptr;
      const std::string key = ProfileCacheKey(model, pu.name, po);
      const CostTable* t = tables.Find(key);
      if (t == nullptr) {
        if (in.progress) {
          po.progress = [&in, name = pu.name](int done, int total) { in.progress(name, done, total); };
        }
        const auto t0 = std::chrono::steady_clock::now();
        HETPLAN_ASSIGN_OR_RETURN(CostTable measured, ProfileOnnxRuntime(model, pu.name, po));
        t = &tables.Put(key, std::move(measured));
        out.profiled.push_back({pu.name, pu.threads, Meta(*t, "cache", "off"),
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
      }
      out.notes.push_back(fmt::format("{}: measured with {} on {} ({} thread{})", pu.name,
                                      Meta(*t, "runtime", "onnxruntime"), Meta(*t, "cpu", "this host"), pu.threads,
                                      pu.threads == 1 ? "" : "s"));
      out.run_notes.push_back(fmt::format("{}: profile cache {}", pu.name, Meta(*t, "cache", "off")));
      out.sources.tables[pu.name] = *t;
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
  return out;
}

}  // namespace hetplan
