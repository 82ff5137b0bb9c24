// Wall-clock time of host work (loading a graph, lowering, the reference
// executor, compiling kernels). GPU work is timed with CUDA events
// (runtime/EventTiming.h), never with this.
#pragma once

#include <chrono>

namespace gnnjit {

class Stopwatch {
public:
  Stopwatch() : start_(Clock::now()) {}
  /// Milliseconds since construction or the last restart().
  double ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - start_).count(); }
  double seconds() const { return ms() / 1e3; }
  void restart() { start_ = Clock::now(); }

private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

} // namespace gnnjit
