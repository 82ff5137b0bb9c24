// Attention layers the tests plan and run beside the library's: shapes of
// plan the library's layers do not reach.
#pragma once

#include "dsl/Layer.h"
#include "dsl/Ops.h"

#include <cstdint>

namespace gnnjit::test {

/// A score of the source's features and the destination's in-degree,
/// <a, LeakyReLU(x_j / deg_i)> per head: no input at the destination, so
/// the backward has no sum over in-edges for the attention vector's
/// gradient (a sum over all edges that reads both ends) to join, and that
/// sum keeps its own edge-range kernels.
inline dsl::Layer sourceScoreAttention(int64_t heads, int64_t dim) {
  using namespace gnnjit::dsl;
  LayerBuilder b("source_score");
  const Expr x = b.srcInput("x", {heads, dim});
  const Expr a = b.param("a", {heads, dim});
  const Expr score = sum(leakyRelu(x / inDegree(Level::Dst), 0.2) * a, Axis::Dim); // [heads, 1]
  b.output("out", concatHeads(aggregate(Reduce::Sum, edgeSoftmax(score) * x)));
  return b.build();
}

} // namespace gnnjit::test
