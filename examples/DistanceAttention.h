// A user-written attention layer, not taken from the library: each edge's
// score is the negative squared distance between the destination's query and
// the source's key, per head, sharpened by a learned temperature; the value
// is the source's features gated by how well they agree with a learned
// direction:
//
//   score_ij = -beta * ||q_i - x_j||^2 / dim                    (per head)
//   out_i    = concat_h sum_j softmax_j(score_ij) * sigmoid(<x_j, g>) * x_j
//
// An edge softmax weighting the message: the attention family, with a score
// that is not a dot product of the two ends and a gated value. The attention
// tests check it on the GPU against the reference, gradients of beta and g
// included.
#pragma once

#include "dsl/Layer.h"

#include <cstdint>

namespace gnnjit::examples {

inline dsl::Layer distanceAttention(int64_t heads, int64_t dim) {
  using namespace gnnjit::dsl;
  LayerBuilder b("distance_attention");
  const Expr q = b.dstInput("q", {heads, dim});
  const Expr x = b.srcInput("x", {heads, dim});
  const Expr beta = b.param("beta", {1, 1});
  const Expr g = b.param("g", {heads, dim});
  const Expr diff = q - x;
  const Expr score = -(beta * sum(diff * diff)) / Expr(static_cast<double>(dim)); // [heads, 1]
  const Expr value = sigmoid(dot(x, g)) * x;
  b.output("out", concatHeads(aggregate(Reduce::Sum, edgeSoftmax(score) * value)));
  return b.build();
}

} // namespace gnnjit::examples
