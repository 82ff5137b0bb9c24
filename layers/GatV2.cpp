// GATv2: dynamic attention, the nonlinearity applied before the dot product.
//
//   s_ji  = < a_h, LeakyReLU(xl_j,h + xr_i,h [+ e_ji,h]) >      per head h
//   alpha = softmax over the edges j -> i of s_ji, per head
//   out_i = concat_h (or mean_h) sum_{j -> i} alpha_ji,h * xl_j,h
//
// Matches torch_geometric.nn.GATv2Conv (PyG 2.8), share_weights=False,
// dropout as attentionDropout. Which side is which, read from the source: forward() computes
// x_l = lin_l(x) and x_r = lin_r(x) and calls propagate(x=(x_l, x_r)).
// With flow source_to_target, message()'s x_j is gathered from x[0] = x_l
// at the edge's source j, and x_i from x[1] = x_r at its destination i. So
// lin_l is the SOURCE side and also the value (message returns
// x_j * alpha), lin_r is the destination (query) side. (docs/architecture.md's sketch
// reads xl at destinations; PyG's naming is the one kept here.)
//
// Which part of GATv2Conv this is:
//   input  xl  (node, read at sources, [H, C]) = GATv2Conv.lin_l(x).view(-1, H, C)
//   input  xr  (node, read at destinations, [H, C]) = GATv2Conv.lin_r(x).view(-1, H, C)
//              (the same tensor as xl when share_weights=True)
//   input  att (param, [H, C]) = GATv2Conv.att.view(H, C)
//   with edgeFeatures:
//   input  e   (edge, [H, C]) = GATv2Conv.lin_edge(edge_attr).view(-1, H, C)
//   output out [1, H * C] (concat=True, head-major as out.view(-1, H * C))
//              or [1, C] (concat=False, out.mean(dim=1));
//   outside: lin_l and lin_r (with their biases) before, `+ bias` after.
// Self loops: GATv2Conv removes and re-adds self loops (add_self_loops=
// True). Build the graph with SelfLoops::Replace (every loop removed, one
// added per node) for exactly PyG's edges; AddMissing is the same on
// graphs without self loops (Cora).
//
// options: dim (C), heads (H), concat, negativeSlope, edgeFeatures, attentionDropout.
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer gatv2(const LayerOptions &options) {
  detail::checkOptions(findLayer("gatv2"), options);
  const int64_t H = options.heads, C = options.dim;
  LayerBuilder b("gatv2");
  const Expr xl = b.srcInput("xl", {H, C});
  const Expr xr = b.dstInput("xr", {H, C});
  const Expr att = b.param("att", {H, C});
  Expr z = xr + xl; // PyG: x = x_i + x_j
  if (options.edgeFeatures)
    z = z + b.edgeInput("e", {H, C});
  const Expr score = sum(leakyRelu(z, options.negativeSlope) * att, Axis::Dim); // [H, 1]
  const Expr perHead = aggregate(Reduce::Sum, edgeSoftmax(score) * detail::withAttentionDropout(xl, options));
  b.output("out", detail::combineHeads(perHead, options));
  return b.build();
}

} // namespace gnnjit::layers
