// Running a split plan (docs/deployment.md): reads DIR/manifest.json written
// by `hetplan split`, executes the segments in order with ONNX Runtime on
// this machine, and compares what it measures with what the schedule
// predicted.
//
// Segments on a CPU run for real and are timed. Segments on an accelerator
// this machine does not have (CIM, GPU, NPU) run functionally on the CPU, so
// that every tensor flows for real, but their time is charged from the
// schedule's cost model; the report keeps measured and modelled time apart.
// The unsplit model runs with ONNX Runtime on the same random inputs and the
// final outputs must agree within a floating-point tolerance.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetplan/deploy/manifest.h"
#include "hetplan/util/status.h"

namespace hetplan {

// --- running it ---------------------------------------------------------------

struct RunOptions {
  int runs = 20;   // timed runs (medians are reported)
  int warmup = 3;  // untimed runs first
  // Resident executor: one session per segment created once and reused,
  // tensors handed over through IoBinding with pre-allocated OrtValues (the
  // producer's output buffer is bound as the consumer's input: no copy, no
  // allocation per run). Otherwise every run creates every session anew and
  // passes tensors through std::vector buffers (a copy out and a copy in).
  bool resident = true;
  int threads = 0;                  // ORT intra-op threads; 0 = the manifest's (the planned host's)
  bool reference = true;            // also run the unsplit model and compare outputs
  std::string model_path;           // the unsplit model; empty = the manifest's model.file
  // |split − ref| ≤ atol + rtol·|ref| (floating-point outputs); unset: each
  // output's element type's default (DefaultTolerance).
  std::optional<double> rtol, atol;
  uint64_t seed = 0x6865747061;     // random inputs: floats uniform in [−1, 1], integers 0
  // Plans whose segments all run here and that use two or more PUs, two
  // requests or pinned PUs run on the PU-thread executor (one pinned thread
  // per PU, segments concurrently where the plan overlaps them). false: the
  // resident or load-per-run executor, one segment after another on the
  // calling thread (not for two requests).
  bool pu_threads = true;
  // The host profile the plan was made from (`hetplan profile --json`, or the
  // profile cache's file): with it the report explains each measured
  // segment's error by operator costs and the PU's boundary cost.
  std::string costs_path;
  // > 0: afterwards, stream this many inputs through the plan (docs/throughput.md):
  // each PU's segments on its own pinned thread, several inputs in flight,
  // every input different, each input's outputs checked against the unsplit
  // model's. Every segment must run here (a plan on PUs this machine has).
  int stream = 0;
};

// `run --stream N`: inputs per second and per-input latency, measured, against
// the plan's prediction, the same plan one input at a time and the unsplit
// model.
struct StreamReport {
  int inputs = 0;
  int in_flight = 0;                   // buffers per hand-off tensor: inputs that may be in flight at once
  std::optional<double> predicted_ii_us;  // the schedule's II (a stream's plan); else the makespan
  double predicted_latency_us = 0;     // the schedule's makespan (one input)
  double measured_ii_us = 0;           // steady state: between completions, after the first fifth
  double inputs_per_s = 0;             // 10^6 / measured_ii_us
  double latency_median_us = 0, latency_p95_us = 0;  // first segment's start to last segment's end
  double wall_ms = 0;                  // the whole stream
  std::optional<double> one_at_a_time_per_s;  // the same plan, one input per pass (PU-thread executor)
  std::optional<double> unsplit_per_s;        // the unsplit model, one input after another
  std::optional<double> relative_error;       // measured_ii / predicted_ii − 1
  int outputs_checked = 0;             // inputs whose outputs were compared with the unsplit model's
  int outputs_mismatched = 0;
};

struct SegmentRun {
  int id = 0;
  std::string device, kind, file;
  bool measured = true;
  int operators = 0;
  double predicted_us = 0;            // its operators
  double predicted_boundary_us = 0;   // the boundary cost its plan charged it (--boundary-cost fitted)
  double run_us = 0, run_p10_us = 0, run_p90_us = 0;  // wall time of Session::Run (median, p10, p90)
  double charged_us = 0;                              // run_us when measured, predicted_us when modelled
  double handoff_in_us = 0;  // median executor time from the previous segment's Run to this one's (0 for the first)
  bool boundary_in = false;  // the previous segment runs on another PU
  // PU-thread executor: median start and end from the pass's start, and the plan's.
  int request = 0;
  double start_us = 0, end_us = 0;
  double planned_start_us = 0, planned_finish_us = 0;
  // With RunOptions::costs_path, for measured segments: the table's Σ over
  // the segment's operators timed alone (exec_us) and in context
  // (in_context_us + framework_us), its PU's boundary cost, and what the
  // operators leave unexplained: run_us − predicted_us − boundary_us.
  std::optional<double> isolated_us, in_context_us, boundary_us, ops_residue_us;
};

// The host error split into its parts (RunOptions::costs_path): Σ over
// measured segments of run − predicted = boundary + operator residue; and the
// hand-offs into segments from another PU, predicted against measured.
struct ErrorBreakdown {
  std::string costs_file;
  int measured_segments = 0;
  double host_error_us = 0;         // Σ (run_us − predicted_us) over measured segments
  double boundary_us = 0;           // Σ of their PUs' boundary cost
  double ops_residue_us = 0;        // host_error_us − boundary_us
  double transfer_predicted_us = 0;  // Σ predicted_transfer_in over segments entered across PUs
  double transfer_measured_us = 0;   // Σ their measured handoff_in
  bool boundary_known = false;       // the table has a boundary row for every measured PU
};

// The PU-thread executor's account of a run (medians over the timed runs).
struct PuRun {
  std::string name, provider;
  std::vector<int> cores;
  int threads = 1;
  int segments = 0;
  double predicted_busy_us = 0;  // Σ its segments' predictions
  double busy_us = 0;            // Σ its segments' Session::Run
};

struct RequestRun {
  int request = 0;
  double predicted_finish_us = 0;  // its last operator's planned finish
  double finish_us = 0;            // its last segment's end from the pass's start
  std::optional<double> relative_error;
};

// A dependency between segments on different PUs: the consumer's start after
// the producer's end (the hand-off: waking the consumer's thread, plus any
// wait for its PU or its other inputs).
struct BoundaryRun {
  int from = 0, to = 0;
  std::string from_device, to_device;
  int64_t bytes = 0;      // tensors handed over
  double gap_us = 0;      // median consumer start − producer end
  bool critical = false;  // in most runs the producer was the consumer's last input to finish
};

struct PuThreadReport {
  std::vector<PuRun> pus;
  std::vector<RequestRun> requests;
  double predicted_makespan_us = 0;  // the schedule's
  double makespan_us = 0, makespan_p10_us = 0, makespan_p90_us = 0;  // pass start to its last segment's end
  std::optional<double> relative_error;  // measured / predicted − 1
  double overlap_us = 0;  // median time during which two or more PUs ran a segment at once
  std::vector<BoundaryRun> boundaries;
  // Every timed run: (start, end) of each segment, µs from the pass's start.
  std::vector<std::vector<std::pair<double, double>>> runs;
};

// The output check's default tolerance for an ONNX element type: float32
// and float64 rtol 1e-4, atol 1e-5; float16 rtol 1e-2, atol 1e-2 (a split
// plan rounds each segment boundary to float16, where the unsplit model keeps
// float32 inside ONNX Runtime's fused chains: an output near zero inherits
// the rounding of values of magnitude 1); bfloat16 rtol 5e-2, atol 5e-2;
// other types compare exactly (0, 0).
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance DefaultTolerance(int32_t onnx_elem_type);

struct OutputCheck {
  std::string name;
  std::string dtype;             // the output's element type ("float16")
  // The narrower floating type computed through on the way to the output,
  // whose default tolerance applies ("float16" for a float32 output of
  // float16 layers between Casts); "" when the output's own type's applies.
  std::string tolerance_dtype;
  double rtol = 0, atol = 0;     // the tolerance it was judged with
  bool default_tolerance = true;  // from its type (DefaultTolerance), not --rtol/--atol
  int64_t elements = 0;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool match = true;
};

struct RunReport {
  std::string dir, model;
  bool resident = true;
  int runs = 0, warmup = 0, threads = 1;
  std::string cpu, runtime;
  // Set when the plan ran in other types than its own: a bfloat16 plan as
  // float32 copies, where ONNX Runtime's CPU has no bfloat16 kernel.
  std::string types_note;
  std::vector<SegmentRun> segments;
  int boundaries = 0;   // consecutive segments on different PUs
  int transitions = 0;  // consecutive segment pairs (segments − 1)

