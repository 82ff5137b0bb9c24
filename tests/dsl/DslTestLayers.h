// Small layers the DSL tests share.
#pragma once

#include "dsl/Layer.h"

namespace gnnjit::test {

/// GATv2 as docs/architecture.md sketches it: score = att . leaky_relu(xl_i + xr_j).
inline dsl::Layer gatv2Layer(int64_t heads, int64_t dim) {
  using namespace dsl;
  LayerBuilder b("gatv2");
  auto xl = b.dstInput("xl", {heads, dim});
  auto xr = b.srcInput("xr", {heads, dim});
  auto att = b.param("att", {heads, dim});
  auto score = sum(att * leakyRelu(xl + xr, 0.2), Axis::Dim);
  b.output("out", aggregate(Reduce::Sum, edgeSoftmax(score) * xr));
  return b.build();
}

} // namespace gnnjit::test
