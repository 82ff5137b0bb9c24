// Skeletons of per-edge work over the incoming CSR: targets with one row per
// edge (edge inputs' gradients) and sums over all edges (parameters'
// gradients). A generated module supplies an `Ops` struct:
//   edgeElements:   void compute(long long row, Index col, long long p, int f) const;
//                   writes element f of every per-edge target at edge p (col -> row)
//   edgeSumPartial: float message(long long row, Index col, long long p, int f) const;
#pragma once

#include "gnnjit/node.cuh"

namespace gnnjit::device {

/// A warp per row; its lanes take the elements of each edge in turn.
template <int F, typename Index, class Ops>
GNNJIT_DEVICE void edgeElements(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                                const Index *__restrict__ cols) {
  const long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  if (row >= numRows)
    return;
  const int lane = threadIdx.x % 32;
  const long long begin = offsets[row], end = offsets[row + 1];
  for (long long p = begin; p < end; ++p) {
    const Index col = cols[p];
    for (int f = lane; f < F; f += 32)
      ops.compute(row, col, p, f);
  }
}

/// Per block b, for every element f: partials[b * F + f] = the sum of
/// message over the edges of the rows the block strides over, each row's
/// edges in CSR order (the same result every run).
template <int F, int Block, typename Index, class Ops>
GNNJIT_DEVICE void edgeSumPartial(const Ops &ops, long long numRows, const Index *__restrict__ offsets,
                                  const Index *__restrict__ cols, float *__restrict__ partials) {
  rowSumsToPartials<F, Block>(numRows, partials, [&](long long row, int f, float(&sum)[sweepSlots<F>()]) {
    for (long long p = offsets[row]; p < offsets[row + 1]; ++p) {
      const Index col = cols[p];
#pragma unroll
      for (int s = 0; s < sweepSlots<F>(); ++s)
        if (f + 32 * s < F)
          sum[s] += ops.message(row, col, p, f + 32 * s);
    }
  });
}

} // namespace gnnjit::device