  // Host (CPU segments): the schedule's Σ cost vs Σ measured Session::Run.
  double predicted_host_us = 0;
  double measured_host_us = 0;                // median over runs of the per-run sum
  std::optional<double> host_relative_error;  // measured / predicted − 1
  // Accelerator segments: charged from the cost model; their functional run
  // on this CPU is reported but not charged.
  double modelled_accelerator_us = 0;
  double emulated_accelerator_us = 0;
  double predicted_transfer_us = 0;  // the schedule's transfers between segments on different PUs

  // The executor between segments: time from the end of one segment's Run
  // to the start of the next one's (session creation and copies in the
  // non-resident mode; binding bookkeeping when resident).
  double handoff_us = 0;                          // median over runs of the sum over transitions
  std::optional<double> handoff_per_boundary_us;  // handoff_us / transitions
  double entry_us = 0, exit_us = 0;               // before the first and after the last segment's Run
  double setup_ms = 0;                            // creating the resident sessions, once

  // End to end on this CPU (every segment run, accelerators emulated) vs the
  // unsplit model in one resident session: what splitting costs.
  double split_wall_us = 0;
  std::optional<double> unsplit_wall_us;
  // The drift of the reference: the unsplit model's median now against the
  // profile's prediction of it (the manifest's predicted.unsplit_us), when the
  // plan's CPU was measured and runs with the threads it was measured with.
  // The host errors include it: a machine slower than at profiling time
  // makes every measured segment slower too.
  std::optional<double> predicted_unsplit_us;
  std::optional<double> reference_drift;  // unsplit_wall_us / predicted_unsplit_us − 1
  std::optional<double> split_overhead_per_boundary_us;  // (split − unsplit) / transitions

  double predicted_sequential_us = 0;  // Σ segments' predictions + transfers
  double predicted_makespan_us = 0;    // the schedule's (with PU parallelism)
  double estimated_us = 0;             // measured host + modelled accelerators + predicted transfers + hand-offs

  // Set when the PU-thread executor ran the plan.
  std::optional<PuThreadReport> pu_threads;
  std::optional<ErrorBreakdown> breakdown;  // with RunOptions::costs_path
  std::optional<StreamReport> stream;       // with RunOptions::stream
  int requests = 1;

  bool reference_checked = false;
  bool outputs_match = false;
  std::optional<double> rtol, atol;  // as given; unset: each output's type's default
  std::vector<OutputCheck> outputs;
};

// Loads the manifest, creates the sessions, runs warmup + runs times and
// reports. A manifest or file problem, a model ONNX Runtime refuses, or a
// session whose inputs/outputs disagree with the manifest (names, dtypes,
// shapes) is an error naming the segment and its file. Outputs that differ
// from the unsplit model are an outcome (outputs_match = false), not an
// error. ORT exceptions never escape.
Result<RunReport> RunDeployment(const std::string& dir, const RunOptions& options = {});

nlohmann::json RunReportToJson(const RunReport& report);

}  // namespace hetplan
