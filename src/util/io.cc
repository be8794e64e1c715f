#include "hetplan/util/io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace hetplan {

Status WriteFileAtomic(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path() && !fs::exists(target.parent_path(), ec)) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      return Error(ErrorCode::kIoError, "{}: cannot create folder {}: {}", path,
                   target.parent_path().string(), ec.message());
    }
  }
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) {
      return Error(ErrorCode::kIoError, "{}: cannot write ({}); check the folder exists and is writable",
                   path, std::strerror(errno));
    }
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      return Error(ErrorCode::kIoError, "{}: write failed (disk full?)", path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return Error(ErrorCode::kIoError, "{}: cannot replace the file: {}", path, why);
  }
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Error(ErrorCode::kIoError, "{}: is a folder, expected a file", path);
  }
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return Error(ErrorCode::kNotFound, "{}: cannot open the file; check the path", path);
  std::streamoff size = f.tellg();
  if (size < 0) return Error(ErrorCode::kIoError, "{}: cannot read the file", path);
  if (size > max_bytes) {
    return Error(ErrorCode::kLimitExceeded, "{}: the file has {} bytes, more than the limit of {}",
                 path, size, max_bytes);
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  f.seekg(0);
  if (size > 0 && !f.read(bytes.data(), size)) {
    return Error(ErrorCode::kIoError, "{}: cannot read the file", path);
  }
  return bytes;
}

}  // namespace hetplan
