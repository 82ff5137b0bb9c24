// Invariants of what the graph readers return, checked after every
// successful read, and the step users take next: building the graph.
#pragma once

#include "graph/EdgeList.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace gnnjit::fuzz {

/// Graphs up to this many nodes are also built with Graph::fromEdges (the
/// CSR's offsets cost 8 bytes a node whatever the file holds).
inline constexpr int64_t kMaxBuiltNodes = 1'000'000;

/// Node count in range, one destination and at most one finite weight per
/// source, every endpoint below the node count; then, for a small graph,
/// Graph::fromEdges as given and with every cleaning option must succeed
/// and keep the counts. `reader` names the reader in findings.
void checkEdgeList(const graph::EdgeList &edges, std::string_view reader);

/// Every id in [0, maxId] and, when `unique`, listed once.
void checkIds(std::span<const int64_t> ids, int64_t maxId, bool unique, std::string_view reader);

} // namespace gnnjit::fuzz
