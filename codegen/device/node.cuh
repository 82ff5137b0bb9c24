// Skeletons of the node-level kernels: work the aggregation kernels do not
// fuse. A generated module supplies the layer's part as an `Ops` struct
// (codegen/NodeKernel.cpp):
//   nodeElements:  void compute(long long row, int f) const;  writes element
//                  f of every output of the step at `row`
//   nodeSumPartial: float message(long long row, int f) const;  element f of
//                  the per-node value summed over all nodes
#pragma once

#include "gnnjit/common.cuh"

namespace gnnjit::device {

/// One thread per (row, element of the widest output).
template <int Width, class Ops> GNNJIT_DEVICE void nodeElements(const Ops &ops, long long numRows) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long row = t / Width;
  const int f = (int)(t % Width);
  if (row >= numRows)
    return;
  ops.compute(row, f);
}

/// Elements a lane adds per sweep of a block's rows: 32 x this many per sweep.
template <int F> GNNJIT_DEVICE constexpr int sweepSlots() { return (F + 31) / 32 < 8 ? (F + 31) / 32 : 8; }

/// Per block b and element f: partials[b * F + f] = the sum, over the rows
/// the block's warps stride over, of what addRow(row, f, sum) adds into
/// sum[s] for elements f + 32 s < F (f = f0 + lane). A warp takes one row at a
/// time and its lanes consecutive elements, so a row is read in whole cache
/// lines; the warps' sums are then added in warp order, without atomics:
/// the same result on every run.
template <int F, int Block, class AddRow>
GNNJIT_DEVICE void rowSumsToPartials(long long numRows, float *__restrict__ partials, AddRow addRow) {
  static_assert(Block % 32 == 0, "whole warps");
  constexpr int kWarps = Block / 32, kSlots = sweepSlots<F>();
  __shared__ float warpSums[kWarps][kSlots * 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int f0 = 0; f0 < F; f0 += kSlots * 32) {
    float sum[kSlots];
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
      sum[s] = 0.0f;
    for (long long row = blockIdx.x * (long long)kWarps + warp; row < numRows; row += (long long)gridDim.x * kWarps)
      addRow(row, f0 + lane, sum);
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
      warpSums[warp][s * 32 + lane] = sum[s];
    __syncthreads();
    for (int i = threadIdx.x; i < kSlots * 32; i += Block)
      if (f0 + i < F) {
        float total = 0.0f;
        for (int w = 0; w < kWarps; ++w)
          total += warpSums[w][i];
        partials[blockIdx.x * (long long)F + f0 + i] = total;
      }
    __syncthreads(); // warpSums is reused by the next sweep
  }
}

/// Per block b, for every element f: partials[b * F + f] = the sum of
/// message(row, f) over the rows the block strides over.
template <int F, int Block, class Ops>
GNNJIT_DEVICE void nodeSumPartial(const Ops &ops, long long numRows, float *__restrict__ partials) {
  rowSumsToPartials<F, Block>(numRows, partials, [&](long long row, int f, float(&sum)[sweepSlots<F>()]) {
#pragma unroll
    for (int s = 0; s < sweepSlots<F>(); ++s)
      if (f + 32 * s < F)
        sum[s] += ops.message(row, f + 32 * s);
  });
}

/// One thread per element: the partials added in block order.
template <int F>
GNNJIT_DEVICE void nodeSumFinish(const float *__restrict__ partials, long long numPartials, float *__restrict__ out) {
  const int f = blockIdx.x * blockDim.x + threadIdx.x;
  if (f >= F)
    return;
  float sum = 0.0f;
  for (long long b = 0; b < numPartials; ++b)
    sum += partials[b * F + f];
  out[f] = sum;
}

} // namespace gnnjit::device
