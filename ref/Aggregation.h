// Aggregate nodes: a message reduced over groups of edges (or nodes).
//
//   InEdges   one group per node i: the edges into i (incoming() row i); per-node result read at Dst
//   OutEdges  one group per node j: the edges out of j (outgoing() row j); per-node result read at Src
//   AllEdges  one group: every edge; Global result
//   AllNodes  one group: every node, the message (Global or per-node) read at each node; Global result
//
// The message is evaluated per edge whatever its level (a per-node message
// is read at the edge's source or destination). Sum adds, Mean divides by
// the group size, Max/Min keep the first extreme in the group's CSR order
// (a NaN wins over numbers and is kept). An empty group gives 0.
#pragma once

#include "ref/Evaluator.h"

namespace gnnjit::ref {

/// The aggregate's value; fills `args` (when given, for Max/Min) with the
/// incoming() position of each chosen edge (node ids for AllNodes).
NodeValue aggregate(const dsl::Aggregate &agg, const Evaluator &evaluator, ArgTable *args);

} // namespace gnnjit::ref
