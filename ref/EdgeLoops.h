// The two orders the evaluator visits edges in, written once for int32 and
// int64 CSRs: grouped by destination (incoming(), the forward order) and
// grouped by source (outgoing(), the transpose).
#pragma once

#include "graph/Graph.h"
#include "ref/Values.h"

namespace gnnjit::ref {

/// fn(const EdgeContext &) for every edge, rows of incoming() in order.
template <typename Fn> void forEachEdgeByDst(const graph::Graph &graph, Fn &&fn) {
  graph.incoming().visit([&](const auto &a) {
    const int64_t rows = static_cast<int64_t>(a.offsets.size()) - 1;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t p = a.offsets[static_cast<size_t>(i)]; p < a.offsets[static_cast<size_t>(i) + 1]; ++p)
        fn(EdgeContext{i, static_cast<int64_t>(a.indices[static_cast<size_t>(p)]),
                       static_cast<int64_t>(a.edgeIds[static_cast<size_t>(p)]), p});
  });
}

/// fn(const EdgeContext &) for every edge, rows of outgoing() in order;
/// pos is still the edge's position in incoming().
template <typename Fn> void forEachEdgeBySrc(const graph::Graph &graph, Fn &&fn) {
  graph.outgoing().visit([&](const auto &a) {
    const int64_t rows = static_cast<int64_t>(a.offsets.size()) - 1;
    for (int64_t j = 0; j < rows; ++j)
      for (int64_t q = a.offsets[static_cast<size_t>(j)]; q < a.offsets[static_cast<size_t>(j) + 1]; ++q)
        fn(EdgeContext{static_cast<int64_t>(a.indices[static_cast<size_t>(q)]), j,
                       static_cast<int64_t>(a.edgeIds[static_cast<size_t>(q)]),
                       static_cast<int64_t>(a.peerPositions[static_cast<size_t>(q)])});
  });
}

} // namespace gnnjit::ref
