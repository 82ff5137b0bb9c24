// A layer written by a user, not taken from the library: a gated difference
// aggregation. Each edge j -> i carries the difference x_j - x_i, gated per
// head by how well x_j agrees with a learned direction and with x_i:
//
//   gate_ij = sigmoid(<x_j, a> + <x_i, x_j> / sqrt(dim))       (per head)
//   out_i   = mean over j of gate_ij * (x_j - x_i) + bias
//
// A mean of a nonlinear message: the reduction family. The README shows it;
// examples/custom_layer.cpp runs it and the reduction tests check it.
#pragma once

#include "dsl/Layer.h"

#include <cmath>
#include <cstdint>

namespace gnnjit::examples {

inline dsl::Layer gatedDifference(int64_t heads, int64_t dim) {
  using namespace gnnjit::dsl;
  LayerBuilder b("gated_difference");
  NodeInput x = b.nodeInput("x", {heads, dim});
  Expr a = b.param("a", {heads, dim});
  Expr bias = b.param("bias", {heads, dim});
  Expr gate = sigmoid(dot(x.src(), a) + dot(x.dst(), x.src()) * (1.0 / std::sqrt(double(dim))));
  b.output("out", aggregate(Reduce::Mean, gate * (x.src() - x.dst())) + bias);
  return b.build(); // validates; errors name the layer, the node and the fix
}

} // namespace gnnjit::examples
