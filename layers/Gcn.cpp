// GCN: symmetric-normalized neighbourhood sum.
//
//   out_i = sum_{j -> i} d_j^{-1/2} * w_ji * d_i^{-1/2} * x_j
//   d_k   = sum of the weights of the edges into k   (in-degree when unweighted)
//   d^{-1/2} := 0 where d = 0
//
// Matches torch_geometric.nn.GCNConv (PyG 2.8) with normalize=True,
// improved=False, flow="source_to_target": gcn_norm() computes
// deg = scatter_sum(edge_weight, col) — the weighted in-degree at the
// destination side — and weights edge (row -> col) by
// deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col], with the inf of a
// zero degree masked to 0. So the source factor is the source node's own
// in-degree (weightedInDegree read at Src), not its out-degree; on a
// symmetric graph the two agree.
//
// Which part of GCNConv this is:
//   input  x (node, read at sources, [1, dim]) = GCNConv.lin(x), i.e. x @ W^T
//          (GCNConv's Linear has no bias);
//   output out = what GCNConv.propagate() returns;
//   outside: the projection before, `+ GCNConv.bias` after.
// Self loops: GCNConv calls add_remaining_self_loops(fill_value=1). Build the
// graph with BuildOptions::selfLoops = SelfLoops::AddRemaining for the same
// edges (one loop per node, of the weight of the node's last own loop or 1;
// AddMissing keeps every existing loop, which differs on graphs with several
// loops at one node). Without added self
// loops a node with no in-edges has d = 0 and its messages are masked to 0,
// as in PyG; the mask uses a Select so no inf is ever formed.
// Not covered: improved=True (self-loop weight 2: build the graph with
// weight-2 self loops and weighted = true instead), cached normalization
// (a kernel concern), normalize=False (that is GraphConv with sum).
//
// options: dim, weighted (use the graph's edge weights as edge_weight).
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer gcn(const LayerOptions &options) {
  detail::checkOptions(findLayer("gcn"), options);
  LayerBuilder b("gcn");
  const Expr x = b.srcInput("x", {options.dim});
  const Expr degSrc = options.weighted ? weightedInDegree(Level::Src) : inDegree(Level::Src);
  const Expr degDst = options.weighted ? weightedInDegree(Level::Dst) : inDegree(Level::Dst);
  Expr norm = detail::invSqrtOrZero(degSrc);
  if (options.weighted)
    norm = norm * edgeWeight();
  norm = norm * detail::invSqrtOrZero(degDst);
  b.output("out", aggregate(Reduce::Sum, norm * x));
  return b.build();
}

} // namespace gnnjit::layers
