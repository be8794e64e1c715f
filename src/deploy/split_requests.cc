// Splitting plans that run on PU threads (include/hetplan/deploy/split.h):
// the cuts that keep segments at their planned times (TimedCuts), and plans
// of two requests of one model (SplitRequests).
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "deploy/split_internal.h"
#include "hetplan/util/sha256.h"

namespace hetplan {
namespace {

// Planned times compare with the validator's relative tolerance.
bool Later(double a, double b) { return a > b + 1e-6 * std::max(1.0, std::fabs(b)); }

}  // namespace

std::vector<bool> TimedCuts(const OpGraph& g, const std::vector<int>& device_of, const std::vector<int>& order,
                            const std::vector<double>& start_us, const std::vector<double>& finish_us) {
  const size_t n = static_cast<size_t>(g.size());
  std::vector<bool> cuts(n, false);
  if (device_of.size() != n || order.size() != n || start_us.size() != n || finish_us.size() != n) return cuts;
  std::vector<bool> feeds_other(n, false);  // another PU reads its output
  for (const Edge& e : g.edges()) {
    if (device_of[static_cast<size_t>(e.from)] != device_of[static_cast<size_t>(e.to)]) {
      feeds_other[static_cast<size_t>(e.from)] = true;
    }
  }
  std::map<int, int> last;             // per device: its latest operator so far
  std::map<int, double> segment_start;  // per device: planned start of its open segment
  for (int v : order) {
    const size_t uv = static_cast<size_t>(v);
    const int d = device_of[uv];
    auto it = last.find(d);
    bool cut = it == last.end() || feeds_other[static_cast<size_t>(it->second)];
    if (!cut) {
      for (int u : g.predecessors(v)) {
        const size_t uu = static_cast<size_t>(u);
        if (device_of[uu] != d && Later(finish_us[uu], segment_start[d])) {
          cut = true;
          break;
        }
      }
    }
    if (cut) segment_start[d] = start_us[uv];
    cuts[uv] = cut;
    last[d] = v;
  }
  return cuts;
}

namespace deploy_internal {
namespace {

Status Bad(const std::string& label, const std::string& where, const std::string& what) {
  return Error(ErrorCode::kParseError, "{}: {}: {}; give a two-request schedule written by hetplan map --mode "
               "concurrent", label, where, what);
}

// One request's operators and edges as a plan of its own (ids from 0).
PlanFile RequestPlan(const PlanFile& all, int request, int offset, int n) {
  PlanFile sub = all;
  sub.requests.clear();
  sub.operators.clear();
  for (int id = offset; id < offset + n && id < static_cast<int>(all.operators.size()); ++id) {
    PlanFileOperator op = all.operators[static_cast<size_t>(id)];
    if (op.request != request) continue;
    op.request = 0;
    sub.operators.push_back(std::move(op));
  }
  sub.edges.clear();
  for (const PlanFileEdge& e : all.edges) {
    const int from = e.from - offset, to = e.to - offset;
    if (from < 0 || from >= n || to < 0 || to >= n) continue;
    PlanFileEdge edge = e;
    edge.from = from;
    edge.to = to;
    sub.edges.push_back(edge);
  }
  return sub;
}

// Each request's id_offset, checked: two requests of `model`, each with as
// many operators as `model` imports as.
Result<std::vector<int>> RequestOffsets(const LoadedModel& model, const PlanFile& schedule,
                                        const std::string& schedule_label) {
  const std::vector<PlanFileRequest>& requests = schedule.requests;
  const int n = model.graph.size();
  if (requests.size() != 2) return Bad(schedule_label, "requests", fmt::format("{} requests, not 2", requests.size()));
  std::vector<int> offset(2);
  for (int r = 0; r < 2; ++r) {
    const PlanFileRequest& q = requests[static_cast<size_t>(r)];
    if (!q.id_offset) return Bad(schedule_label, fmt::format("requests[{}].id_offset", r), "missing");
    offset[static_cast<size_t>(r)] = *q.id_offset;
    if (!q.sha256.empty() && q.sha256 != model.sha256) {
      return Error(ErrorCode::kUnsupported,
                   "{}: requests[{}] is another model ({}); split takes two requests of one model: plan them "
                   "with hetplan map --mode concurrent without --second-model",
                   schedule_label, r, q.file.empty() ? std::string("?") : q.file);
    }
    if (q.operators.value_or(n) != n) {
      return Bad(schedule_label, fmt::format("requests[{}].operators", r),
                 fmt::format("{} operators, but {} imports as {}", *q.operators, model.path, n));
    }
  }
  return offset;
}

// Per request, the operators (local ids) that open a segment: operators of
// both requests on one PU run in planned order, so a run of one request's
// operators that the other request interrupts is cut there.
Result<std::vector<std::vector<bool>>> InterleavingCuts(const PlanFile& schedule, const std::vector<int>& offset,
                                                        int n, const std::string& schedule_label) {
  std::vector<std::vector<bool>> cuts(2, std::vector<bool>(static_cast<size_t>(n), false));
  std::map<int, std::vector<std::tuple<double, int, int>>> by_device;  // (start, request, local id)
  for (size_t id = 0; id < schedule.operators.size(); ++id) {
    const PlanFileOperator& o = schedule.operators[id];
    const int r = o.request;
    if (r < 0 || r > 1) return Bad(schedule_label, "operators[].request", fmt::format("{} is not 0 or 1", r));
    const int local = static_cast<int>(id) - offset[static_cast<size_t>(r)];
    if (local < 0 || local >= n) {
      return Bad(schedule_label, "operators[].id", fmt::format("{} is outside request {}", id, r));
    }
    by_device[o.device_index].emplace_back(o.start_us, r, local);
  }
  for (auto& [device, ops] : by_device) {
    std::sort(ops.begin(), ops.end());
    for (size_t i = 1; i < ops.size(); ++i) {
      if (std::get<1>(ops[i]) != std::get<1>(ops[i - 1])) {
        cuts[static_cast<size_t>(std::get<1>(ops[i]))][static_cast<size_t>(std::get<2>(ops[i]))] = true;
      }
    }
  }
  return cuts;
}

// One request's segment in the merged order.
struct RequestSegment {
  int request, local;
  double start;
};

// Both requests' segments in one order.
struct MergedOrder {
  std::vector<RequestSegment> nodes;
  std::vector<std::vector<int>> index;  // (request, local) → node
  std::vector<int> global;              // node → its merged id
  std::vector<int> order;               // merged id → node
  int IdOf(int request, int local) const {
    return global[static_cast<size_t>(index[static_cast<size_t>(request)][static_cast<size_t>(local)])];
  }
};

// Both requests' segments in one topological order by planned start (ties:
// request, then the request's own order), so that each PU thread, taking
// its segments in manifest order, runs them as planned.
Result<MergedOrder> MergeOrder(const std::vector<SplitResult>& parts, const std::string& schedule_label) {
  MergedOrder mo;
  auto& nodes = mo.nodes;
  auto& index = mo.index;
  index.resize(2);
  for (int r = 0; r < 2; ++r) {
    const auto& segs = parts[static_cast<size_t>(r)].manifest["segments"];
    for (size_t s = 0; s < segs.size(); ++s) {
      index[static_cast<size_t>(r)].push_back(static_cast<int>(nodes.size()));
      nodes.push_back({r, static_cast<int>(s), segs[s].value("planned_start_us", 0.0)});
    }
  }
  std::vector<int> indegree(nodes.size(), 0);
  std::vector<std::vector<int>> succ(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const size_t r = static_cast<size_t>(nodes[i].request);
    const auto& seg = parts[r].manifest["segments"][static_cast<size_t>(nodes[i].local)];
    for (const auto& d : seg["depends_on"]) {
      succ[static_cast<size_t>(index[r][d.get<size_t>()])].push_back(static_cast<int>(i));
      ++indegree[i];
    }
  }
  auto later = [&](int a, int b) {
    const RequestSegment &x = nodes[static_cast<size_t>(a)], &y = nodes[static_cast<size_t>(b)];
    return std::tie(x.start, x.request, x.local) > std::tie(y.start, y.request, y.local);
  };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (indegree[i] == 0) ready.push(static_cast<int>(i));
  }
  mo.global.assign(nodes.size(), -1);
  while (!ready.empty()) {
    const int u = ready.top();
    ready.pop();
    mo.global[static_cast<size_t>(u)] = static_cast<int>(mo.order.size());
    mo.order.push_back(u);
    for (int w : succ[static_cast<size_t>(u)]) {
      if (--indegree[static_cast<size_t>(w)] == 0) ready.push(w);
    }
  }
  if (mo.order.size() != nodes.size()) {
    return Error(ErrorCode::kInternal, "{}: the two requests' segments have a cycle (a bug in split)", schedule_label);
  }
  return mo;
}

// The manifest entry of `node` (a segment of `part`'s request) as segment
// `id` of the merged split, its references renumbered; appends its file,
// re-tagged with its id and request, to `out`.
Result<nlohmann::json> MergedSegment(const SplitResult& part, const RequestSegment& node, int id, const MergedOrder& mo,
                                     const std::string& schedule_label, SplitResult* out) {
  nlohmann::json seg = part.manifest["segments"][static_cast<size_t>(node.local)];
  seg["id"] = id;
  seg["request"] = node.request;
  const std::string file =
      fmt::format("segment_{:03d}_r{}_{}.onnx", id, node.request, seg["device"].get<std::string>());
  seg["file"] = file;
  for (auto& d : seg["depends_on"]) d = mo.IdOf(node.request, d.get<int>());
  for (auto& t : seg["inputs"]) {
    if (t["from"].is_number_integer()) t["from"] = mo.IdOf(node.request, t["from"].get<int>());
  }
  for (auto& t : seg["outputs"]) {
    for (auto& to : t["to"]) to = mo.IdOf(node.request, to.get<int>());
  }
  // The file says which segment and request it is.
  onnx::ModelProto proto;
  if (!proto.ParseFromString(part.files[static_cast<size_t>(node.local)].second)) {
    return Error(ErrorCode::kInternal, "{}: segment {} of request {} does not parse again", schedule_label,
                 node.local, node.request);
  }
  for (auto& prop : *proto.mutable_metadata_props()) {
    if (prop.key() == "hetplan.segment") prop.set_value(std::to_string(id));
  }
  auto* prop = proto.add_metadata_props();
  prop->set_key("hetplan.request");
  prop->set_value(std::to_string(node.request));
  // Its external weights move with it, under its new name.
  if (seg.contains("data_file")) {
    const std::string old_data = seg["data_file"].get<std::string>();
    seg["data_file"] = file + ".data";
    RenameExternalData(&proto, file + ".data");
    for (const auto& [name, data] : part.data_files) {
      if (name == old_data) out->data_files.emplace_back(file + ".data", data);
    }
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return Error(ErrorCode::kLimitExceeded, "{}: segment {} cannot be serialised", schedule_label, id);
  }
  seg["sha256"] = Sha256Hex(bytes);
  out->files.emplace_back(file, std::move(bytes));
  return seg;
}

}  // namespace

Result<SplitResult> SplitRequests(const LoadedModel& model, const PlanFile& schedule, int violations,
                                  const std::string& schedule_label, const SplitOptions& options) {
  const int n = model.graph.size();
  HETPLAN_ASSIGN_OR_RETURN(const std::vector<int> offset, RequestOffsets(model, schedule, schedule_label));
  HETPLAN_ASSIGN_OR_RETURN(const std::vector<std::vector<bool>> cuts,
                           InterleavingCuts(schedule, offset, n, schedule_label));
  std::vector<SplitResult> parts;
  for (int r = 0; r < 2; ++r) {
    const PlanFile sub = RequestPlan(schedule, r, offset[static_cast<size_t>(r)], n);
    auto part = SplitOneRequest(model, sub, violations, fmt::format("{} (request {})", schedule_label, r),
                                options, cuts[static_cast<size_t>(r)]);
    if (!part.ok()) return part.status();
    parts.push_back(std::move(part).value());
  }
  HETPLAN_ASSIGN_OR_RETURN(const MergedOrder mo, MergeOrder(parts, schedule_label));

  SplitResult out;
  nlohmann::json manifest = parts[0].manifest;
  nlohmann::json segments = nlohmann::json::array();
  for (int u : mo.order) {
    const RequestSegment& node = mo.nodes[static_cast<size_t>(u)];
    const int id = static_cast<int>(segments.size());
    HETPLAN_ASSIGN_OR_RETURN(nlohmann::json seg, MergedSegment(parts[static_cast<size_t>(node.request)], node, id, mo,
                                                               schedule_label, &out));
    segments.push_back(std::move(seg));
  }
  for (auto& t : manifest["outputs"]) {
    if (t.contains("segment") && t["segment"].is_number_integer()) t["segment"] = mo.IdOf(0, t["segment"].get<int>());
  }
  manifest["segments"] = std::move(segments);
  manifest["requests"] = 2;
  manifest["boundaries"] = parts[0].boundaries + parts[1].boundaries;
  manifest["handoffs"] = parts[0].manifest.value("handoffs", 0) + parts[1].manifest.value("handoffs", 0);
  for (const char* key : {"host_us", "accelerator_us", "transfer_us", "sequential_us"}) {
    manifest["predicted"][key] =
        parts[0].manifest["predicted"].value(key, 0.0) + parts[1].manifest["predicted"].value(key, 0.0);
  }
  manifest["schedule"]["file"] = schedule_label;
  out.manifest = std::move(manifest);
  out.segments = static_cast<int>(mo.order.size());
  out.boundaries = parts[0].boundaries + parts[1].boundaries;
  return out;
}

}  // namespace deploy_internal
}  // namespace hetplan
