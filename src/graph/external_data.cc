#include "hetplan/graph/external_data.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "hetplan/graph/dtype.h"

namespace hetplan {
namespace {

namespace fs = std::filesystem;

// Bits per element of the types whose external data can be sized; 0 for
// the others (strings, which ONNX never stores externally, and unknown types).
int64_t ElementBits(int32_t type) {
  using T = onnx::TensorProto;
  if (const int64_t bits = DtypeBits(type); bits > 0) return bits;
  switch (type) {
    case T::FLOAT4E2M1: return 4;
    case T::FLOAT8E4M3FN: case T::FLOAT8E4M3FNUZ: case T::FLOAT8E5M2: case T::FLOAT8E5M2FNUZ: return 8;
    case T::COMPLEX64: return 64;
    case T::COMPLEX128: return 128;
    default: return 0;
  }
}

bool ParseCount(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

Result<ExternalRange> ExternalRangeOf(const onnx::TensorProto& t, const std::string& label, const std::string& what) {
  ExternalRange r;
  r.length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      r.location = kv.value();
    } else if ((kv.key() == "offset" && !ParseCount(kv.value(), &r.offset)) ||
               (kv.key() == "length" && !ParseCount(kv.value(), &r.length))) {
      return Error(ErrorCode::kParseError, "{}: {} has external data {} '{}', not a byte count; the file is corrupt: "
                   "save the model again", label, what, kv.key(), kv.value());
    }
  }
  const std::string& loc = r.location;
  if (loc.empty() || loc[0] == '/' || loc.find("..") != std::string::npos || loc.find('\\') != std::string::npos ||
      loc.find(':') != std::string::npos) {
    return Error(ErrorCode::kUnsupported,
                 "{}: {} points to external data at '{}', outside the model's folder; refusing to follow it "
                 "(keep external data next to the model)", label, what, loc);
  }
  int64_t elements = 1;
  for (int64_t d : t.dims()) {
    if (elements < 0 || d < 0 || (d > 0 && elements > (int64_t{1} << 56) / d)) {
      elements = -1;
    } else {
      elements *= d;
    }
  }
  const int64_t bits = ElementBits(t.data_type());
  const int64_t need = elements < 0 || bits == 0 || elements > (int64_t{1} << 56) / bits ? -1 : (elements * bits + 7) / 8;
  if (r.length < 0) r.length = need;
  if (need >= 0 && r.length != need) {
    return Error(ErrorCode::kParseError,
                 "{}: {} is stored as {} bytes of external data in '{}', but its type and dims need {}; the model "
                 "and its data file disagree: save the model again", label, what, r.length, loc, need);
  }
  return r;
}

Result<std::string> ReadExternalTensor(const onnx::TensorProto& t, const std::string& dir, const std::string& label,
                                       const std::string& what) {
  HETPLAN_ASSIGN_OR_RETURN(ExternalRange r, ExternalRangeOf(t, label, what));
  const std::string& loc = r.location;
  if (dir.empty()) {
    return Error(ErrorCode::kUnsupported,
                 "{}: {} is stored as external data in '{}', and the model was given without its folder; load it "
                 "from its file, with '{}' beside it", label, what, loc, loc);
  }
  const fs::path file = fs::path(dir) / loc;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    return Error(ErrorCode::kNotFound,
                 "{}: {} is stored as external data in '{}', which is not beside the model ({} is missing or not "
                 "a regular file); copy the model's data file next to it", label, what, loc, file.string());
  }
  const auto size = static_cast<int64_t>(fs::file_size(file, ec));
  if (ec || r.length < 0 || r.offset > size || r.length > size - r.offset) {
    return Error(ErrorCode::kParseError,
                 "{}: {} reads bytes {}..{} of '{}', which has {} bytes; the data file is truncated or not this "
                 "model's: copy it again", label, what, r.offset, r.offset + std::max<int64_t>(r.length, 0), loc,
                 ec ? 0 : size);
  }
  std::ifstream in(fs::path(dir) / r.location, std::ios::binary);
  std::string bytes(static_cast<size_t>(r.length), '\0');
  in.seekg(r.offset);
  if (!in || !in.read(bytes.data(), r.length)) {
    return Error(ErrorCode::kIoError, "{}: {}: bytes {}..{} of '{}' could not be read; check the file", label, what,
                 r.offset, r.offset + r.length, r.location);
  }
  return bytes;
}

}  // namespace hetplan
