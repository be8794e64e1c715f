// The run report (include/hetplan/deploy/run.h): the timed runs summarised
// against the plan's predictions, each measured segment's error explained
// from the host profile, and the report as JSON.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "deploy/run_internal.h"
#include "hetplan/cost/cost_table.h"
#include "hetplan/deploy/run.h"
#include "ort/session.h"

namespace hetplan {
namespace deploy_internal {
namespace {

using ort::Median;

nlohmann::json OptNum(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json FiniteOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

// Splits each measured segment's error into its PU's boundary cost and what
// its operators leave, from the host profile the plan was made from.
Status ExplainErrors(const Manifest& m, const std::string& path, RunReport* r) {
  HETPLAN_ASSIGN_OR_RETURN(CostTable t, LoadCostTable(path));
  HETPLAN_RETURN_IF_ERROR(CheckProvenance(t, m.model_sha256, path));
  std::map<std::pair<std::string, int>, const OpCost*> rows;
  for (const OpCost& c : t.ops) {
    if (c.op_id >= 0) rows.emplace(std::make_pair(c.pu, c.op_id), &c);
  }
  ErrorBreakdown b;
  b.costs_file = path;
  b.boundary_known = true;
  for (size_t s = 0; s < r->segments.size(); ++s) {
    SegmentRun& sr = r->segments[s];
    const ManifestSegment& seg = m.segments[s];
    if (sr.boundary_in) {
      b.transfer_predicted_us += seg.predicted_transfer_in_us;
      b.transfer_measured_us += sr.handoff_in_us;
    }
    if (!seg.measured) continue;
    double isolated = 0, in_context = 0;
    bool all = true;
    for (int op : seg.operators) {
      auto it = rows.find({seg.device, op});
      if (it == rows.end()) {
        all = false;
        break;
      }
      isolated += it->second->exec_us + it->second->dispatch_us;
      in_context += it->second->PlannedUs();
    }
    if (all) {
      sr.isolated_us = isolated;
      sr.in_context_us = in_context;
    }
    auto bu = t.boundary_us.find(seg.device);
    if (bu != t.boundary_us.end()) {
      sr.boundary_us = bu->second;
      b.boundary_us += bu->second;
    } else {
      b.boundary_known = false;
    }
    sr.ops_residue_us = sr.run_us - sr.predicted_us - sr.boundary_us.value_or(0);
    b.host_error_us += sr.run_us - sr.predicted_us;
    ++b.measured_segments;
  }
  b.ops_residue_us = b.host_error_us - b.boundary_us;
  r->breakdown = std::move(b);
  return Status::Ok();
}

// The timed runs summarised: each segment's medians against its prediction,
// the host, accelerator, hand-off and end-to-end times, the unsplit model's
// and its drift from the profile.
void SummariseRuns(const Manifest& m, const std::vector<Timeline>& timelines, const std::vector<double>& unsplit_us,
                   bool pu_threads, int threads, RunReport* r) {
  // Per segment.
  const size_t k = m.segments.size();
  std::vector<double> host_sum, emulated_sum, handoff_sum, entry, exit, wall;
  for (const Timeline& t : timelines) {
    double host = 0, emulated = 0, handoff = 0;
    for (size_t s = 0; s < k; ++s) {
      (m.segments[s].measured ? host : emulated) += t.run_us[s];
      if (s > 0) handoff += t.gap_us[s];
    }
    host_sum.push_back(host);
    emulated_sum.push_back(emulated);
    handoff_sum.push_back(handoff);
    entry.push_back(t.entry_us);
    exit.push_back(t.exit_us);
    wall.push_back(t.wall_us);
  }
  for (size_t s = 0; s < k; ++s) {
    const ManifestSegment& seg = m.segments[s];
    std::vector<double> us;
    for (const Timeline& t : timelines) us.push_back(t.run_us[s]);
    SegmentRun sr;
    sr.id = seg.id;
    sr.device = seg.device;
    sr.kind = seg.kind;
    sr.file = seg.file;
    sr.measured = seg.measured;
    sr.operators = static_cast<int>(seg.operators.size());
    sr.predicted_us = seg.predicted_us;
    sr.predicted_boundary_us = seg.predicted_boundary_us;
    sr.run_us = Median(us);
    sr.run_p10_us = ort::Quantile(us, 0.1);
    sr.run_p90_us = ort::Quantile(us, 0.9);
    sr.charged_us = seg.measured ? sr.run_us : seg.predicted_us;
    sr.request = seg.request;
    sr.planned_start_us = seg.planned_start_us;
    sr.planned_finish_us = seg.planned_finish_us;
    if (s > 0) {
      std::vector<double> gap;
      for (const Timeline& t : timelines) gap.push_back(t.gap_us[s]);
      sr.handoff_in_us = Median(gap);
      sr.boundary_in = m.segments[s - 1].device != seg.device;
    }
    if (pu_threads) {
      // On PU threads a segment waits for what it reads, not for the one
      // listed before it: a boundary is an input from another PU.
      sr.boundary_in = false;
      for (int d : seg.depends_on) sr.boundary_in = sr.boundary_in || m.segments[static_cast<size_t>(d)].device != seg.device;
      std::vector<double> start, end;
      for (const Timeline& t : timelines) {
        start.push_back(t.start_us[s]);
        end.push_back(t.end_us[s]);
      }
      sr.start_us = Median(start);
      sr.end_us = Median(end);
    }
    // The host's prediction: its operators and the boundary the planner charged.
    (seg.measured ? r->predicted_host_us : r->modelled_accelerator_us) += seg.predicted_us + seg.predicted_boundary_us;
    r->predicted_transfer_us += seg.predicted_transfer_in_us;
    r->segments.push_back(std::move(sr));
  }
  r->boundaries = m.boundaries;
  r->transitions = static_cast<int>(k) - 1;
  r->measured_host_us = Median(host_sum);
  if (r->predicted_host_us > 0) r->host_relative_error = r->measured_host_us / r->predicted_host_us - 1.0;
  r->emulated_accelerator_us = Median(emulated_sum);
  r->handoff_us = Median(handoff_sum);
  if (r->transitions > 0) r->handoff_per_boundary_us = r->handoff_us / r->transitions;
  r->entry_us = Median(entry);
  r->exit_us = Median(exit);
  r->split_wall_us = Median(wall);
  if (!unsplit_us.empty()) {
    r->unsplit_wall_us = Median(unsplit_us);
    if (r->transitions > 0) r->split_overhead_per_boundary_us = (r->split_wall_us - *r->unsplit_wall_us) / r->transitions;
    if (m.predicted_unsplit_us > 0 && threads == m.threads) {
      r->predicted_unsplit_us = m.predicted_unsplit_us;
      r->reference_drift = *r->unsplit_wall_us / m.predicted_unsplit_us - 1.0;
    }
  }
}

}  // namespace deploy_internal

Tolerance DefaultTolerance(int32_t onnx_elem_type) {
  using T = onnx::TensorProto;
  switch (onnx_elem_type) {
    case T::FLOAT: case T::DOUBLE: return {1e-4, 1e-5};
    case T::FLOAT16: return {1e-2, 1e-2};
    case T::BFLOAT16: return {5e-2, 5e-2};
    default: return {0, 0};
  }
}

using deploy_internal::FiniteOrNull;
using deploy_internal::OptNum;

nlohmann::json RunReportToJson(const RunReport& r) {
  nlohmann::json j;
  j["format"] = "hetplan-run-report";
  j["version"] = 1;
  j["dir"] = r.dir;
  j["model"] = r.model;
  j["executor"] = r.pu_threads ? "pu-threads" : r.resident ? "resident" : "load-per-run";
  if (r.requests > 1) j["requests"] = r.requests;
  j["runs"] = r.runs;
  j["warmup"] = r.warmup;
  j["threads"] = r.threads;
  j["cpu"] = r.cpu;
  j["runtime"] = r.runtime;
  if (!r.types_note.empty()) j["types_note"] = r.types_note;
  auto& segs = j["segments"] = nlohmann::json::array();
  for (const auto& s : r.segments) {
    segs.push_back({{"id", s.id},
                    {"device", s.device},
                    {"kind", s.kind},
                    {"file", s.file},
                    {"timing", s.measured ? "measured" : "modelled"},
                    {"operators", s.operators},
                    {"predicted_us", s.predicted_us},
                    {"predicted_boundary_us", s.predicted_boundary_us},
                    {"run_us", s.run_us},
                    {"run_p10_us", s.run_p10_us},
                    {"run_p90_us", s.run_p90_us},
                    {"charged_us", s.charged_us},
                    {"handoff_in_us", s.handoff_in_us},
                    {"boundary_in", s.boundary_in}});
    if (r.pu_threads) {
      segs.back()["request"] = s.request;
      segs.back()["start_us"] = s.start_us;
      segs.back()["end_us"] = s.end_us;
      segs.back()["planned_start_us"] = s.planned_start_us;
      segs.back()["planned_finish_us"] = s.planned_finish_us;
    }
  }
  if (r.breakdown) {
    for (size_t i = 0; i < r.segments.size(); ++i) {
      const auto& s = r.segments[i];
      if (!s.measured) continue;
      segs[i]["explain"] = {{"isolated_us", OptNum(s.isolated_us)},
                            {"in_context_us", OptNum(s.in_context_us)},
                            {"boundary_us", OptNum(s.boundary_us)},
                            {"ops_residue_us", OptNum(s.ops_residue_us)}};
    }
    const auto& b = *r.breakdown;
    j["explain"] = {{"costs", b.costs_file},
                    {"measured_segments", b.measured_segments},
                    {"host_error_us", b.host_error_us},
                    {"boundary_us", b.boundary_known ? nlohmann::json(b.boundary_us) : nlohmann::json(nullptr)},
                    {"ops_residue_us", b.ops_residue_us},
                    {"transfer_predicted_us", b.transfer_predicted_us},
                    {"transfer_measured_us", b.transfer_measured_us}};
  }
  if (r.pu_threads) j["pu_threads"] = deploy_internal::PuThreadReportToJson(*r.pu_threads);
  if (r.stream) {
    const StreamReport& st = *r.stream;
    auto num = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    j["stream"] = {{"inputs", st.inputs},
                   {"in_flight", st.in_flight},
                   {"predicted_ii_us", num(st.predicted_ii_us)},
                   {"predicted_latency_us", st.predicted_latency_us},
                   {"measured_ii_us", st.measured_ii_us},
                   {"inputs_per_s", st.inputs_per_s},
                   {"relative_error", num(st.relative_error)},
                   {"latency_median_us", st.latency_median_us},
                   {"latency_p95_us", st.latency_p95_us},
                   {"wall_ms", st.wall_ms},
                   {"one_at_a_time_per_s", num(st.one_at_a_time_per_s)},
                   {"unsplit_per_s", num(st.unsplit_per_s)},
                   {"outputs_checked", st.outputs_checked},
                   {"outputs_mismatched", st.outputs_mismatched}};
  }
  j["boundaries"] = r.boundaries;
  j["transitions"] = r.transitions;
  j["host"] = {{"predicted_us", r.predicted_host_us},
               {"measured_us", r.measured_host_us},
               {"relative_error", OptNum(r.host_relative_error)}};
  j["accelerators"] = {{"modelled_us", r.modelled_accelerator_us},
                       {"emulated_on_cpu_us", r.emulated_accelerator_us},
                       {"predicted_transfer_us", r.predicted_transfer_us}};
  j["handoff"] = {{"total_us", r.handoff_us},
                  {"per_boundary_us", OptNum(r.handoff_per_boundary_us)},
                  {"entry_us", r.entry_us},
                  {"exit_us", r.exit_us},
                  {"setup_ms", r.setup_ms}};
  j["end_to_end"] = {{"split_wall_us", r.split_wall_us},
                     {"unsplit_wall_us", OptNum(r.unsplit_wall_us)},
                     {"predicted_unsplit_us", OptNum(r.predicted_unsplit_us)},
                     {"reference_drift", OptNum(r.reference_drift)},
                     {"split_overhead_per_boundary_us", OptNum(r.split_overhead_per_boundary_us)},
                     {"predicted_sequential_us", r.predicted_sequential_us},
                     {"predicted_makespan_us", r.predicted_makespan_us},
                     {"estimated_us", r.estimated_us}};
  nlohmann::json outs = nlohmann::json::array();
  for (const auto& c : r.outputs) {
    outs.push_back({{"name", c.name},
                    {"elements", c.elements},
                    {"mismatches", c.mismatches},
                    {"max_abs_error", FiniteOrNull(c.max_abs_error)},
                    {"max_rel_error", FiniteOrNull(c.max_rel_error)},
                    {"match", c.match},
                    {"dtype", c.dtype},
                    {"rtol", c.rtol},
                    {"atol", c.atol},
                    {"tolerance", !c.default_tolerance          ? "given"
                                  : c.tolerance_dtype.empty() ? "default for its type"
                                                              : "default for " + c.tolerance_dtype +
                                                                    ", the narrowest type on its path"}});
  }
  j["check"] = {{"reference", r.reference_checked},
                {"outputs_match", r.reference_checked ? nlohmann::json(r.outputs_match) : nlohmann::json(nullptr)},
                {"rtol", OptNum(r.rtol)},
                {"atol", OptNum(r.atol)},
                {"outputs", std::move(outs)}};
  return j;
}

}  // namespace hetplan
