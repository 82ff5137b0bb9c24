// Progress for long work (loading a big file, generating a big graph): a
// single updating line on a terminal, nothing at all when stderr is not one.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gnnjit {

class Progress {
public:
  /// `total` is in the caller's units (bytes, edges); 0 when unknown.
  Progress(std::string label, uint64_t total);
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// Reports that `done` units are finished; cheap to call often.
  void update(uint64_t done);
  /// Clears the line. Called by the destructor if not called before.
  void finish();

  /// Whether progress is shown at all (stderr is a terminal and
  /// GNNJIT_NO_PROGRESS is unset). Tests and pipes see no progress.
  static bool enabled();

private:
  std::string label_;
  uint64_t total_;
  bool active_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

} // namespace gnnjit
