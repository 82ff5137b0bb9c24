// GraphConv: plain neighbourhood sum or mean, optionally edge-weighted.
//
//   out_i = AGG_{j -> i} w_ji * x_j        AGG = sum (default) or mean
//
// Matches torch_geometric.nn.GraphConv (PyG 2.8, "Weisfeiler and Leman Go
// Neural"): out = lin_rel(propagate(x, edge_weight)) + lin_root(x), whose
// message is edge_weight * x_j (x_j alone without edge_weight) and whose
// aggr is "add" by default ("mean" also supported here; mean divides the
// weighted sum by the number of in-edges, as PyG's mean does).
//
// Which part of GraphConv this is:
//   input  x (node, read at sources, [1, dim]): the features GraphConv's
//          propagate() aggregates — PyG's raw x;
//   output out = propagate(x, edge_weight);
//   outside: out = lin_rel(out) + lin_root(x) (lin_rel has the bias).
// Because lin_rel is linear, one may instead feed x @ W_rel^T (no bias) and
// add b_rel + lin_root(x) after: the aggregation commutes with the matrix
// (not with the bias, which is why the bias stays after the aggregation).
// The edge weight is the graph's static weight (EdgeList::weight).
//
// options: dim, aggregation (sum | mean), weighted.
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer graphConv(const LayerOptions &options) {
  detail::checkOptions(findLayer("graphconv"), options);
  const Reduce reduce = detail::aggregation("graphconv", options, Reduce::Sum, {Reduce::Sum, Reduce::Mean});
  LayerBuilder b("graphconv");
  const Expr x = b.srcInput("x", {options.dim});
  const Expr message = options.weighted ? edgeWeight() * x : x;
  b.output("out", aggregate(reduce, message));
  return b.build();
}

} // namespace gnnjit::layers
