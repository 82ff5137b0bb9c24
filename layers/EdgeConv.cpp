// EdgeConv with a linear edge function: max over messages built from both
// ends of each edge.
//
//   out_i = MAX_{j -> i} (a_i + b_j)        (or min / mean / sum)
//   (0 for a node with no in-edges, as PyG)
//
// Matches torch_geometric.nn.EdgeConv (PyG 2.8) with nn = Linear(2F, F')
// and aggr "max" (its default). EdgeConv's message is
// nn(cat([x_i, x_j - x_i])). Split the Linear's weight W = [W1 | W2] (W1
// the columns applied to x_i, W2 those applied to x_j - x_i) and bias c:
//
//   nn(cat([x_i, x_j - x_i])) = W1 x_i + W2 (x_j - x_i) + c
//                             = ((W1 - W2) x_i + c) + W2 x_j
//                             =        a_i          +  b_j
//
// Which part of EdgeConv this is:
//   input  a (node, read at destinations, [1, F']) = x @ (W1 - W2)^T + c
//   input  b (node, read at sources, [1, F'])      = x @ W2^T
//   output out = EdgeConv(x, edge_index): nothing is added after.
// The bias c lives in a (not after the max) so that nodes with no in-edges
// get 0 as in PyG, not c. Gradients map back as dx = da (W1 - W2) + db W2,
// dW1 = da^T x, dW2 = (db - da)^T x, dc = sum of da (all in row-vector form).
// An nn with a hidden layer (Linear, ReLU, Linear) is not a sum of a dst
// and a src term and is not covered by this layer.
//
// Ties (max/min): see Sage.cpp; the gradient goes to one edge.
//
// options: dim (F'), aggregation (max | min | mean | sum).
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer edgeConv(const LayerOptions &options) {
  detail::checkOptions(findLayer("edgeconv"), options);
  const Reduce reduce =
      detail::aggregation("edgeconv", options, Reduce::Max, {Reduce::Max, Reduce::Min, Reduce::Mean, Reduce::Sum});
  LayerBuilder b("edgeconv");
  const Expr a = b.dstInput("a", {options.dim});
  const Expr bj = b.srcInput("b", {options.dim});
  b.output("out", aggregate(reduce, a + bj));
  return b.build();
}

} // namespace gnnjit::layers
