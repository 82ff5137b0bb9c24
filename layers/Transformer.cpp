// Graph Transformer: scaled dot-product attention over the in-edges.
//
//   s_ji  = < q_i,h , k_j,h [+ e_ji,h] > / sqrt(C)              per head h
//   alpha = softmax over the edges j -> i of s_ji, per head
//   out_i = concat_h (or mean_h) sum_{j -> i} alpha_ji,h * (v_j,h [+ e_ji,h])
//
// Matches torch_geometric.nn.TransformerConv (PyG 2.8), dropout as attentionDropout:
// query = lin_query(x[1]) read at the destination (query_i), key and value
// = lin_key(x[0]), lin_value(x[0]) read at the source (key_j, value_j);
// with edge_dim set, edge_attr = lin_edge(edge_attr) is added to key_j
// before the dot product and to value_j in the message. C is PyG's
// out_channels (features per head). No self loops are added.
//
// Which part of TransformerConv this is:
//   input  q (node, read at destinations, [H, C]) = lin_query(x).view(-1, H, C)
//   input  k (node, read at sources, [H, C])      = lin_key(x).view(-1, H, C)
//   input  v (node, read at sources, [H, C])      = lin_value(x).view(-1, H, C)
//   with edgeFeatures:
//   input  e (edge, [H, C]) = lin_edge(edge_attr).view(-1, H, C)
//   output out [1, H * C] (concat) or [1, C] (concat=False: mean of heads)
//   outside: the projections before; after, the root weight:
//          out += lin_skip(x) (root_weight=True), or with beta=True
//          b = sigmoid(lin_beta([out, x_r, out - x_r])), out = b x_r + (1-b) out.
//
// options: dim (C), heads (H), concat, edgeFeatures, attentionDropout.
#include "layers/LayerSupport.h"

#include <cmath>

namespace gnnjit::layers {

using namespace gnnjit::dsl;

dsl::Layer transformer(const LayerOptions &options) {
  detail::checkOptions(findLayer("transformer"), options);
  const int64_t H = options.heads, C = options.dim;
  LayerBuilder b("transformer");
  const Expr q = b.dstInput("q", {H, C});
  Expr k = b.srcInput("k", {H, C});
  Expr v = b.srcInput("v", {H, C});
  if (options.edgeFeatures) {
    const Expr e = b.edgeInput("e", {H, C});
    k = k + e;
    v = v + e;
  }
  const Expr score = dot(q, k) / Expr(std::sqrt(static_cast<double>(C))); // [H, 1]
  const Expr perHead = aggregate(Reduce::Sum, edgeSoftmax(score) * detail::withAttentionDropout(v, options));
  b.output("out", detail::combineHeads(perHead, options));
  return b.build();
}

} // namespace gnnjit::layers
