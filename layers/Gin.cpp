// GIN: sum of the neighbours plus (1 + eps) times the node itself.
//
//   out_i = sum_{j -> i} x_j + (1 + eps) * x_i
//
// Matches torch_geometric.nn.GINConv (PyG 2.8): out = nn(propagate(x) +
// (1 + eps) * x_r), message x_j, aggr "add".
//
// Which part of GINConv this is:
//   input  x   (node, read at sources and destinations, [1, dim]): PyG's x;
//   input  eps (param, scalar) when trainEps (PyG train_eps=True: eps is a
//          Parameter); otherwise the constant LayerOptions::eps (PyG's
//          eps buffer, default 0);
//   output out = the argument of GINConv.nn;
//   outside: GINConv.nn (the MLP) applied to out.
// When nn starts with a Linear W (+ b), the matrix may be moved in front:
// feed x @ W^T and add b after (sum and (1 + eps) * x_i are linear in x).
// The self term uses x_i of every node, also of nodes without in-edges.
// With bipartite, x is read at sources only and the self term reads an
// input of its own, x_dst (PyG's (x_src, x_dst) pair: out = nn(propagate(
// x_src) + (1 + eps) * x_dst)).
//
// options: dim, trainEps, eps, bipartite.
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer gin(const LayerOptions &options) {
  detail::checkOptions(findLayer("gin"), options);
  LayerBuilder b("gin");
  Expr xj, xi; // one input read at both ends, or (bipartite) two
  if (options.bipartite) {
    xj = b.srcInput("x", {options.dim});
    xi = b.dstInput("x_dst", {options.dim});
  } else {
    const NodeInput x = b.nodeInput("x", {options.dim});
    xj = x.src();
    xi = x.dst();
  }
  const Expr eps = options.trainEps ? b.param("eps", {}) : Expr(options.eps);
  b.output("out", aggregate(Reduce::Sum, xj) + (1.0 + eps) * xi);
  return b.build();
}

} // namespace gnnjit::layers
