// GAT (v1): additive attention with separate source and destination vectors.
//
//   s_ji    = LeakyReLU(<x_j, a_src>_h + <x_i, a_dst>_h [+ <e_ji, a_edge>_h])   per head h
//   alpha   = softmax over the edges j -> i of s_ji, per head
//   out_i   = concat_h (or mean_h) sum_{j -> i} alpha_ji,h * x_j,h
//
// Matches torch_geometric.nn.GATConv (PyG 2.8) for a single input tensor
// (x_src = x_dst = lin(x)), residual=False (dropout: attentionDropout):
// alpha_src = (x_src * att_src).sum(-1) gathered at the source j (alpha_j),
// alpha_dst = (x_dst * att_dst).sum(-1) gathered at the destination i
// (alpha_i), alpha = leaky_relu(alpha_j + alpha_i [+ alpha_edge]),
// softmax over index = destination, message alpha * x_j; then
// out.view(-1, H * C) for concat=True or out.mean(dim=1) for concat=False.
//
// Which part of GATConv this is:
//   input  x        (node, read at sources and destinations, [H, C]):
//                   GATConv.lin(x).view(-1, H, C) (the shared projection;
//                   older PyG calls it lin_src);
//                   with bipartite, x is read at sources only and
//   input  x_dst    (node, read at destinations, [H, C]) is PyG's x_dst
//                   projection (lin or lin_dst of the pair's second tensor);
//   input  att_src  (param, [H, C]) = GATConv.att_src.view(H, C);
//   input  att_dst  (param, [H, C]) = GATConv.att_dst.view(H, C);
//   with edgeFeatures:
//   input  e        (edge, [H, C]) = GATConv.lin_edge(edge_attr).view(-1, H, C);
//   input  att_edge (param, [H, C]) = GATConv.att_edge.view(H, C);
//   output out      [1, H * C] (concat) or [1, C] (mean);
//   outside: lin before, `+ bias` after (and res(x) when residual=True).
// Self loops: GATConv removes and re-adds self loops (add_self_loops=True).
// Build the graph with SelfLoops::Replace (every loop removed, one added
// per node) for exactly PyG's edges; AddMissing is the same on graphs
// without self loops.
// With edge features PyG fills the self loops' edge_attr (fill_value
// "mean"); the caller then supplies those rows of e for the added edges.
//
// options: dim (C), heads (H), concat, negativeSlope, edgeFeatures, attentionDropout, bipartite.
#include "layers/LayerSupport.h"

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer gat(const LayerOptions &options) {
  detail::checkOptions(findLayer("gat"), options);
  const int64_t H = options.heads, C = options.dim;
  LayerBuilder b("gat");
  // x_j and x_i: one input read at both ends, or (bipartite) two.
  Expr xj, xi;
  if (options.bipartite) {
    xj = b.srcInput("x", {H, C});
    xi = b.dstInput("x_dst", {H, C});
  } else {
    const NodeInput x = b.nodeInput("x", {H, C});
    xj = x.src();
    xi = x.dst();
  }
  const Expr attSrc = b.param("att_src", {H, C});
  const Expr attDst = b.param("att_dst", {H, C});
  Expr score = dot(xj, attSrc) + dot(xi, attDst); // [H, 1]
  if (options.edgeFeatures) {
    const Expr e = b.edgeInput("e", {H, C});
    const Expr attEdge = b.param("att_edge", {H, C});
    score = score + dot(e, attEdge);
  }
  score = leakyRelu(score, options.negativeSlope);
  const Expr perHead = aggregate(Reduce::Sum, edgeSoftmax(score) * detail::withAttentionDropout(xj, options));
  b.output("out", detail::combineHeads(perHead, options));
  return b.build();
}

} // namespace gnnjit::layers
