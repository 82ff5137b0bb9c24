// Whole-tensor kernels the executor runs around a layer, not generated per
// layer: shifting random inputs into place, and checksums computed on the
// device (so a run needs no host copy of its outputs to report them). A
// module is just `#include "gnnjit/tensor_ops.cuh"`; generated kernels do
// not include this header.
#pragma once

#include "gnnjit/warp.cuh"

/// Threads per block of every kernel here (the checksum's reduction assumes it).
#define GNNJIT_TENSOR_OPS_BLOCK 256

/// x[i] = x[i] * scale + shift for i < n: turns cuRAND's (0, 1] into (-1, 1].
extern "C" __global__ void __launch_bounds__(GNNJIT_TENSOR_OPS_BLOCK)
    gnnjit_tensor_affine(float *x, long long n, float scale, float shift) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride)
    x[i] = x[i] * scale + shift;
}

/// Per block b: partials[4b ..] = (sum, sum of squares, max |v|, count of
/// non-finite values) over its share of the rows x cols values of x (row r
/// at x + r * ld), non-finite values left out of the first three. Each
/// thread walks a fixed stride and the block reduces in a fixed tree, so the
/// partials, and their sum in order on the host, are the same on every run.
extern "C" __global__ void __launch_bounds__(GNNJIT_TENSOR_OPS_BLOCK)
    gnnjit_tensor_checksum(const float *x, long long rows, long long cols, long long ld, double *partials) {
  using namespace gnnjit::device;
  double sum = 0, squares = 0, maxAbs = 0, nonFinite = 0;
  const long long n = rows * cols, stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const double v = x[(i / cols) * ld + i % cols];
    if (isfinite(v)) {
      sum += v;
      squares += v * v;
      maxAbs = fmax(maxAbs, fabs(v));
    } else {
      nonFinite += 1;
    }
  }
  __shared__ double warps[4][GNNJIT_TENSOR_OPS_BLOCK / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  sum = groupSum<32>(sum);
  squares = groupSum<32>(squares);
  maxAbs = groupReduce<32>(maxAbs, MaxOp());
  nonFinite = groupSum<32>(nonFinite);
  if (lane == 0) {
    warps[0][warp] = sum;
    warps[1][warp] = squares;
    warps[2][warp] = maxAbs;
    warps[3][warp] = nonFinite;
  }
  __syncthreads();
  if (threadIdx.x < 4) {
    double total = warps[threadIdx.x][0];
    for (int w = 1; w < GNNJIT_TENSOR_OPS_BLOCK / 32; ++w)
      total = threadIdx.x == 2 ? fmax(total, warps[threadIdx.x][w]) : total + warps[threadIdx.x][w];
    partials[4 * blockIdx.x + threadIdx.x] = total;
  }
}
