#pragma once
#include <string>
#include <string_view>

namespace hetplan {
// Lower-case hex SHA-256 of `data` (FIPS 180-4).
std::string Sha256Hex(std::string_view data);
}  // namespace hetplan
