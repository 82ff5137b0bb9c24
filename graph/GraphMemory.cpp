#include "graph/GraphMemory.h"

#include "support/CheckedMath.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gnnjit::graph {

namespace {

uint64_t indexBytes(IndexType index) { return index == IndexType::Int32 ? 4 : 8; }

/// n x bytes, the quantity named for an overflow message.
uint64_t times(int64_t n, uint64_t bytes, std::string_view what) {
  return checkedProduct({n, static_cast<int64_t>(bytes)}, what);
}

} // namespace

IndexType autoIndexType(int64_t numNodes, int64_t numEdges) {
  const int64_t limit = std::numeric_limits<int32_t>::max();
  return numNodes <= limit && numEdges <= limit ? IndexType::Int32 : IndexType::Int64;
}

MemoryEstimate csrMemory(std::string_view name, int64_t rows, int64_t edges, IndexType index, bool weighted) {
  MemoryEstimate m;
  const uint64_t b = indexBytes(index);
  m.add(fmt::format("{} row offsets", name), times(rows + 1, b, "the CSR's row offsets"));
  m.add(fmt::format("{} indices and edge ids", name), times(edges, 2 * b, "the CSR's indices"));
  if (weighted)
    m.add(fmt::format("{} weights", name), times(edges, sizeof(float), "the CSR's weights"));
  return m;
}

MemoryEstimate buildMemory(const EdgeList &edges, const BuildOptions &options) {
  const int64_t n = edges.numNodes, e = edges.numEdges();
  const bool weighted = edges.hasWeights();
  // Candidates: the input plus reverse edges and self loops cleaning adds.
  int64_t candidates = e;
  if (options.symmetrize)
    candidates = static_cast<int64_t>(checkedSum(static_cast<uint64_t>(candidates), static_cast<uint64_t>(e),
                                                 "the edge count after symmetrizing"));
  const bool addsLoops = addsSelfLoops(options.selfLoops);
  const bool dropsLoops = dropsSelfLoops(options.selfLoops);
  if (addsLoops)
    candidates = static_cast<int64_t>(checkedSum(static_cast<uint64_t>(candidates), static_cast<uint64_t>(n),
                                                 "the edge count after adding self loops"));
  const bool needsCandidates = options.symmetrize || options.selfLoops != SelfLoops::Keep;
  const IndexType index =
      options.index == IndexChoice::Int64 ? IndexType::Int64 : autoIndexType(n, candidates);

  MemoryEstimate m;
  if (needsCandidates)
    m.add("cleaned edge list", times(candidates, 16 + (weighted ? 4 : 0) + (dropsLoops ? 8 : 0),
                                     "the cleaned edge list"));
  // Two counting sorts hold three per-node arrays and four per-candidate
  // arrays at once; after them, two per-candidate arrays and one per-node
  // array stay while the CSR is emitted beside them.
  const uint64_t sortPeak = checkedSum(times(n, 3 * 8, "the sort's per-node counters"),
                                       times(candidates, 4 * 8, "the sort's per-edge arrays"), "the sort's arrays");
  const MemoryEstimate csr = csrMemory("CSR", n, candidates, index, weighted);
  const uint64_t emitPeak =
      checkedSum(checkedSum(times(n, 8, "the row starts"), times(candidates, 2 * 8 + 8 + 1, "the sorted edges"),
                            "the sorted edges"),
                 csr.total(), "the CSR");
  if (sortPeak >= emitPeak) {
    m.add("sorting by destination (counters and edge arrays)", sortPeak);
  } else {
    m.add("sorted edges", emitPeak - csr.total());
    m.add(csr);
  }
  return m;
}

MemoryEstimate transposeMemory(const Graph &graph) {
  const int64_t n = graph.numNodes(), e = graph.numEdges();
  MemoryEstimate m = csrMemory("transposed CSR", n, e, graph.indexType(), graph.hasWeights());
  const uint64_t b = indexBytes(graph.indexType());
  m.add("transposed CSR peer positions", times(e, b, "the transposed CSR"));
  m.add("transposed CSR cursors", times(n, b, "the transposed CSR"));
  return m;
}

MemoryEstimate statsMemory(const Graph &graph) {
  MemoryEstimate m;
  m.add("per-node in- and out-degrees", times(graph.numNodes(), 2 * 8, "the degree statistics"));
  return m;
}

} // namespace gnnjit::graph
