#include "hetplan/report/schedule_file.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

#include "hetplan/graph/dtype.h"
#include "hetplan/graph/quantization.h"
#include "hetplan/solve/throughput.h"
#include "hetplan/util/io.h"

namespace hetplan {
namespace {

nlohmann::json NumOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
nlohmann::json NumOrNull(const std::optional<double>& v) { return v ? NumOrNull(*v) : nlohmann::json(nullptr); }

// BIDENT's mapping: what the search predicted, under which accounting.
nlohmann::json MappingBlock(const ScheduleContext& ctx, const std::string& basis) {
  const SolveResult& r = *ctx.result;
  if (r.mapping) {
    const MappingStats& m = *r.mapping;
    return {{"mode", m.parallel ? "parallel" : "sequential"},
            {"accounting", ToString(m.accounting)},
            {"algorithm", ToString(m.algorithm)},
            {"cost_basis", basis},
            {"predicted_latency_us", m.predicted_latency_us},
            {"predicted_energy_uj", NumOrNull(m.predicted_energy_uj)},
            {"chain", m.chain},
            {"parallel_phases", m.parallel_phases},
            {"shared_pu_phases", m.shared_pu_phases}};
  }
  const ConcurrentStats& m = *r.concurrent;
  return {{"mode", "concurrent"},
          {"space", ToString(m.space)},
          {"solo_steps", m.solo_steps},
          {"algorithm", ToString(m.algorithm)},
          {"cost_basis", basis},
          {"states", m.states},
          {"coexec_entries", m.coexec_entries},
          {"predicted_latency_us", m.predicted_latency_us},
          {"predicted_energy_uj", NumOrNull(m.predicted_energy_uj)}};
}

}  // namespace

std::string CostBasis(const std::vector<PuInfo>& pus) {
  std::set<std::string> labels;
  for (const PuInfo& pu : pus) labels.insert(pu.cost_label);
  if (labels.size() == 1) return *labels.begin();
  std::string out = "mixed:";
  for (const PuInfo& pu : pus) out += fmt::format(" {} {}", pu.name, pu.cost_label);
  return out;
}

namespace {

// One entry of devices[].
nlohmann::json DeviceJson(const CostModel& c, int p) {
  const PuInfo& pu = c.pu(p);
  nlohmann::json d = {{"name", pu.name},
                      {"kind", ToString(pu.kind)},
                      {"execution", pu.spatial ? "spatial" : "serial"},
                      {"capacity_crossbars", pu.spatial ? nlohmann::json(pu.capacity) : nlohmann::json(nullptr)},
                      {"power_w", NumOrNull(pu.power_w)},
                      {"costs", pu.cost_label}};
  // Charged per segment on this PU, inside every edge's transfer_us into it
  // (CostModel::ChargeBoundary): split and run take it back out of the
  // transfers and add it to the segment.
  if (c.boundary_us(p) > 0) d["boundary_us"] = c.boundary_us(p);
  // The ADCs its operators share (CimParams::shared_adcs); each operator's
  // share is its adcs[device].
  if (pu.adc_pool > 0) d["shared_adcs"] = pu.adc_pool;
  // What the validator checks the writes and the endurance budget against.
  if (pu.reprogram) {
    d["reprogram"] = {{"write_ns_per_row", pu.write_ns_per_row},
                      {"write_energy_pj_per_row", NumOrNull(pu.write_energy_pj_per_row)},
                      {"endurance_writes", pu.endurance_writes},
                      {"lifetime_inferences", pu.lifetime_inferences}};
  }
  return d;
}

// One entry of operators[]; `ids`: the physical crossbars it holds on a
// reprogramming device (nullptr elsewhere).
nlohmann::json OperatorJson(const Operator& op, const CostModel& c, const ScheduledOp& so, const CrossbarRanges* ids,
                            bool stream) {
  const int k = c.num_pus();
  nlohmann::json o;
  o["id"] = op.id;
  o["name"] = op.name;
  o["type"] = op.type;
  o["nodes"] = op.nodes;
  nlohmann::json cost = nlohmann::json::object();
  nlohmann::json crossbars = nullptr;
  for (int p = 0; p < k; ++p) {
    cost[c.pu(p).name] = c.supported(op.id, p) ? nlohmann::json(c.latency_us(op.id, p)) : nlohmann::json(nullptr);
    if (c.pu(p).spatial && c.supported(op.id, p) && crossbars.is_null()) crossbars = c.crossbars(op.id, p);
  }
  // On a spatial PU, the crossbars it holds there (two CIMs of different
  // geometry need different counts); elsewhere, the first spatial PU's.
  if (c.pu(so.device).spatial && c.supported(op.id, so.device)) crossbars = c.crossbars(op.id, so.device);
  o["cost_us"] = std::move(cost);
  o["crossbars"] = crossbars;
  // The weight matrix a CIM holds: what the validator recomputes crossbars,
  // write rows and ADCs from, with the PU's geometry in the platform block.
  if (op.has_weight) {
    o["weight"] = {{"rows", op.weight_rows},
                   {"cols", op.weight_cols},
                   {"bits", op.weight_bits},
                   {"groups", std::max<int64_t>(op.groups, 1)},
                   {"directions", std::max<int64_t>(op.directions, 1)},
                   {"n_mvm", op.n_mvm},
                   {"product", op.matrix_op.empty() ? std::string(FloatOpType(op.type)) : op.matrix_op}};
  }
  // A stream's plan: what the validator needs to time a replicated operator
  // (CostModel::replicated_latency_us) on each spatial device that counts
  // its MVMs.
  if (stream) {
    nlohmann::json mvms = nlohmann::json::object(), mvm_us = nlohmann::json::object();
    for (int p = 0; p < k; ++p) {
      if (c.pu(p).spatial && c.supported(op.id, p) && c.mvms(op.id, p) > 0) {
        mvms[c.pu(p).name] = c.mvms(op.id, p);
        mvm_us[c.pu(p).name] = c.mvm_us(op.id, p);
      }
    }
    if (!mvms.empty()) {
      o["mvms"] = std::move(mvms);
      o["mvm_us"] = std::move(mvm_us);
    }
  }
  // Energy beyond power × time (a CIM circuit's conversions, reads, buffer
  // accesses), on each PU that prices it; absent elsewhere.
  if (c.has_op_energy()) {
    nlohmann::json own = nlohmann::json::object();
    for (int p = 0; p < k; ++p) {
      if (c.supported(op.id, p) && c.op_energy_uj(op.id, p) != 0.0) own[c.pu(p).name] = c.op_energy_uj(op.id, p);
    }
    if (!own.empty()) o["op_energy_uj"] = std::move(own);
  }
  // The ADCs of each shared pool it holds while it runs there.
  if (c.has_shared_adcs()) {
    nlohmann::json held = nlohmann::json::object();
    for (int p = 0; p < k; ++p) {
      if (c.pu(p).adc_pool > 0 && c.supported(op.id, p)) held[c.pu(p).name] = c.adcs(op.id, p);
    }
    if (!held.empty()) o["adcs"] = std::move(held);
  }
  int64_t out_bytes = 0;
  for (const auto& t : op.outputs) out_bytes += t.bytes();
  o["output_bytes"] = out_bytes;
  o["device"] = c.pu(so.device).name;
  o["start_us"] = so.start_us;
  o["finish_us"] = so.finish_us;
  if (so.slowdown != 1.0) o["slowdown"] = so.slowdown;
  if (so.request != 0) o["request"] = so.request;
  if (stream) {
    o["replicas"] = so.replicas;
    o["stage"] = so.stage;
  }
  if (ids != nullptr) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& [first, last] : *ids) ranges.push_back({first, last});
    o["crossbar_ids"] = std::move(ranges);
  }
  // Its weights written into those crossbars this inference, before it runs.
  if (so.rewritten) {
    const CostModel::Write& w = c.write(op.id, so.device);
    o["write"] = {{"start_us", so.start_us},       {"finish_us", so.start_us + w.us},
                  {"rows", w.rows},                {"rows_written", w.rows_written},
                  {"write_us", w.us},              {"energy_uj", w.uj}};
  }
  return o;
}

}  // namespace

