#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace hetplan {

// Offset of the first byte of `s` that is not well-formed UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or npos when all of
// it is. Names read from user files end up in JSON (graph, schedule and cost
// files), whose writer (nlohmann::json::dump) throws on anything else, so the
// readers check them first.
size_t InvalidUtf8At(std::string_view s);

inline bool IsUtf8(std::string_view s) { return InvalidUtf8At(s) == std::string_view::npos; }

// For a text file: "<label>:<line>: byte <offset> (0xNN) is not valid UTF-8"
// for its first bad byte, or "" when the text is all UTF-8.
std::string DescribeInvalidUtf8(std::string_view text, std::string_view label);

}  // namespace hetplan
