// Elapsed time on the steady clock: the one clock every measurement, time
// limit and progress line of hetplan reads.
#pragma once

#include <chrono>

namespace hetplan {

using Clock = std::chrono::steady_clock;

// Microseconds from a to b.
inline double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
// Seconds since t0.
inline double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace hetplan
