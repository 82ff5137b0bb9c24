// Reverse-mode differentiation of a layer into a backward plan, expressed in
// the same IR so later passes lower it into the same kernel families.
//
// Every adjoint lives at the level of the value it belongs to. When a
// gradient flows from a finer level to a coarser one it is summed on the
// way: edge -> dst over the edges into each node (Over::InEdges), edge ->
// src over the edges out of each node (Over::OutEdges, the transpose),
// edge -> global over all edges, node -> global over all nodes. Values the
// forward pass produced are read back through Saved nodes: per-destination
// values (aggregates), softmax probabilities (recomputed from the saved
// log-sum-exp), and the arg index of max/min aggregations.
#pragma once

#include "dsl/Layer.h"

namespace gnnjit::dsl {

/// The gradient of one input, as a sum of terms. For a node input each term
/// is one value per node, read at Src (contributions through x_j) or at Dst
/// (through x_i); for an edge input, one value per edge; for a parameter,
/// one Global value. A term may be null-free but an input no output depends
/// on differentiably (e.g. used only in a comparison) has no terms: its
/// gradient is zero.
struct InputGradient {
  InputPtr input;
  std::vector<ExprPtr> terms;
};

struct BackwardPlan {
  /// One node input per forward output, named "d_<output>", read at Dst:
  /// the gradient of the loss with respect to that output.
  std::vector<InputPtr> outputGradients;
  /// One entry per forward input, in the layer's declaration order.
  std::vector<InputGradient> gradients;

  /// Stable readable text of the whole plan.
  std::string print() const;
};

/// Differentiates every output of `layer` with respect to every input.
/// Ties of max/min (in aggregations and in the element-wise min/max) send
/// the gradient to one side only: the first edge in CSR order (lowest
/// source id, then lowest edge id) for aggregations, the left operand for
/// element-wise min/max. relu'(0) = 0, abs'(0) = 0.
BackwardPlan differentiate(const Layer &layer);

} // namespace gnnjit::dsl
