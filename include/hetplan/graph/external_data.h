// Tensors whose data lives outside the .onnx file ("external data": the
// `location`, `offset` and `length` entries ONNX writes for weights saved
// with save_as_external_data, and for every model over 2 GiB). The importer
// checks each reference and reads only the small tensors that shape
// inference and folding need; ONNX Runtime reads the weights when it
// profiles or runs. split copies each sub-model's external weights into a
// data file beside it (docs/graph-format.md, "External data").
#pragma once

#include <cstdint>
#include <string>

#include "hetplan/util/status.h"

namespace ONNX_NAMESPACE {  // onnx:: (hetplan/util/onnx_namespace.h)
class TensorProto;
}

namespace hetplan {

// Where one tensor's bytes are: `location` relative to the model's folder.
struct ExternalRange {
  std::string location;
  int64_t offset = 0;
  int64_t length = 0;
};

// The tensor's range, from its entries alone (no file is opened): the
// location stays inside the model's folder (no absolute path, no ".."), the
// offset and length are byte counts, and the length equals what the
// tensor's type and dims need (where its type has a fixed width). `label`
// and `what` ("initializer 'w'") name it in the one-line errors.
Result<ExternalRange> ExternalRangeOf(const onnx::TensorProto& t, const std::string& label, const std::string& what);

// The tensor's bytes, read from its file in `dir` (the model's folder): the
// file must be a regular file (never a pipe or a device) holding
// offset + length bytes.
Result<std::string> ReadExternalTensor(const onnx::TensorProto& t, const std::string& dir, const std::string& label,
                                       const std::string& what);

}  // namespace hetplan