nlohmann::json ScheduleToJson(const ScheduleContext& ctx) {
  const OpGraph& g = *ctx.problem->graph;
  const CostModel& c = *ctx.problem->costs;
  const Schedule& s = *ctx.result->schedule;
  const int k = c.num_pus();
  nlohmann::json j;
  j["format"] = "hetplan-schedule";
  j["version"] = kScheduleFormatVersion;
  std::string name = ctx.model->path;
  if (auto slash = name.find_last_of('/'); slash != std::string::npos) name = name.substr(slash + 1);
  if (name.size() > 5 && name.ends_with(".onnx")) name.resize(name.size() - 5);
  j["model"] = {{"name", name},
                {"file", ctx.model->path},
                {"sha256", ctx.model->sha256},
                {"fusion", ToString(ctx.model->fusion)},
                {"operators", g.size()}};
  AddPlanAssumptions(ctx.model->assumptions, &j["model"]);
  j["platform"] = PlatformToJson(*ctx.platform);
  j["objective"] = ToString(ctx.problem->objective);
  j["mode"] = ctx.mode;
  auto& devices = j["devices"] = nlohmann::json::array();
  std::vector<std::vector<CrossbarRanges>> ids(k);
  for (int p = 0; p < k; ++p) {
    devices.push_back(DeviceJson(c, p));
    if (c.pu(p).reprogram) ids[p] = PhysicalCrossbars(*ctx.problem, s, p);
  }
  auto& ops = j["operators"] = nlohmann::json::array();
  for (const Operator& op : g.operators()) {
    const ScheduledOp& so = s.ops[op.id];
    ops.push_back(OperatorJson(op, c, so, ids[so.device].empty() ? nullptr : &ids[so.device][op.id],
                               s.initiation_interval_us.has_value()));
  }
  auto& edges = j["edges"] = nlohmann::json::array();
  for (int e = 0; e < static_cast<int>(g.edges().size()); ++e) {
    const Edge& edge = g.edges()[e];
    int du = s.ops[edge.from].device, dv = s.ops[edge.to].device;
    nlohmann::json transfer = nullptr;
    if (du != dv) transfer = c.transfer_us(e, du, dv);
    else if (k == 2) transfer = c.transfer_us(e, du, 1 - du);
    nlohmann::json row = {{"from", edge.from}, {"to", edge.to},       {"elements", edge.elements},
                          {"bytes", edge.bytes}, {"transfer_us", transfer}};
    // A stream's transfer holds the link between its devices from then.
    if (s.initiation_interval_us && du != dv) row["transfer_start_us"] = s.transfer_start_us[e];
    edges.push_back(std::move(row));
  }
  j["makespan_us"] = s.makespan_us;
  if (s.initiation_interval_us) {
    j["initiation_interval_us"] = *s.initiation_interval_us;
    j["inputs_per_s"] = *s.initiation_interval_us > 0 ? nlohmann::json(1e6 / *s.initiation_interval_us)
                                                      : nlohmann::json(nullptr);
  } else if (ctx.request_models.size() <= 1) {
    // What the plan would sustain with inputs pipelined (throughput.h).
    std::vector<int> a(s.ops.size());
    for (size_t v = 0; v < a.size(); ++v) a[v] = s.ops[v].device;
    j["pipelined_ii_us"] = ComputeStreamLoads(*ctx.problem, a).interval_us();
  }
  j["energy_uj"] = NumOrNull(s.energy_uj);
  const SolveResult& r = *ctx.result;
  j["solver"] = {{"name", r.solver},
                 {"status", ToString(r.status)},
                 {"termination", ToString(r.termination)},
                 {"formulation", r.formulation.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.formulation)},
                 {"objective", NumOrNull(r.objective)},
                 {"bound", NumOrNull(r.bound)},
                 {"gap", NumOrNull(r.gap)},
                 {"seconds", r.seconds},
                 {"variables", r.mip ? r.mip->variables : 0},
                 {"constraints", r.mip ? r.mip->constraints : 0},
                 {"big_m", r.mip && r.mip->big_m > 0 ? nlohmann::json(r.mip->big_m) : nlohmann::json(nullptr)},
                 // The MIP solver that ran, with its version ("HiGHS 1.16.0"); null when none did.
                 {"mip_solver", r.mip && !r.mip->backend.empty() ? nlohmann::json(r.mip->backend)
                                                                 : nlohmann::json(nullptr)}};
  if (r.mapping || r.concurrent) j["mapping"] = MappingBlock(ctx, CostBasis(c.pus()));
  if (ctx.request_models.size() == 2) {
    int offset = 0;
    auto& requests = j["requests"] = nlohmann::json::array();
    for (const LoadedModel* m : ctx.request_models) {
      requests.push_back(
          {{"file", m->path}, {"sha256", m->sha256}, {"operators", m->graph.size()}, {"id_offset", offset}});
      offset += m->graph.size();
    }
  }
  j["baselines"] = nlohmann::json::object();
  for (const auto& [key, value] : ctx.baselines) j["baselines"][key] = value;
  auto cpu = ctx.baselines.find("cpu_only_us");
  // For a stream: inputs per second against the host running one after another.
  const double per_input = s.initiation_interval_us.value_or(s.makespan_us);
  j["speedup"] = cpu != ctx.baselines.end() && per_input > 0 ? nlohmann::json(cpu->second / per_input)
                                                             : nlohmann::json(nullptr);
  std::vector<std::string> notes = ctx.notes;
  notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  for (auto& line : PlanAssumptionLines(ctx.model->assumptions)) notes.push_back(std::move(line));
  j["notes"] = notes;
  return j;
}

