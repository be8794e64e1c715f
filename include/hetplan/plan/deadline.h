// The one clock of a planning call. Solve() starts it when the call begins,
// from SolveOptions::time_limit_s, and passes it down; a method asks it what
// is left, or narrows it for a part of its work (Within), instead of keeping
// its own start time and subtracting.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace hetplan {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // `seconds` from now; infinite (or ≥ 10⁶ s, past any clock arithmetic) for none.
  static Deadline In(double seconds) {
    const Clock::time_point now = Clock::now();
    return Deadline(now, std::isfinite(seconds) && seconds < 1e6 ? now + Span(std::max(seconds, 0.0))
                                                                 : Clock::time_point::max());
  }
  static Deadline None() { return In(std::numeric_limits<double>::infinity()); }

  // The same start, ending `seconds` from now or at this deadline, whichever
  // comes first.
  Deadline Within(double seconds) const {
    const Deadline narrower = In(seconds);
    return Deadline(start_, std::min(at_, narrower.at_));
  }

  Clock::time_point at() const { return at_; }
  bool limited() const { return at_ != Clock::time_point::max(); }
  bool Expired() const { return Clock::now() > at_; }
  // Seconds since the call began.
  double ElapsedSeconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Seconds left (≥ 0); infinity without a limit.
  double SecondsLeft() const {
    if (!limited()) return std::numeric_limits<double>::infinity();
    return std::max(0.0, std::chrono::duration<double>(at_ - Clock::now()).count());
  }

 private:
  Deadline(Clock::time_point start, Clock::time_point at) : start_(start), at_(at) {}
  static Clock::duration Span(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  Clock::time_point start_;
  Clock::time_point at_;
};

}  // namespace hetplan
