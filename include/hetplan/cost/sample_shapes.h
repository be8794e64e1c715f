// Plans for the shapes a representative input produces (--sample-input
// NAME=FILE.npy): models whose intermediate shapes depend on input values
// (a text-to-speech model expanding each token by its predicted duration:
// NonZero, CumSum, Range, ScatterND) are planned the way their users run
// them, for one input.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hetplan/graph/onnx_import.h"
#include "hetplan/util/npy.h"
#include "hetplan/util/status.h"

namespace hetplan {

// Parses "tokens=tokens.npy" into (input, file).
Result<std::pair<std::string, std::string>> ParseSampleInput(std::string_view text);

// Reads each (input, .npy file) of `given` (or, when `given` is empty, the
// files io->samples already names, a plan's: their sha256 must not have
// changed), sets each input's shape to its array's, runs the model at
// `model_path` once in ONNX Runtime on them (every other graph input needs a
// --value) with every tensor of its main graph exposed, and records each
// one's type and shape in io->recorded_shapes, the files in io->samples.
// Errors are one line naming the file, the input or ONNX Runtime's refusal.
Status RecordSampleShapes(const std::string& model_path, const std::vector<std::pair<std::string, std::string>>& given,
                          ImportOptions* io);

// The arrays of `samples`, by input name, each checked against its sha256.
Result<std::map<std::string, TensorData>> ReadSamples(const std::vector<SampleInput>& samples);

}  // namespace hetplan