std::string ScheduleJsonToCsv(const nlohmann::json& s) {
  std::string out = "id,name,type,device,start_us,finish_us,duration_us,crossbars\n";
  for (const auto& o : s["operators"]) {
    std::string name = o["name"].get<std::string>();
    if (name.find_first_of(",\"") != std::string::npos) {
      std::string q = "\"";
      for (char ch : name) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      name = q + "\"";
    }
    double start = o["start_us"].get<double>(), finish = o["finish_us"].get<double>();
    out += fmt::format("{},{},{},{},{},{},{},{}\n", o["id"].get<int>(), name, o["type"].get<std::string>(),
                       o["device"].get<std::string>(), start, finish, finish - start,
                       o["crossbars"].is_null() ? std::string() : std::to_string(o["crossbars"].get<int64_t>()));
  }
  return out;
}

nlohmann::json ScheduleJsonToChromeTrace(const nlohmann::json& s) {
  nlohmann::json events = nlohmann::json::array();
  std::map<std::string, int> tid;
  for (const auto& d : s["devices"]) {
    int t = static_cast<int>(tid.size());
    tid[d["name"].get<std::string>()] = t;
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", t},
                      {"args", {{"name", d["name"].get<std::string>() + " (" + d["kind"].get<std::string>() + ", " +
                                             d["costs"].get<std::string>() + ")"}}}});
  }
  const int transfer_tid = static_cast<int>(tid.size());
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", transfer_tid},
                    {"args", {{"name", "transfers"}}}});
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1},
                    {"args", {{"name", "hetplan " + s["model"]["name"].get<std::string>()}}}});
  // The branches and values the plan assumed, as the process's labels.
  std::vector<std::string> labels;
  if (s["model"].contains("branches") && s["model"]["branches"].is_array()) {
    for (const auto& b : s["model"]["branches"]) {
      labels.push_back(fmt::format("If {}: {}{}", b.value("node", std::string()), b.value("branch", std::string()),
                                   b.value("assumed", false) ? " (assumed, --branch)" : " (condition folded)"));
    }
  }
  if (s["model"].contains("input_values") && s["model"]["input_values"].is_object()) {
    for (const auto& [name, v] : s["model"]["input_values"].items()) {
      labels.push_back(fmt::format("--value {}={}", name, v.contains("values") ? v["values"].dump() : std::string()));
    }
  }
  if (!labels.empty()) {
    events.push_back({{"name", "process_labels"}, {"ph", "M"}, {"pid", 1},
                      {"args", {{"labels", fmt::format("{}", fmt::join(labels, ", "))}}}});
  }
  // A stream (initiation_interval_us): several inputs, input i at + i × II,
  // enough of them for the steady state to show (the deepest stage + 3, at
  // most 16); one inference otherwise.
  const double ii = s.contains("initiation_interval_us") && s["initiation_interval_us"].is_number()
                        ? s["initiation_interval_us"].get<double>()
                        : 0.0;
  int inputs = 1;
  if (ii > 0) {
    for (const auto& o : s["operators"]) inputs = std::max(inputs, o.value("stage", 0) + 4);
    inputs = std::min(inputs, 16);
  }
  auto named = [&](const std::string& name, int i) { return ii > 0 ? fmt::format("{} #{}", name, i) : name; };
  std::vector<const nlohmann::json*> by_id;
  for (const auto& o : s["operators"]) {
    size_t id = o["id"].get<size_t>();
    if (by_id.size() <= id) by_id.resize(id + 1, nullptr);
    by_id[id] = &o;
  }
  for (int i = 0; i < inputs; ++i) {
    for (const auto& o : s["operators"]) {
      double start = o["start_us"].get<double>(), finish = o["finish_us"].get<double>();
      nlohmann::json args = {{"id", o["id"]}, {"type", o["type"]}, {"nodes", o["nodes"]}};
      if (o.contains("request")) args["request"] = o["request"];
      if (ii > 0) args["input"] = i;
      events.push_back({{"name", named(o["name"].get<std::string>(), i)}, {"cat", o["type"]}, {"ph", "X"},
                        {"pid", 1}, {"tid", tid[o["device"].get<std::string>()]}, {"ts", start + i * ii},
                        {"dur", finish - start}, {"args", args}});
    }
    for (const auto& e : s["edges"]) {
      const auto* u = by_id.at(e["from"].get<size_t>());
      const auto* v = by_id.at(e["to"].get<size_t>());
      if ((*u)["device"] == (*v)["device"] || e["transfer_us"].is_null()) continue;
      double t = e["transfer_us"].get<double>();
      if (t <= 0) continue;
      const double at = e.contains("transfer_start_us") ? e["transfer_start_us"].get<double>()
                                                        : (*u)["finish_us"].get<double>();
      events.push_back({{"name", named((*u)["name"].get<std::string>() + " → " + (*v)["name"].get<std::string>(), i)},
                        {"cat", "transfer"}, {"ph", "X"}, {"pid", 1}, {"tid", transfer_tid},
                        {"ts", at + i * ii}, {"dur", t},
                        {"args", {{"bytes", e["bytes"]}, {"from", (*u)["device"]}, {"to", (*v)["device"]}}}});
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

namespace {

using PlanFileError = std::function<Status(const std::string& where, const std::string& what)>;

// The platform block's ONNX Runtime configuration of one PU.
void ReadRuntime(const nlohmann::json& pu, PlanFileDevice* dev) {
  if (!pu.is_object()) return;
  if (pu.contains("threads") && pu["threads"].is_number_integer()) dev->threads = pu["threads"].get<int>();
  if (pu.contains("runtime") && pu["runtime"].is_string()) dev->runtime = pu["runtime"].get<std::string>();
  if (pu.contains("device") && pu["device"].is_string()) dev->device = pu["device"].get<std::string>();
  if (!pu.contains("provider") || !pu["provider"].is_string()) return;
  dev->configured = true;
  dev->provider = pu["provider"].get<std::string>();
  if (pu.contains("provider_options") && pu["provider_options"].is_object()) {
    for (const auto& [k, v] : pu["provider_options"].items()) {
      if (v.is_string()) dev->provider_options[k] = v.get<std::string>();
    }
  }
  if (pu.contains("cores") && pu["cores"].is_array()) {
    for (const auto& c : pu["cores"]) {
      if (c.is_number_integer()) dev->cores.push_back(c.get<int>());
    }
  }
}

// devices[], with each PU's runtime from the platform block.
Status ReadDevices(const nlohmann::json& s, const PlanFileError& bad, PlanFile* p) {
  if (!s.contains("devices") || !s["devices"].is_array() || s["devices"].empty()) {
    return bad("devices", "missing or empty");
  }
  const nlohmann::json no_platform = nlohmann::json::object();
  const nlohmann::json& platform = s.contains("platform") && s["platform"].is_object() ? s["platform"] : no_platform;
  for (size_t i = 0; i < s["devices"].size(); ++i) {
    const auto& d = s["devices"][i];
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) {
      return bad(fmt::format("devices[{}].name", i), "missing");
    }
    PlanFileDevice dev;
    dev.name = d["name"].get<std::string>();
    dev.kind = d.value("kind", std::string("cpu"));
    dev.costs = d.value("costs", std::string());
    dev.execution = d.value("execution", std::string("serial"));
    if (d.contains("capacity_crossbars") && d["capacity_crossbars"].is_number_integer()) {
      dev.capacity_crossbars = d["capacity_crossbars"].get<int64_t>();
    }
    if (d.contains("power_w") && d["power_w"].is_number()) dev.power_w = d["power_w"].get<double>();
    if (d.contains("shared_adcs") && d["shared_adcs"].is_number_integer()) {
      dev.shared_adcs = d["shared_adcs"].get<int64_t>();
    }
    if (d.contains("boundary_us") && d["boundary_us"].is_number() && d["boundary_us"].get<double>() >= 0) {
      dev.boundary_us = d["boundary_us"].get<double>();
    }
    if (platform.contains(dev.name)) ReadRuntime(platform[dev.name], &dev);
    p->devices.push_back(std::move(dev));
  }
  return Status::Ok();
}

// What an operator entry says beyond its placement: its ONNX nodes, its cost
// on every PU (null where unsupported), its output bytes. Entries of the
// wrong type are skipped.
void ReadOperatorDetails(const nlohmann::json& o, PlanFileOperator* op) {
  if (o.contains("nodes") && o["nodes"].is_array()) {
    for (const auto& n : o["nodes"]) {
      if (n.is_string()) op->nodes.push_back(n.get<std::string>());
    }
  }
  if (o.contains("cost_us") && o["cost_us"].is_object()) {
    for (const auto& [pu, c] : o["cost_us"].items()) {
      op->cost_us[pu] = c.is_number() ? std::optional<double>(c.get<double>()) : std::nullopt;
    }
  }
  if (o.contains("output_bytes") && o["output_bytes"].is_number_integer()) {
    op->output_bytes = o["output_bytes"].get<int64_t>();
  }
  if (o.contains("weight") && o["weight"].is_object()) {
    const auto& w = o["weight"];
    auto integer = [&](const char* key, int64_t fallback) {
      return w.contains(key) && w[key].is_number_integer() ? w[key].get<int64_t>() : fallback;
    };
    op->weight = PlanFileWeight{integer("rows", 0),       integer("cols", 0),  integer("bits", 0),
                                integer("groups", 1),     integer("directions", 1), integer("n_mvm", 0),
                                w.contains("product") && w["product"].is_string() ? w["product"].get<std::string>()
                                                                                  : std::string()};
  }
}

// operators[], each stored at its id (every id once, 0 to n−1).
// A stream operator's copies, stage and MVMs; its predicted time with the
// copies sharing its MVMs (CostModel::replicated_latency_us).
void ReadStreamOperator(const nlohmann::json& o, PlanFileOperator* op) {
  if (o.contains("replicas") && o["replicas"].is_number_integer()) op->replicas = o["replicas"].get<int64_t>();
  if (o.contains("stage") && o["stage"].is_number_integer()) op->stage = o["stage"].get<int>();
  for (const char* key : {"mvms", "mvm_us"}) {
    if (!o.contains(key) || !o[key].is_object()) continue;
    for (const auto& [pu, v] : o[key].items()) {
      if (!v.is_number()) continue;
      if (std::string(key) == "mvms") op->mvms[pu] = v.get<int64_t>();
      else op->mvm_us[pu] = v.get<double>();
    }
  }
  auto n = op->mvms.find(op->device);
  auto us = op->mvm_us.find(op->device);
  if (op->replicas > 1 && n != op->mvms.end() && us != op->mvm_us.end() && n->second > 0) {
    const double each = std::ceil(static_cast<double>(n->second) / static_cast<double>(op->replicas));
    op->predicted_us -= (us->second - us->second * each / static_cast<double>(n->second)) * op->slowdown;
  }
}

Status ReadOperators(const nlohmann::json& s, const PlanFileError& bad, PlanFile* p) {
  if (!s.contains("operators") || !s["operators"].is_array()) return bad("operators", "missing");
  const auto& ops = s["operators"];
  p->operators.resize(ops.size());
  std::vector<bool> seen(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    const std::string where = fmt::format("operators[{}]", i);
    if (!o.is_object() || !o.contains("id") || !o["id"].is_number_integer()) return bad(where + ".id", "missing");
    const int64_t id = o["id"].get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(ops.size()) || seen[static_cast<size_t>(id)]) {
      return bad(where + ".id", fmt::format("{} is out of range or repeated", id));
    }
    seen[static_cast<size_t>(id)] = true;
    PlanFileOperator& op = p->operators[static_cast<size_t>(id)];
    op.name = o.value("name", std::string());
    op.type = o.contains("type") && o["type"].is_string() ? o["type"].get<std::string>() : std::string();
    if (!o.contains("device") || !o["device"].is_string()) return bad(where + ".device", "missing");
    op.device = o["device"].get<std::string>();
    op.device_index = p->FindDevice(op.device);
    if (op.device_index < 0) return bad(where + ".device", fmt::format("'{}' is not in devices[]", op.device));
    for (const char* key : {"start_us", "finish_us"}) {
      if (!o.contains(key) || !o[key].is_number() || !std::isfinite(o[key].get<double>())) {
        return bad(fmt::format("{}.{}", where, key), "missing or not a finite number");
      }
    }
    op.start_us = o["start_us"].get<double>();
    op.finish_us = o["finish_us"].get<double>();
    const auto& cost = o.value("cost_us", nlohmann::json::object());
    if (!cost.is_object() || !cost.contains(op.device) || !cost[op.device].is_number()) {
      return bad(fmt::format("{}.cost_us.{}", where, op.device),
                 fmt::format("operator '{}' has no cost on its device '{}' (unsupported there)", op.name, op.device));
    }
    op.slowdown = o.contains("slowdown") && o["slowdown"].is_number() ? o["slowdown"].get<double>() : 1.0;
    op.predicted_us = cost[op.device].get<double>() * op.slowdown;
    if (o.contains("crossbars") && o["crossbars"].is_number_integer()) op.crossbars = o["crossbars"].get<int64_t>();
    if (o.contains("op_energy_uj") && o["op_energy_uj"].is_object()) {
      for (const auto& [pu, e] : o["op_energy_uj"].items()) {
        if (e.is_number()) op.op_energy_uj[pu] = e.get<double>();
      }
    }
    if (o.contains("crossbar_ids") && o["crossbar_ids"].is_array()) {
      for (const auto& r : o["crossbar_ids"]) {
        if (r.is_array() && r.size() == 2 && r[0].is_number_integer() && r[1].is_number_integer()) {
          op.crossbar_ids.push_back({r[0].get<int64_t>(), r[1].get<int64_t>()});
        }
      }
    }
    if (o.contains("write") && o["write"].is_object()) {
      const auto& w = o["write"];
      auto num = [&](const char* key) { return w.contains(key) && w[key].is_number() ? w[key].get<double>() : 0.0; };
      auto count = [&](const char* key) {
        return w.contains(key) && w[key].is_number_integer() ? w[key].get<int64_t>() : int64_t{0};
      };
      op.write = PlanFileWrite{num("start_us"), num("finish_us"), num("write_us"), num("energy_uj"), count("rows"),
                               count("rows_written")};
      op.predicted_us += op.write->write_us;
    }
    if (o.contains("adcs") && o["adcs"].is_object()) {
      for (const auto& [pu, n] : o["adcs"].items()) {
        if (n.is_number_integer()) op.adcs[pu] = n.get<int64_t>();
      }
    }
    if (o.contains("request") && o["request"].is_number_integer()) op.request = o["request"].get<int>();
    ReadOperatorDetails(o, &op);
    ReadStreamOperator(o, &op);
  }
  return Status::Ok();
}

// edges[] (entries without integer ends are skipped), the totals, the
// solver's name and status, the baselines, the requests.
void ReadEdgesAndSummary(const nlohmann::json& s, PlanFile* p) {
  if (s.contains("edges") && s["edges"].is_array()) {
    for (const auto& e : s["edges"]) {
      if (!e.is_object() || !e.contains("from") || !e.contains("to") || !e["from"].is_number_integer() ||
          !e["to"].is_number_integer()) {
        continue;
      }
      PlanFileEdge edge;
      edge.from = e["from"].get<int>();
      edge.to = e["to"].get<int>();
      if (e.contains("bytes") && e["bytes"].is_number_integer()) edge.bytes = e["bytes"].get<int64_t>();
      if (e.contains("elements") && e["elements"].is_number_integer()) edge.elements = e["elements"].get<int64_t>();
      if (e.contains("transfer_us") && e["transfer_us"].is_number()) edge.transfer_us = e["transfer_us"].get<double>();
      if (e.contains("transfer_start_us") && e["transfer_start_us"].is_number()) {
        edge.transfer_start_us = e["transfer_start_us"].get<double>();
      }
      p->edges.push_back(edge);
    }
  }
  if (s.contains("makespan_us") && s["makespan_us"].is_number()) p->makespan_us = s["makespan_us"].get<double>();
  if (s.contains("energy_uj") && s["energy_uj"].is_number()) p->energy_uj = s["energy_uj"].get<double>();
  for (auto [key, field] : {std::pair{"initiation_interval_us", &p->initiation_interval_us},
                            std::pair{"pipelined_ii_us", &p->pipelined_ii_us}}) {
    if (s.contains(key) && s[key].is_number()) *field = s[key].get<double>();
  }
  if (s.contains("solver") && s["solver"].is_object()) {
    p->solver = s["solver"].value("name", std::string());
    p->solver_status = s["solver"].value("status", std::string());
  }
  if (s.contains("platform") && s["platform"].is_object()) {
    p->platform = s["platform"].value("name", std::string());
    if (s["platform"].contains("overrides") && s["platform"]["overrides"].is_array()) {
      for (const auto& o : s["platform"]["overrides"]) {
        if (o.is_string()) p->overrides.push_back(o.get<std::string>());
      }
    }
  }
  if (s.contains("baselines") && s["baselines"].is_object()) {
    for (const auto& [key, v] : s["baselines"].items()) {
      if (v.is_number()) p->baselines[key] = v.get<double>();
    }
  }
  if (s.contains("requests") && s["requests"].is_array()) {
    for (const auto& q : s["requests"]) {
      PlanFileRequest r;
      if (q.is_object()) {
        r.file = q.value("file", std::string());
        r.sha256 = q.value("sha256", std::string());
        if (q.contains("operators") && q["operators"].is_number_integer()) r.operators = q["operators"].get<int>();
        if (q.contains("id_offset") && q["id_offset"].is_number_integer()) r.id_offset = q["id_offset"].get<int>();
      }
      p->requests.push_back(std::move(r));
    }
  }
}

}  // namespace

