// NumPy's .npy files (format versions 1-3, C order, little-endian): a
// representative input given with --sample-input NAME=FILE.npy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hetplan/util/status.h"

namespace hetplan {

// A tensor's element type (ONNX's TensorProto code), dims and raw
// little-endian bytes.
struct TensorData {
  int32_t elem_type = 0;
  std::vector<int64_t> shape;
  std::string bytes;
};

// Reads `path`: float16/32/64, int8/16/32/64, uint8/16/32/64 and bool arrays
// in C order. Errors are one line naming the file and what is wrong (not a
// .npy file, Fortran order, big-endian, an unsupported dtype such as object or
// a string, a size that disagrees with the shape).
Result<TensorData> ReadNpy(const std::string& path);
// The same from a file's bytes already read; `path` names it in errors.
Result<TensorData> ParseNpy(std::string_view file, const std::string& path);

}  // namespace hetplan
