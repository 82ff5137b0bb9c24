// Whitespace-separated edge lists, as SNAP publishes them.
#pragma once

#include "graph/EdgeList.h"

#include <filesystem>

namespace gnnjit::graph {

/// One edge per line, "SRC DST" or "SRC DST WEIGHT" (spaces, tabs or commas
/// between fields; every line the same number of fields), 0-based ids.
/// Lines starting with '#' or '%' and blank lines are skipped; CRLF is
/// accepted; `.gz` is read transparently. The node count is the largest id
/// plus one (SNAP files do not declare it). Throws UserError with file, line
/// and what was expected.
EdgeList readEdgeListText(const std::filesystem::path &file);

} // namespace gnnjit::graph
