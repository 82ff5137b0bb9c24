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

/// Per block b: partials[2b ..] = (the largest scaled error, the flat index
/// i = row * cols + col where it is first reached) over its share of two
/// rows x cols tensors, as exec::compare scores them on the host: |a - e| /
/// (atol + |e|); both NaN or the same infinity agree, any other non-finite
/// pair is infinitely off. Fixed strides and a fixed tree (ties keep the
/// smaller index), so the same inputs give the same partials.
extern "C" __global__ void __launch_bounds__(GNNJIT_TENSOR_OPS_BLOCK)
    gnnjit_tensor_compare(const float *expected, const float *actual, long long rows, long long cols,
                          long long ldExpected, long long ldActual, double atol, double *partials) {
  double worst = 0, where = -1;
  const long long n = rows * cols, stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const long long r = i / cols, c = i % cols;
    const double e = expected[r * ldExpected + c], a = actual[r * ldActual + c];
    if ((isnan(a) && isnan(e)) || (isinf(e) && a == e))
      continue;
    const double err = isfinite(a) && isfinite(e) ? fabs(a - e) / (atol + fabs(e)) : gnnjit::device::positiveInfinity();
    if (err > worst) {
      worst = err;
      where = static_cast<double>(i);
    }
  }
  __shared__ double errors[GNNJIT_TENSOR_OPS_BLOCK], places[GNNJIT_TENSOR_OPS_BLOCK];
  errors[threadIdx.x] = worst;
  places[threadIdx.x] = where;
  __syncthreads();
  for (int half = GNNJIT_TENSOR_OPS_BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const double other = errors[threadIdx.x + half], otherPlace = places[threadIdx.x + half];
      if (other > errors[threadIdx.x] ||
          (other == errors[threadIdx.x] && otherPlace >= 0 && (places[threadIdx.x] < 0 || otherPlace < places[threadIdx.x]))) {
        errors[threadIdx.x] = other;
        places[threadIdx.x] = otherPlace;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = errors[0];
    partials[2 * blockIdx.x + 1] = places[0];
  }
}
