// Small text helpers shared by the parsers of option values.
#pragma once

#include <string>
#include <string_view>

namespace hetplan {

// ASCII lower case; other bytes (UTF-8 included) unchanged.
inline std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace hetplan
