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

/// The block's threads' `sum`s added in a fixed tree (the same result on
/// every run, no float atomics), written to *out by thread 0. Every thread
/// of the block must call it; `partial` is the block's shared scratch.
template <int Block> GNNJIT_DEVICE void blockSumToPartial(float (&partial)[Block], float sum, float *out) {
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = Block / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    *out = partial[0];
  __syncthreads(); // partial[] is reused by the next call
}

/// Per block b, for every element f: partials[b * F + f] = the sum of
/// message(row, f) over the rows the block strides over.
template <int F, int Block, class Ops>
GNNJIT_DEVICE void nodeSumPartial(const Ops &ops, long long numRows, float *__restrict__ partials) {
  __shared__ float partial[Block];
  for (int f = 0; f < F; ++f) {
    float sum = 0.0f;
    for (long long row = blockIdx.x * (long long)Block + threadIdx.x; row < numRows; row += (long long)gridDim.x * Block)
      sum += ops.message(row, f);
    blockSumToPartial<Block>(partial, sum, partials + blockIdx.x * (long long)F + f);
  }
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
