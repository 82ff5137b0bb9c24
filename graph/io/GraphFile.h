// Reading a graph from a file whose format is told by its name.
#pragma once

#include "graph/EdgeList.h"

#include <filesystem>

namespace gnnjit::graph {

enum class GraphFormat { MatrixMarket, EdgeListText, Dimacs };

/// .mtx -> MatrixMarket, .gr -> Dimacs, anything else (.txt, .el, .edges,
/// .tsv, .csv, no extension) -> EdgeListText; a trailing .gz is ignored.
GraphFormat guessGraphFormat(const std::filesystem::path &file);

EdgeList readGraphFile(const std::filesystem::path &file);
EdgeList readGraphFile(const std::filesystem::path &file, GraphFormat format);

} // namespace gnnjit::graph
