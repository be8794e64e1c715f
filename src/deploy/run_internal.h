// What the executors share (run.cc: the resident and load-per-run executors
// and the output check; pu_executor.cc: the PU-thread executor;
// run_report.cc: the report). Internal to the deploy module.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetplan/deploy/manifest.h"
#include "hetplan/deploy/run.h"
#include "hetplan/util/status.h"
#include "ort/pinning.h"
#include "ort/session.h"

namespace hetplan::deploy_internal {

// A host tensor: what the executors hand back as outputs.
struct Buffer {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

ONNXTensorElementDataType OrtType(const std::string& dtype);
// A zeroed tensor of the manifest tensor's dtype and shape.
Ort::Value NewValue(const ManifestTensor& t);
Buffer ToBuffer(const Ort::Value& v);

// A segment's file, checked against the manifest's SHA-256 (an error that
// says to split again when it changed).
Result<std::string> ReadSegmentBytes(const Manifest& m, const ManifestSegment& seg);

// A segment's session from its bytes, its inputs and outputs checked against
// the manifest.
Result<Ort::Session> CreateSession(Ort::Env& env, const Manifest& m, const ManifestSegment& seg,
                                   const std::string& bytes, const Ort::SessionOptions& so);

// --- bfloat16 plans (run_float32.cc) ----------------------------------------------

// `bytes` (a model) with every bfloat16 as float32 (graph/float32_copy.h).
Result<std::string> Float32Bytes(const std::string& bytes, const std::string& external_data_dir,
                                 const std::string& label);

// ONNX Runtime's CPU provider has no bfloat16 kernels: when a segment with
// bfloat16 tensors cannot load for that, every segment runs as a float32
// copy (`bytes` replaced, `m`'s bfloat16 tensors made float32), as the
// unsplit model then must (OpenReference). Returns the note that says so;
// "" when the plan runs in its own types.
Result<std::string> Float32Fallback(Ort::Env& env, Manifest* m, std::vector<std::string>* bytes,
                                    const Ort::SessionOptions& so);

// One pass over all segments.
struct Timeline {
  std::vector<double> run_us;  // per segment
  std::vector<double> gap_us;  // per segment: the executor's time before its Run (0 for the first)
  double entry_us = 0, exit_us = 0, wall_us = 0;
  // PU-thread executor: each segment's start and end, µs from the pass's start.
  std::vector<double> start_us, end_us;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // One pass over all segments; throws std::exception (the caller catches).
  virtual Timeline RunOnce() = 0;
  // The model outputs of the last pass, by name (RequestTensorKey).
  virtual std::map<std::string, Buffer> Outputs() const = 0;
};

// The name a tensor of `request` goes by where the requests share a map:
// its own for request 0, "<name>@request<r>" otherwise.
std::string RequestTensorKey(int request, const std::string& name);

// --- the report (run_report.cc) ----------------------------------------------------

// The timed runs summarised: each segment's medians against its prediction,
// the host, accelerator, hand-off and end-to-end times, the unsplit model's
// and its drift from the profile.
void SummariseRuns(const Manifest& m, const std::vector<Timeline>& timelines, const std::vector<double>& unsplit_us,
                   bool pu_threads, int threads, RunReport* r);

// Splits each measured segment's error into its PU's boundary cost and what
// its operators leave, from the host profile the plan was made from.
Status ExplainErrors(const Manifest& m, const std::string& path, RunReport* r);

// --- the PU-thread executor (pu_executor.cc) ------------------------------------

// The ONNX Runtime configuration a device's segments run with (the
// manifest's, `threads_override` > 0 replacing its threads).
ort::PuRuntime RuntimeOf(const Manifest& m, const std::string& device, int threads_override);
// One pinned worker thread per PU in `used` and its session options, the
// provider and cores checked first (each refused in one line).
Status StartPuWorkers(const Manifest& m, const std::vector<std::string>& used, int threads_override,
                      std::vector<std::unique_ptr<ort::PinnedWorker>>* workers,
                      std::vector<Ort::SessionOptions>* options);
// The PUs the segments use, in order of first use, and each segment's PU.
std::vector<std::string> UsedDevices(const Manifest& m, std::vector<int>* device_of);

// Whether `m` runs on PU threads: every segment runs here, and the plan has
// two requests, uses two or more PUs, or names a PU configuration (cores,
// provider) to honour.
bool UsesPuThreads(const Manifest& m);

// One thread per PU, pinned to the PU's cores and running its segments in
// manifest order, each as soon as the segments it reads from are done
// (ort::Generation); one session per segment with the PU's ONNX Runtime
// configuration, created on the PU's thread; tensors bound once, the
// producer's output buffer being the consumer's input (zero copy). Two
// requests each have their own inputs and tensors. `inputs` are request 0's
// model inputs (copied for request 1).
Result<std::unique_ptr<Executor>> CreatePuThreadExecutor(Ort::Env& env, const Manifest& m,
                                                         const std::vector<std::string>& bytes, const RunOptions& o,
                                                         const std::map<std::string, const Ort::Value*>& inputs);

// The PU-thread part of the report from the timed passes.
PuThreadReport SummarisePuThreads(const Manifest& m, const std::vector<Timeline>& timelines, int threads_override);
nlohmann::json PuThreadReportToJson(const PuThreadReport& r);

// --- streams (stream_executor.cc) -------------------------------------------------

// One stream: `inputs[i]` are input i's model inputs by name. Each PU's
// segments run on its pinned thread in the order of their planned times
// shifted by one II per input; hand-off tensors have `in_flight` buffers
// each. Returns each input's outputs and, per input, its first segment's
// start and last segment's end (µs from the stream's start).
struct StreamTimes {
  std::vector<std::map<std::string, Buffer>> outputs;
  std::vector<double> first_start_us, last_end_us;
  double wall_us = 0;
  int in_flight = 0;
};
Result<StreamTimes> RunStream(Ort::Env& env, const Manifest& m, const std::vector<std::string>& bytes,
                              const RunOptions& o, const std::vector<std::map<std::string, const Ort::Value*>>& inputs);

}  // namespace hetplan::deploy_internal
