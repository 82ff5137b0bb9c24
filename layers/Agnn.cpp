// AGNN: attention by cosine similarity with a learnable temperature.
//
//   n(x)  = x / max(||x||_2, 1e-12) = x * rsqrt(max(<x, x>, 1e-24))
//   s_ji  = beta * < n(x_i), n(x_j) >
//   alpha = softmax over the edges j -> i of s_ji
//   out_i = sum_{j -> i} alpha_ji * x_j
//
// Matches torch_geometric.nn.AGNNConv (PyG 2.8): x_norm = F.normalize(x,
// p=2, dim=-1) — which divides by max(norm, eps=1e-12), so the rsqrt of
// the squared norm clamped at eps^2 is the same function — message
// alpha * x_j with alpha = softmax(beta * (x_norm_i * x_norm_j).sum(-1)).
// AGNNConv has no projection and no heads.
//
// Which part of AGNNConv this is: all of it.
//   input  x    (node, read at sources and destinations, [1, dim]): PyG's x;
//   input  beta (param, scalar) = AGNNConv.beta (requires_grad=True; with
//               requires_grad=False pass 1 and ignore its gradient);
//   output out = AGNNConv(x, edge_index).
// Self loops: AGNNConv removes and re-adds self loops (add_self_loops=True).
// Build the graph with SelfLoops::Replace (every loop removed, one added
// per node) for exactly PyG's edges; AddMissing is the same on graphs
// without self loops.
//
// options: dim.
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

namespace {

/// F.normalize(v, p=2, eps=1e-12): v / max(||v||, 1e-12).
Expr normalized(const Expr &v) {
  constexpr double kEps = 1e-12;
  return v * rsqrt(max(dot(v, v), Expr(kEps * kEps)));
}

} // namespace

dsl::Layer agnn(const LayerOptions &options) {
  detail::checkOptions(findLayer("agnn"), options);
  LayerBuilder b("agnn");
  const NodeInput x = b.nodeInput("x", {options.dim});
  const Expr beta = b.param("beta", {});
  const Expr score = beta * dot(normalized(x.dst()), normalized(x.src()));
  b.output("out", aggregate(Reduce::Sum, edgeSoftmax(score) * x.src()));
  return b.build();
}

} // namespace gnnjit::layers
