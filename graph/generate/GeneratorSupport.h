// What the generators share: parameter checks that name the generator, and a
// chunked parallel loop whose output does not depend on the thread count.
#pragma once

#include "graph/generate/Generators.h"
#include "support/Error.h"
#include "support/Progress.h"
#include "support/Random.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gnnjit::graph::detail {

/// Throws unless `value` is a finite number in [low, high].
inline void checkRange(std::string_view generator, std::string_view what, double value, double low, double high) {
  if (!std::isfinite(value) || value < low || value > high)
    throwUserError("{}: {} must be between {} and {}, got {}", generator, what, low, high, value);
}

/// Throws when the graph would be too large to hold; counts are computed in
/// floating point by the caller so that no product can overflow first.
inline void checkSize(std::string_view generator, long double nodes, long double edges) {
  if (nodes > static_cast<long double>(kMaxGeneratedNodes))
    throwUserError("{}: these parameters give {:.4g} nodes; a generated graph may have at most 2^34 ({})", generator,
                   static_cast<double>(nodes), kMaxGeneratedNodes);
  if (edges > static_cast<long double>(kMaxGeneratedEdges))
    throwUserError("{}: these parameters give {:.4g} edges (about {:.0f} GiB as an edge list); a generated graph "
                   "may have at most 2^34 ({}) edges",
                   generator, static_cast<double>(edges), static_cast<double>(edges * 16 / (1024.0L * 1024 * 1024)),
                   kMaxGeneratedEdges);
}

/// Edges per chunk: part of the output's definition (chunk i draws from
/// rng.fork(i)), so changing it changes every generated graph.
inline constexpr int64_t kChunkSize = int64_t{1} << 16;

/// Calls body(chunkRng, begin, end) for every chunk of [0, count) on
/// `threads` threads (0: all cores). Chunks write disjoint ranges, so no
/// locking is needed.
template <typename Body>
void forEachChunk(const Rng &rng, int64_t count, const std::string &label, Body body, unsigned threads = 0) {
  const int64_t chunks = (count + kChunkSize - 1) / kChunkSize;
  std::atomic<int64_t> next{0}, done{0};
  const auto runOne = [&]() {
    const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
    if (c >= chunks)
      return false;
    Rng chunkRng = rng.fork(static_cast<uint64_t>(c));
    body(chunkRng, c * kChunkSize, std::min(count, (c + 1) * kChunkSize));
    done.fetch_add(1, std::memory_order_relaxed);
    return true;
  };
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  const int64_t helpers = std::min<int64_t>(chunks, threads) - 1;
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < helpers; ++t)
    pool.emplace_back([&] {
      while (runOne()) {
      }
    });
  // The calling thread works too, and alone reports progress.
  Progress progress(label, static_cast<uint64_t>(count));
  while (runOne())
    progress.update(static_cast<uint64_t>(std::min(count, done.load(std::memory_order_relaxed) * kChunkSize)));
  for (std::thread &t : pool)
    t.join();
}

} // namespace gnnjit::graph::detail
