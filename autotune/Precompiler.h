// Compiles the kernel modules a search will time ahead of it, on the host's
// cores: each distinct module once, in the order queued (what the search
// times first, first), through the kernel cache. The search asks which of a
// candidate's modules are compiled and times those candidates first, and
// waits for progress instead of compiling in line. No compile starts once
// it could not finish before the deadline (the longest compile so far says
// how long one may take), so stopping never waits long for NVRTC.
#pragma once

#include "codegen/KernelParams.h"
#include "runtime/KernelCache.h"
#include "support/Stopwatch.h"

#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace gnnjit::autotune {

class Precompiler {
public:
  /// `threads` 0: one per core.
  Precompiler(runtime::KernelCache &cache, runtime::CompileOptions options, unsigned threads = 0);
  ~Precompiler(); ///< stops and waits for the compiles under way
  Precompiler(const Precompiler &) = delete;
  Precompiler &operator=(const Precompiler &) = delete;

  /// The cache key of each source (what compiled() takes).
  std::vector<std::string> keysOf(const std::vector<runtime::Source> &sources) const;
  /// The cache key of a generated module, computed once per module object
  /// (hashing a module with its headers is not free).
  std::string keyOf(const codegen::GeneratedModule &module);
  /// Queues the sources not yet queued, after those queued before;
  /// `ahead`: before them (with any of them still queued), as what the
  /// search waits for next. Returns their keys (keysOf).
  std::vector<std::string> enqueue(const std::vector<runtime::Source> &sources, bool ahead = false);
  /// Queues a generated module under keyOf(module) (hashed once for both).
  void enqueue(const codegen::GeneratedModule &module);
  /// Whether every module of `keys` is in the cache (compiled here or
  /// before, or failed here: timing it reports why).
  bool compiled(const std::vector<std::string> &keys) const;
  /// Waits until one more module is done or `seconds` pass; false when
  /// nothing is queued or compiling (waiting would be for nothing).
  bool waitForProgress(double seconds);
  /// No compile starts after `seconds` from construction, less the longest
  /// time one has taken so far.
  void setDeadline(double seconds);
  /// Drops what has not started.
  void stop();

  struct Report {
    size_t queued = 0, compiled = 0, failed = 0, dropped = 0;
    double busySeconds = 0; ///< from the first compile's start to the last one's end
  };
  Report report() const;

private:
  /// Queues `sources` under their `keys` (see enqueue).
  void enqueueKeyed(const std::vector<std::string> &keys, const std::vector<runtime::Source> &sources, bool ahead);
  void work();
  bool mayStart() const; ///< under mutex_

  runtime::KernelCache &cache_;
  runtime::CompileOptions options_;
  const Stopwatch clock_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::string, runtime::Source>> queue_; ///< (key, source)
  std::set<std::string> known_, failed_;
  std::map<const codegen::GeneratedModule *, std::string> moduleKeys_;
  size_t running_ = 0, finished_ = 0;
  double deadline_ = std::numeric_limits<double>::infinity(), longestCompileSeconds_ = 0;
  double firstStart_ = -1, lastEnd_ = 0;
  bool stopping_ = false;
  Report report_;
  std::vector<std::thread> threads_;
};

} // namespace gnnjit::autotune
