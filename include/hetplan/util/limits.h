// The two special doubles the planners and reports use: an unreachable time
// (kInf) and a value that is not there (kNaN).
#pragma once

#include <limits>

namespace hetplan {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace hetplan
