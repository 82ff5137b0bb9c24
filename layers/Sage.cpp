// GraphSAGE: mean, max, min or sum of the neighbours' features.
//
//   out_i = AGG_{j -> i} x_j               AGG = mean (default) | max | min | sum
//   (0 for a node with no in-edges, for every AGG, as in PyG)
//
// Matches torch_geometric.nn.SAGEConv (PyG 2.8) with project=False,
// normalize=False: out = lin_l(propagate(x)) + lin_r(x), message x_j,
// aggr "mean" by default, or "max"/"min"/"sum".
//
// Which part of SAGEConv this is:
//   input  x (node, read at sources, [1, dim]): PyG's x as propagate() sees
//          it (the raw features; with project=True, relu(lin(x)));
//   output out = propagate(x);
//   outside: out = lin_l(out) + lin_r(x) (lin_l has the bias), and
//          F.normalize(out) when normalize=True.
// For mean and sum, lin_l's matrix commutes with the aggregation, so x @
// W_l^T may be fed instead (bias after); for max/min it does not: feed x.
//
// Ties (max/min): measure-zero for real-valued features but exact for
// duplicate edges or repeated rows. The value is the same either way; the
// gradient goes to one edge (dsl::differentiate: the first in CSR order),
// whereas torch's scatter_reduce(amax) splits it evenly between tied
// entries. Both are valid subgradients; they differ only at ties.
//
// options: dim, aggregation (mean | max | min | sum).
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer sage(const LayerOptions &options) {
  detail::checkOptions(findLayer("sage"), options);
  const Reduce reduce =
      detail::aggregation("sage", options, Reduce::Mean, {Reduce::Mean, Reduce::Max, Reduce::Min, Reduce::Sum});
  LayerBuilder b("sage");
  const Expr x = b.srcInput("x", {options.dim});
  b.output("out", aggregate(reduce, x));
  return b.build();
}

} // namespace gnnjit::layers
