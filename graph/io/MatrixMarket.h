// Matrix Market (https://math.nist.gov/MatrixMarket/formats.html) readers.
#pragma once

#include "graph/EdgeList.h"
#include "graph/io/DenseMatrix.h"

#include <filesystem>

namespace gnnjit::graph {

/// Reads a square `coordinate` matrix (pattern, real or integer; general or
/// symmetric) as a graph: entry (i, j), 1-based, is the edge i-1 -> j-1, as
/// the files in ../shared/datasets state. real/integer values become edge
/// weights. A symmetric file stores one triangle; the mirror edge is added
/// for every off-diagonal entry, right after it. `.gz` files are read too.
/// Throws UserError naming the file, the line and what was expected.
EdgeList readMatrixMarketGraph(const std::filesystem::path &file);

/// Reads a matrix into dense floats: `array` format (column-major, as the
/// format defines) or `coordinate` (entries not listed are 0).
DenseMatrix readMatrixMarketDense(const std::filesystem::path &file);

} // namespace gnnjit::graph
