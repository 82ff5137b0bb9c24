// Matrix Market: the same file read as a graph and as a dense matrix. When
// both succeed, the dense matrix must hold exactly the graph's edges (the
// last entry for a cell wins, 1 for a pattern).
#include "FuzzSupport.h"
#include "GraphChecks.h"

#include "graph/io/MatrixMarket.h"


using namespace gnnjit;
using namespace gnnjit::graph;

namespace {

/// Graphs up to this many nodes are compared with their dense matrix.
constexpr int64_t kMaxComparedNodes = 1000;

void compare(const EdgeList &edges, const DenseMatrix &dense) {
  fuzz::require(dense.rows == edges.numNodes && dense.cols == edges.numNodes,
                "the dense matrix has the graph's size");
  std::vector<float> expected(dense.values.size(), 0.0f);
  for (int64_t k = 0; k < edges.numEdges(); ++k)
    expected[static_cast<size_t>(edges.src[k] * dense.cols + edges.dst[k])] =
        edges.hasWeights() ? edges.weight[static_cast<size_t>(k)] : 1.0f;
  fuzz::require(expected == dense.values, "the dense matrix holds the graph's edges");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto file = fuzz::writeScratch("input.mtx", fuzz::asText(data, size));

  const auto edges = fuzz::readOrRefuse("readMatrixMarketGraph", [&] { return readMatrixMarketGraph(file); });
  if (edges)
    fuzz::checkEdgeList(*edges, "readMatrixMarketGraph");

  const auto dense = fuzz::readOrRefuse("readMatrixMarketDense", [&] { return readMatrixMarketDense(file); });
  if (dense) {
    fuzz::require(dense->rows >= 0 && dense->cols >= 0, "non-negative dense sizes");
    fuzz::require(dense->values.size() == static_cast<size_t>(dense->rows) * static_cast<size_t>(dense->cols),
                  "rows x cols dense values");
  }
  if (edges && edges->numNodes <= kMaxComparedNodes) {
    fuzz::require(dense.has_value(), "readMatrixMarketDense reads what readMatrixMarketGraph reads");
    compare(*edges, *dense);
  }
  return 0;
}
