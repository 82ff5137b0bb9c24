#include "graph/generate/Generators.h"

#include "graph/generate/GeneratorSupport.h"

namespace gnnjit::graph {

EdgeList generateGrid(const GridParams &params) {
  const int64_t rows = params.rows, cols = params.cols;
  if (rows < 1 || cols < 1)
    throwUserError("grid: rows and cols must be at least 1, got rows={} cols={}", rows, cols);
  const long double nodes = static_cast<long double>(rows) * static_cast<long double>(cols);
  detail::checkSize("grid", nodes, 4 * nodes);

  // The baseline's order: right links, then down links, then all reversed.
  EdgeList edges;
  edges.numNodes = rows * cols;
  const int64_t half = rows * (cols - 1) + (rows - 1) * cols;
  edges.reserve(static_cast<size_t>(2 * half));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c + 1 < cols; ++c)
      edges.add(r * cols + c, r * cols + c + 1);
  for (int64_t r = 0; r + 1 < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      edges.add(r * cols + c, (r + 1) * cols + c);
  for (int64_t k = 0; k < half; ++k)
    edges.add(edges.dst[static_cast<size_t>(k)], edges.src[static_cast<size_t>(k)]);
  return edges;
}

} // namespace gnnjit::graph
