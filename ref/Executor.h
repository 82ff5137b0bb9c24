// The CPU reference executor: evaluates any layer (and any backward plan) in
// double precision with plain loops over the graph. It is the oracle every
// GPU kernel is judged by: clear over fast, but fine for a few million edges
// (per-edge values are computed edge by edge, never stored for all edges).
//
// Semantics (what a GPU kernel must reproduce):
// - Layout: a value of shape [heads, dim] is one row of heads * dim numbers,
//   element (h, d) at column h * dim + d. An axis of size 1 broadcasts
//   (dsl/Type.h). Node tensors have one row per node, edge tensors one row
//   per edge in the graph's ORIGINAL edge order (row = edge id, not CSR
//   position), parameters one row.
// - Levels: Global and per-node (Src, Dst) values are computed once; a Src
//   value read on edge j -> i is taken at j, a Dst value at i. Per-edge
//   values are recomputed edge by edge where a loop over edges needs them.
// - Graph values: in/out degree and weighted in-degree per node (the sum of
//   incoming weights; the in-degree when unweighted); the edge weight is 1
//   on an unweighted graph. Duplicate edges count separately, self loops
//   are ordinary edges.
// - Aggregations (ref/Aggregation.h): over the edges into each node, out of
//   each node, all edges or all nodes; an empty group gives 0 for every
//   reduction; Mean divides by the group size; Max/Min keep the first
//   extreme in CSR order (the order of incoming(), or outgoing() for
//   OutEdges), and a NaN wins.
// - attentionDropout: per edge and head, 1 / (1 - p) or 0, drawn from
//   the call's `seed` and the edge's id (dsl/AttentionDropout.h); a
//   backward given its forward's seed drops the same coefficients.
// - edgeSoftmax: alpha_e = exp(s_e - m) / sum over the edges e' into the
//   same destination of exp(s_e' - m), per head, m the row's max score.
// - select(c, a, b) reads only the chosen side; min/max return the left
//   operand on ties and NaN when either side is NaN; gt/ge give 1 or 0;
//   relu(NaN) is NaN.
// - Saved (backward plans): Value is the forward value itself; SoftmaxProb
//   alpha_e of the referenced softmax; ArgMatch 1 for element (h, d) when
//   this edge is the one the referenced Max/Min aggregation took its value
//   from at this edge's group (destination for InEdges), else 0.
#pragma once

#include "dsl/Differentiate.h"
#include "dsl/Layer.h"
#include "graph/Graph.h"
#include "ref/Tensor.h"

namespace gnnjit::ref {

/// Evaluates the layer's outputs, one numNodes x size tensor per output.
/// `inputs` binds every input of the layer by name with the right shape
/// (node: numNodes x size, edge: numEdges x size, param: 1 x size); a
/// missing, extra or misshapen binding is a UserError that names the input,
/// the expected and given shape and what the rows mean.
TensorMap forward(const dsl::Layer &layer, const graph::Graph &graph, const TensorMap &inputs, uint64_t seed = 0);

/// Evaluates a backward plan: `inputs` as for forward, plus one binding per
/// plan.outputGradients ("d_<output>", numNodes x size). Returns one tensor
/// per layer input, named as the input, shaped as its binding (zero when the
/// input has no gradient terms): a node input's terms (per node, at Src or
/// Dst) are summed per node; an edge input's terms are evaluated at every
/// edge and written at the edge's original id; a parameter's terms are
/// Global. A term whose shape is not the input's, a per-edge term of a node
/// input, or a non-Global term of a parameter is an InternalError (the
/// differentiator's job).
TensorMap backward(const dsl::Layer &layer, const dsl::BackwardPlan &plan, const graph::Graph &graph,
                   const TensorMap &inputs, uint64_t seed = 0);

} // namespace gnnjit::ref
