#pragma once

#include <string>
#include <string_view>

#include "hetplan/util/status.h"

namespace hetplan {

// Writes `content` to `path` atomically: a temporary file in the same folder,
// then rename. A failure leaves an existing file at `path` untouched.
Status WriteFileAtomic(const std::string& path, std::string_view content);

// Reads a whole file, refusing files larger than `max_bytes`.
Result<std::string> ReadFile(const std::string& path, int64_t max_bytes = int64_t{1} << 30);

}  // namespace hetplan