Result<PlanFile> ReadPlanFile(const nlohmann::json& s, const std::string& label) {
  const PlanFileError bad = [&](const std::string& where, const std::string& what) {
    return Error(ErrorCode::kParseError, "{}: {}: {}; give a schedule written by `hetplan partition --out`", label,
                 where, what);
  };
  if (!s.is_object() || s.value("format", "") != "hetplan-schedule") {
    return bad("format", "not a hetplan schedule file (\"format\": \"hetplan-schedule\" missing)");
  }
  PlanFile p;
  if (s.contains("version") && s["version"].is_number_integer()) p.version = s["version"].get<int>();
  const auto& model = s.value("model", nlohmann::json::object());
  if (!model.is_object() || !model.contains("file") || !model["file"].is_string()) {
    return bad("model.file", "missing");
  }
  p.model_file = model["file"].get<std::string>();
  p.model_name = model.value("name", std::string());
  p.model_sha256 = model.value("sha256", std::string());
  p.fusion = model.value("fusion", std::string("none"));
  HETPLAN_ASSIGN_OR_RETURN(p.assumptions, ReadPlanAssumptions(model, label));
  HETPLAN_RETURN_IF_ERROR(ReadDevices(s, bad, &p));
  HETPLAN_RETURN_IF_ERROR(ReadOperators(s, bad, &p));
  ReadEdgesAndSummary(s, &p);
  return p;
}

std::string ScheduleFileText(const nlohmann::json& schedule) { return schedule.dump(1) + "\n"; }

Status WriteScheduleOutputs(const nlohmann::json& schedule, const std::string& json_path,
                            const std::string& csv_path, const std::string& trace_path) {
  if (!json_path.empty()) HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(json_path, ScheduleFileText(schedule)));
  if (!csv_path.empty()) HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(csv_path, ScheduleJsonToCsv(schedule)));
  if (!trace_path.empty()) {
    HETPLAN_RETURN_IF_ERROR(WriteFileAtomic(trace_path, ScheduleJsonToChromeTrace(schedule).dump() + "\n"));
  }
  return Status::Ok();
}

}  // namespace hetplan
