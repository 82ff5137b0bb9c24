// Dense double-precision values bound to layer inputs and outputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gnnjit::ref {

/// rows x cols, row-major. A node value has one row per node, an edge value
/// one row per edge in the graph's original edge order (edge id), a
/// parameter one row. cols = heads * dim (head-major: [h][d]).
struct Tensor {
  int64_t rows = 0, cols = 0;
  std::vector<double> values;

  Tensor() = default;
  Tensor(int64_t r, int64_t c) : rows(r), cols(c), values(static_cast<size_t>(r * c), 0.0) {}
  double &at(int64_t r, int64_t c) { return values[static_cast<size_t>(r * cols + c)]; }
  double at(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * cols + c)]; }
};

using TensorMap = std::map<std::string, Tensor, std::less<>>;

} // namespace gnnjit::ref
