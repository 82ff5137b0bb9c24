// A dense row-major float matrix: node features as loaded from a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gnnjit::graph {

struct DenseMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> values; ///< rows * cols, row-major

  float at(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * cols + c)]; }
};

} // namespace gnnjit::graph
