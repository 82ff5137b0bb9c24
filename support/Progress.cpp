#include "support/Progress.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace gnnjit {

bool Progress::enabled() {
  static const bool on = isatty(STDERR_FILENO) && !std::getenv("GNNJIT_NO_PROGRESS");
  return on;
}

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), active_(enabled()),
      start_(std::chrono::steady_clock::now()), lastDraw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t done) {
  if (!active_)
    return;
  const auto now = std::chrono::steady_clock::now();
  // Stay silent for short work and redraw at most five times a second.
  if (now - start_ < std::chrono::milliseconds(500) ||
      (shown_ && now - lastDraw_ < std::chrono::milliseconds(200)))
    return;
  lastDraw_ = now;
  shown_ = true;
  if (total_ > 0)
    fmt::print(stderr, "\r{}: {:5.1f}%", label_, 100.0 * static_cast<double>(done) / static_cast<double>(total_));
  else
    fmt::print(stderr, "\r{}: {}", label_, done);
  std::fflush(stderr);
}

void Progress::finish() {
  if (active_ && shown_)
    fmt::print(stderr, "\r\033[K");
  shown_ = false;
  active_ = false;
}

} // namespace gnnjit
