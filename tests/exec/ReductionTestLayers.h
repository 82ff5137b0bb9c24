// The reduction-family layers the exec tests run: the library's (SAGE max
// and min, EdgeConv with every aggregation) and user layers of the shapes
// the family takes: a gated mean of differences (per-head gates from dot
// products), a max of a nonlinear message that reads an edge input, and a
// sum whose message reads a parameter per edge (its gradient is a sum over
// all edges).
#pragma once

#include "dsl/Layer.h"
#include "examples/GatedDifference.h"
#include "layers/Library.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace gnnjit::test {

using examples::gatedDifference; // the README's layer (examples/GatedDifference.h)

/// out_i = max_j tanh(x_j * e_ji) + x_i: a nonlinear message of an edge input.
inline dsl::Layer edgeGate(int64_t dim, dsl::Reduce reduce = dsl::Reduce::Max) {
  using namespace gnnjit::dsl;
  LayerBuilder b("edge_gate");
  NodeInput x = b.nodeInput("x", {1, dim});
  Expr e = b.edgeInput("e", {1, dim});
  b.output("out", aggregate(reduce, tanh(x.src() * e) + x.dst()));
  return b.build();
}

/// out_i = sum_j leaky_relu((x_j + e_ji) * w): a parameter read on every
/// edge, so its gradient is a sum over all edges.
inline dsl::Layer edgeAffine(int64_t dim) {
  using namespace gnnjit::dsl;
  LayerBuilder b("edge_affine");
  NodeInput x = b.nodeInput("x", {1, dim});
  Expr w = b.param("w", {1, dim});
  Expr e = b.edgeInput("e", {1, dim});
  b.output("out", aggregate(Reduce::Sum, leakyRelu((x.src() + e) * w, 0.2)));
  return b.build();
}

struct ReductionLayerCase {
  std::string label;
  std::function<dsl::Layer(int64_t dim)> build;
};

inline std::vector<ReductionLayerCase> reductionLayerCases() {
  auto library = [](std::string layer, std::string aggregation) {
    return [layer, aggregation](int64_t dim) {
      layers::LayerOptions o;
      o.dim = dim;
      o.aggregation = aggregation;
      return layers::buildLayer(layer, o);
    };
  };
  return {
      {"sage max", library("sage", "max")},
      {"sage min", library("sage", "min")},
      {"edgeconv max", library("edgeconv", "max")},
      {"edgeconv min", library("edgeconv", "min")},
      {"edgeconv mean", library("edgeconv", "mean")},
      {"edgeconv sum", library("edgeconv", "sum")},
      {"gated_difference", [](int64_t dim) { return gatedDifference(dim % 2 == 0 ? 2 : 1, dim % 2 == 0 ? dim / 2 : dim); }},
      {"edge_gate max", [](int64_t dim) { return edgeGate(dim); }},
      {"edge_gate min", [](int64_t dim) { return edgeGate(dim, dsl::Reduce::Min); }},
      {"edge_affine", [](int64_t dim) { return edgeAffine(dim); }},
  };
}

} // namespace gnnjit::test
