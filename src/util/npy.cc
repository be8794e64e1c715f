// NumPy's .npy reader (include/hetplan/util/npy.h), as numpy.lib.format
// writes it: the magic "\x93NUMPY", a version, a little-endian header length
// (2 bytes in version 1, 4 in 2 and 3), a Python dict literal with 'descr',
// 'fortran_order' and 'shape', then the data.
#include "hetplan/util/npy.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <string_view>

#include "hetplan/util/io.h"

namespace hetplan {
namespace {

// The value after 'key': in the header dict, up to its end (a quote, a
// comma at depth 0 or a closing parenthesis).
std::string HeaderValue(const std::string& header, const std::string& key) {
  const std::string quoted = "'" + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos) return "";
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) return "";
  ++at;
  while (at < header.size() && std::isspace(static_cast<unsigned char>(header[at]))) ++at;
  if (at < header.size() && header[at] == '\'') {
    const size_t end = header.find('\'', at + 1);
    return end == std::string::npos ? "" : header.substr(at + 1, end - at - 1);
  }
  if (at < header.size() && header[at] == '(') {
    const size_t end = header.find(')', at);
    return end == std::string::npos ? "" : header.substr(at, end - at + 1);
  }
  size_t end = at;
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  std::string v = header.substr(at, end - at);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  return v;
}

}  // namespace

Result<TensorData> ReadNpy(const std::string& path) {
  auto file = ReadFile(path);
  if (!file.ok() && file.status().code() == ErrorCode::kNotFound) {
    return Error(ErrorCode::kNotFound, "{}: cannot open the sample input; give an existing .npy file", path);
  }
  if (!file.ok()) return file.status();
  return ParseNpy(*file, path);
}

Result<TensorData> ParseNpy(std::string_view file, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return Error(ErrorCode::kParseError, "{}: {}; save the array with numpy.save", path, what);
  };
  if (file.size() < 10 || file.compare(0, 6, "\x93NUMPY") != 0) return bad("not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(file[6]);
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(file[8]) | static_cast<size_t>(static_cast<unsigned char>(file[9])) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) return bad("its header is cut short");
    for (int k = 0; k < 4; ++k) header_len |= static_cast<size_t>(static_cast<unsigned char>(file[8 + k])) << (8 * k);
    start = 12;
  } else {
    return bad(fmt::format("format version {} is not 1, 2 or 3", major));
  }
  if (start + header_len > file.size()) return bad("its header is cut short");
  const std::string header(file.substr(start, header_len));
  const std::string descr = HeaderValue(header, "descr"), order = HeaderValue(header, "fortran_order");
  const std::string shape_text = HeaderValue(header, "shape");
  if (descr.empty() || order.empty() || HeaderValue(header, "shape").empty()) {
    return bad("its header lacks 'descr', 'fortran_order' or 'shape'");
  }
  if (order != "False") return bad("it is in Fortran order (save a C-ordered array: numpy.ascontiguousarray)");
  // dtype: byte order, kind, size ('<f4', '|u1', '|b1').
  static const std::map<std::string, std::pair<int32_t, int>> kTypes = {
      {"f2", {10, 2}}, {"f4", {1, 4}}, {"f8", {11, 8}}, {"i1", {3, 1}}, {"i2", {5, 2}}, {"i4", {6, 4}},
      {"i8", {7, 8}},  {"u1", {2, 1}}, {"u2", {4, 2}},  {"u4", {12, 4}}, {"u8", {13, 8}}, {"b1", {9, 1}}};
  if (descr[0] == '>') return bad(fmt::format("its dtype '{}' is big-endian; save it little-endian", descr));
  auto type = descr.size() == 3 ? kTypes.find(descr.substr(1)) : kTypes.end();
  if (type == kTypes.end()) {
    return bad(fmt::format("its dtype '{}' is not a number or bool type (float16/32/64, int8-64, uint8-64, bool)",
                           descr));
  }
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') {
    return bad("its header has no shape");
  }
  TensorData t;
  t.elem_type = type->second.first;
  // The size in bytes, checked against the file as it grows (no overflow).
  uint64_t want = static_cast<uint64_t>(type->second.second);
  const uint64_t data_bytes = file.size() - (start + header_len);
  std::string dim;
  bool gap = false;  // a space after a digit: "(1 2,)" is no shape
  for (char c : shape_text.substr(1)) {
    if (std::isdigit(static_cast<unsigned char>(c)) && !gap) {
      dim += c;
    } else if (c == ',' || c == ')') {
      gap = false;
      if (dim.empty()) continue;
      if (dim.size() > 12) return bad("a dim of its shape is too large");
      t.shape.push_back(std::stoll(dim));
      if (__builtin_mul_overflow(want, static_cast<uint64_t>(t.shape.back()), &want) || want > data_bytes) {
        return bad(fmt::format("it holds {} bytes of data, fewer than its shape needs", data_bytes));
      }
      dim.clear();
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      gap = !dim.empty();
    } else {
      return bad(fmt::format("its shape '{}' is not a tuple of sizes", shape_text));
    }
  }
  const size_t data_start = start + header_len;
  if (data_bytes != want) {
    return bad(fmt::format("it holds {} bytes of data, but {} of shape [{}] need {}", file.size() - data_start, descr,
                           fmt::join(t.shape, ","), want));
  }
  t.bytes = std::string(file.substr(data_start));
  return t;
}

}  // namespace hetplan
