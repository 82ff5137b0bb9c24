// DIMACS shortest-path challenge graphs (.gr).
#pragma once

#include "graph/EdgeList.h"

#include <filesystem>

namespace gnnjit::graph {

/// "c ..." comments, one "p sp N M" line, then M lines "a U V W" (1-based
/// ids, integer weight) which become edges U-1 -> V-1 with weight W.
/// `.gz` is read transparently. Throws UserError with file, line and what
/// was expected (missing or repeated p line, arc count not M, ids out of
/// range).
EdgeList readDimacsGraph(const std::filesystem::path &file);

} // namespace gnnjit::graph
