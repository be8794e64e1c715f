// Splitting a plan into per-PU sub-models (docs/deployment.md).
//
// A schedule file assigns every operator to a PU. Deployment needs one
// program per PU invocation: the operators are grouped into segments (a run
// of operators on one PU that a runtime can call as one sub-model), each
// segment becomes a valid ONNX model of its own with named, statically
// shaped inputs and outputs at every boundary, and a manifest records the
// segments in execution order, their PUs, the tensors they exchange, their
// dependencies and the time the schedule predicts for each of them.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/deploy/manifest.h"
#include "hetplan/graph/onnx_import.h"
#include "hetplan/graph/op_graph.h"
#include "hetplan/plan/plan_file.h"
#include "hetplan/util/status.h"

namespace hetplan {

// One segment before any ONNX is written: which operators, on which PU.
struct SegmentPlan {
  int device = -1;              // index into the caller's PU list
  std::vector<int> operators;   // operator ids, in execution order
  std::vector<int> depends_on;  // segment indices (into the returned vector)
};

// Groups operators into segments. `order` is the execution order (a
// permutation of 0..n-1 that must be topological: every operator after its
// predecessors) and `device_of[v]` the PU of operator v.
//
// Operators are taken in `order`; each one joins the most recent segment of
// its PU unless that would close a cycle between segments (a predecessor of
// the operator sits in a segment that itself depends on that segment), in
// which case it opens a new segment. Consecutive operators on one PU thus
// always share a segment, and an operator on a PU that runs concurrently
// with another PU's work (a CIM layer in a parallel branch) rejoins its
// PU's open segment instead of cutting the other PU's run in two. The
// returned segments are in a topological order of the segment DAG (ties:
// creation order), so running them one after the other respects every data
// dependency. Errors: sizes that disagree, `order` not a permutation or not
// topological (the message names both operators).
//
// `cut_before`, when given (one flag per operator), makes a flagged operator
// open a new segment of its PU instead of joining the open one.
Result<std::vector<SegmentPlan>> PlanSegments(const OpGraph& g, const std::vector<int>& device_of,
                                              const std::vector<int>& order,
                                              const std::vector<bool>& cut_before = {});

// The cuts that let every segment of a plan whose PUs all run for real start
// at its planned time on its PU's thread (`hetplan run`'s PU-thread
// executor): an operator opens a new segment after an operator of its PU
// whose output another PU reads (the other PU must not wait for the rest),
// and when it reads another PU's output that the plan has not finished by
// the time its PU's open segment starts (the segment would wait for it at
// its start). Every segment then depends only on segments that the plan
// finishes before it starts, so PU threads that take their segments in
// manifest order never deadlock and start them as planned. `start_us` and
// `finish_us` are the schedule's, per operator; `order` as for PlanSegments.
std::vector<bool> TimedCuts(const OpGraph& g, const std::vector<int>& device_of, const std::vector<int>& order,
                            const std::vector<double>& start_us, const std::vector<double>& finish_us);

struct SplitOptions {
  // Overrides the schedule's model.file (the SHA-256 must still match).
  std::string model_path;
  // Static shapes for symbolic graph inputs. The schedule records those it
  // was planned with (model.input_shapes); these override them.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Run onnx::checker::check_model on every sub-model.
  bool check = true;
  // What `hetplan validate` found in the plan's file (ValidateScheduleJson's
  // violations): the manifest records it. SplitScheduleFile sets it.
  int schedule_violations = 0;
  // Cut the model as the file has it (LoadedModel::source, loaded with
  // keep_source) rather than as planned: the nodes import folded away (shape
  // computations) are re-included in each segment that reads them and every
  // boundary dim is left unknown, so that the segments run at other lengths
  // of the dims the plan fixed (a decoder's prompt and past). The manifest
  // records the planned shapes and says so (Manifest::dynamic_shapes).
  bool dynamic_shapes = false;
  // With dynamic_shapes: the boundary tensors' shapes in another phase of the
  // same model (SplitGenerationFile: the other phase's planned shapes). A dim
  // the two agree on stays static (ONNX Runtime's shape inference of some
  // com.microsoft operators reads an unknown dim as 0); the others, and every
  // dim of a tensor not listed, are left unknown.
  std::map<std::string, std::vector<int64_t>> other_phase_shapes;
};

// A split held in memory: what WriteSplit writes.
struct SplitResult {
  nlohmann::json manifest;                                 // DIR/manifest.json
  std::vector<std::pair<std::string, std::string>> files;  // (file name, serialised ONNX), per segment
  // (file name, external weights) of the segments whose weights were the
  // model's external data (ManifestSegment::data_file).
  std::vector<std::pair<std::string, std::string>> data_files;
  int segments = 0;
  int boundaries = 0;  // consecutive segments (in execution order) on different PUs
};

// Splits `model` as `plan` (a schedule file read back, ReadPlanFile) assigns
// it. A plan whose used PUs all run here (CPUs, `cost: profile`
// PUs) and that uses two or more of them is cut with TimedCuts. A plan of
// two requests of the model (`requests` in the schedule) is split request by
// request into one manifest whose segments name their request, in the order
// of their planned starts. The model must be the one the schedule was made for: the
// operator count and names are checked (the SHA-256 is the caller's
// business, see SplitScheduleFile). `schedule_label` names the schedule in
// errors and in the manifest. Errors name the schedule, the operator or the
// segment and say what to do; nothing is written.
Result<SplitResult> SplitModel(const LoadedModel& model, const PlanFile& plan, const std::string& schedule_label,
                               const SplitOptions& options = {});

// The model at `path` imported as the plan says it was planned (fusion,
// shapes, values, branches, sample inputs; `shapes` added, the plan's
// winning where both name an input). `label` names the schedule in errors.
// `keep_source` keeps the file's own graph too (SplitOptions::dynamic_shapes).
Result<LoadedModel> LoadPlannedModel(const PlanFile& plan, const std::string& path,
                                     const std::string& label,
                                     const std::map<std::string, std::vector<int64_t>>& shapes = {},
                                     bool keep_source = false);

// Reads the schedule file, reloads its model (model.file resolved against
// the working folder, then the schedule's folder; options.model_path
// overrides it) at the schedule's fusion level, checks its SHA-256, splits
// it and writes the result to `out_dir`.
Result<SplitResult> SplitScheduleFile(const std::string& schedule_path, const std::string& out_dir,
                                      const SplitOptions& options = {});

// Writes the sub-models and then manifest.json (each file atomically) into
// `out_dir`, creating it; removes segment files of an earlier split that the
// new manifest does not name.
Status WriteSplit(const SplitResult& split, const std::string& out_dir);

}  // namespace hetplan
