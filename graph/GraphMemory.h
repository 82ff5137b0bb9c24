// Host memory the graph's own arrays take, estimated before they are
// allocated: Graph::fromEdges, outgoing() and stats() check these against
// the memory available (support/HostMemory.h) and refuse a graph that would
// not fit with a message naming the sizes, instead of running the machine
// out of memory. A 60-byte file can declare two billion nodes.
#pragma once

#include "graph/Graph.h"
#include "support/MemoryEstimate.h"

namespace gnnjit::graph {

/// The peak of Graph::fromEdges on `edges` with `options`, beyond the edge
/// list itself: the sorting arrays and the CSR it emits.
MemoryEstimate buildMemory(const EdgeList &edges, const BuildOptions &options);

/// What a CSR of `rows` rows and `edges` entries keeps.
MemoryEstimate csrMemory(std::string_view name, int64_t rows, int64_t edges, IndexType index, bool weighted);

/// What Graph::outgoing() allocates while transposing `graph`.
MemoryEstimate transposeMemory(const Graph &graph);

/// What Graph::stats() allocates (per-node degrees).
MemoryEstimate statsMemory(const Graph &graph);

/// The index type Auto picks for these counts.
IndexType autoIndexType(int64_t numNodes, int64_t numEdges);

} // namespace gnnjit::graph
