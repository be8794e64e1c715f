#include "hetplan/graph/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "hetplan/graph/dtype.h"
#include "hetplan/util/utf8.h"

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

// A location ONNX allows: relative, no component "..", no drive or
// backslash (the same file on every system).
bool InsideFolder(const std::string& loc) {
  if (loc[0] == '/' || loc.find('\\') != std::string::npos || loc.find(':') != std::string::npos) return false;
  for (const auto& part : fs::path(loc)) {
    if (part == "..") return false;
  }
  return true;
}

// Text that can stand in a one-line message: UTF-8 without control characters.
bool IsPrintable(const std::string& s) {
  return IsUtf8(s) && std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
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
      return Error(ErrorCode::kParseError, "{}: {} has an external data {} that is not a byte count; the file is "
                   "corrupt: save the model again", label, what, kv.key());
    }
  }
  const std::string& loc = r.location;
  if (loc.empty()) {
    return Error(ErrorCode::kParseError, "{}: {} is stored as external data but names no location; the file is "
                 "corrupt: save the model again", label, what);
  }
  if (!IsPrintable(loc)) {
    return Error(ErrorCode::kParseError, "{}: {} names an external data location that is not printable UTF-8; the "
                 "file is corrupt: save the model again", label, what);
  }
  if (!InsideFolder(loc)) {
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
  if (r.length < 0) {
    return Error(ErrorCode::kParseError, "{}: {} is stored as external data in '{}' without a length, and its type "
                 "has no fixed width; save the model again", label, what, loc);
  }
  // As ONNX's own checker: no symbolic link, the real path inside the
  // model's folder, and a regular file (never a pipe or a device, which
  // could block), checked on the file descriptor that is read.
  const fs::path file = fs::path(dir) / loc;
  std::error_code ec, root_ec;
  const auto missing = [&]() {
    return Error(ErrorCode::kNotFound,
                 "{}: {} is stored as external data in '{}', which is not beside the model ({} is missing or not a "
                 "regular file); copy the model's data file next to it", label, what, loc, file.string());
  };
  if (fs::is_symlink(fs::symlink_status(file, ec))) {
    return Error(ErrorCode::kUnsupported, "{}: {} is stored as external data in '{}', a symbolic link; refusing to "
                 "follow it (copy the data file itself next to the model)", label, what, loc);
  }
  const fs::path real = fs::canonical(file, ec), root = fs::canonical(dir, root_ec);
  if (ec || root_ec) return missing();
  const fs::path inside = real.lexically_relative(root);
  if (inside.empty() || *inside.begin() == "..") {
    return Error(ErrorCode::kUnsupported, "{}: {} is stored as external data in '{}', which resolves outside the "
                 "model's folder (through a symbolic link); refusing to follow it", label, what, loc);
  }
  const int fd = ::open(real.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return missing();
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const auto size = static_cast<int64_t>(st.st_size);
  if (!regular || r.offset > size || r.length > size - r.offset) {
    ::close(fd);
    if (!regular) return missing();
    return Error(ErrorCode::kParseError,
                 "{}: {} reads bytes {}..{} of '{}', which has {} bytes; the data file is truncated or not this "
                 "model's: copy it again", label, what, r.offset, r.offset + r.length, loc, size);
  }
  std::string bytes(static_cast<size_t>(r.length), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(r.offset) + done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != bytes.size()) {
    return Error(ErrorCode::kIoError, "{}: {}: bytes {}..{} of '{}' could not be read; check the file", label, what,
                 r.offset, r.offset + r.length, loc);
  }
  return bytes;
}

}  // namespace hetplan
