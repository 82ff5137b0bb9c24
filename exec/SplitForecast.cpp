#include "exec/SplitForecast.h"

#include <map>
#include <mutex>

namespace gnnjit::exec::split_forecast {

namespace {

/// Process-wide: graphs are built and used from any thread.
struct Asks {
  std::mutex mutex;
  uint64_t latest = 0;                        ///< the last number given
  std::map<SegmentKey, uint64_t> lastAskedBy; ///< the latest graph that asked for each split
};

Asks &asks() {
  static Asks a;
  return a;
}

} // namespace

uint64_t newGraph() {
  Asks &a = asks();
  std::lock_guard lock(a.mutex);
  return ++a.latest;
}

void noteAsked(uint64_t graph, const std::vector<SegmentKey> &keys) {
  Asks &a = asks();
  std::lock_guard lock(a.mutex);
  for (const SegmentKey &key : keys) {
    uint64_t &last = a.lastAskedBy[key];
    last = std::max(last, graph);
  }
}

std::vector<SegmentKey> forecast() {
  Asks &a = asks();
  std::lock_guard lock(a.mutex);
  std::vector<SegmentKey> keys;
  for (auto it = a.lastAskedBy.begin(); it != a.lastAskedBy.end();)
    if (it->second + kWindow < a.latest) { // asked only of graphs long gone: dropped
      it = a.lastAskedBy.erase(it);
    } else {
      keys.push_back(it->first);
      ++it;
    }
  return keys;
}

void forget() {
  Asks &a = asks();
  std::lock_guard lock(a.mutex);
  a.lastAskedBy.clear();
}

} // namespace gnnjit::exec::split_forecast
