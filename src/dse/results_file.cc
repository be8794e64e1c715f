// The results file: locked, refused or resumed, appended a line at a time.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dse/internal.h"
#include "hetplan/util/io.h"

namespace hetplan::dse {
namespace {

// The process holding a flock on the file (st), from /proc/locks: only a
// holder on this machine is visible, so this may say nothing.
std::string LockHolder(const struct stat& st) {
  std::ifstream in("/proc/locks");
  for (std::string line; std::getline(in, line);) {
    // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (device in hex).
    std::istringstream ls(line);
    std::string n, kind, mode, rw, pid, dev;
    if (!(ls >> n >> kind >> mode >> rw)) continue;
    if (rw == "->") continue;  // a waiter
    if (kind != "FLOCK" || !(ls >> pid >> dev)) continue;
    const size_t c2 = dev.rfind(':');
    if (c2 == std::string::npos) continue;
    if (dev.substr(c2 + 1) != std::to_string(st.st_ino)) continue;
    return " (by process " + pid + " on this machine)";
  }
  return "";
}

// Keys already in the file (status other than "error"); truncates a partial
// last line so that appending starts on a fresh line.
Result<std::set<std::string>> ResumeKeys(const std::string& path) {
  std::set<std::string> keys;
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  const std::string& t = *text;
  if (!t.empty() && t.back() != '\n') {
    const size_t last = t.find_last_of('\n');
    const size_t keep = last == std::string::npos ? 0 : last + 1;
    std::error_code ec;
    std::filesystem::resize_file(path, keep, ec);
    if (ec) return Error(ErrorCode::kIoError, "{}: cannot drop the partial last line: {}", path, ec.message());
  }
  auto rows = ReadDseResults(path);
  if (!rows.ok()) return rows.status();
  for (const nlohmann::json& row : rows->rows) {
    if (!row.contains("key") || !row["key"].is_string()) continue;
    if (row.value("status", "") == "error") continue;
    keys.insert(row["key"].get<std::string>());
  }
  return keys;
}

}  // namespace

Result<ResultsFile> ResultsFile::Open(const std::string& path, bool resume) {
  std::error_code ec;
  if (const auto parent = std::filesystem::path(path).parent_path(); !parent.empty()) {
    std::filesystem::create_directories(parent, ec);
  }
  ResultsFile f;
  f.path_ = path;
  f.created_ = !std::filesystem::exists(path, ec);
  f.fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (f.fd_ < 0) {
    return Error(ErrorCode::kIoError, "{}: cannot open the results file for appending: {}", path,
                 std::strerror(errno));
  }
  if (flock(f.fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      struct stat st {};
      fstat(f.fd_, &st);
      return Error(ErrorCode::kInvalidArgument,
                   "dse: {} is locked by another running sweep{}; wait for it to finish, or give this one "
                   "another --out",
                   path, LockHolder(st));
    }
    // NFS without lockd, Lustre without -o flock: run unlocked, and say so.
    f.lock_note_ = fmt::format("{} is not locked ({}): the file system does not support flock, so nothing "
                               "stops a second sweep from writing it too",
                               path, std::strerror(errno));
  }
  struct stat st {};
  if (fstat(f.fd_, &st) == 0 && st.st_size > 0 && !resume) {
    return Error(ErrorCode::kInvalidArgument,
                 "dse: {} exists; add --resume to continue that sweep, or remove it to start afresh", path);
  }
  if (resume) {
    HETPLAN_ASSIGN_OR_RETURN(f.done_keys_, ResumeKeys(path));
  }
  return f;
}

ResultsFile::ResultsFile(ResultsFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(other.fd_),
      created_(other.created_),
      done_keys_(std::move(other.done_keys_)),
      lock_note_(std::move(other.lock_note_)) {
  other.fd_ = -1;
}

ResultsFile::~ResultsFile() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

Status ResultsFile::Append(const std::string& line) {
  const std::string text = line + "\n";
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = write(fd_, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Error(ErrorCode::kIoError, "{}: write failed ({}; disk full?)", path_,
                   n < 0 ? std::strerror(errno) : "nothing written");
    }
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

void ResultsFile::DiscardIfCreated() {
  struct stat st {};
  if (created_ && fd_ >= 0 && fstat(fd_, &st) == 0 && st.st_size == 0) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
}

}  // namespace hetplan::dse
