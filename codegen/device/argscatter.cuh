// The backward of a max/min to the sources of its arg edges, deterministic
// in N x F work (lower/KernelPlan.h's ArgScatterStep). For every destination
// i and element f, the arg position p of the forward's result (args[i * F +
// f], -1 for an empty row) names the one edge that contributed, from source
// j = cols[p]; its gradient contribution c = ops.contribution(i, j, p, f) is
// added into (j, f). Floats added by atomics give order-dependent last bits,
// so the contributions are scaled to 64-bit integers first: a bound kernel
// finds the largest magnitude per block, a one-block kernel picks from them
// a power-of-two scale that keeps any sum of at most max-out-degree terms
// below 2^61 (on the device: no copy to the host, no synchronization), the
// scatter kernel adds with integer atomics (an order-independent sum), and
// the convert kernel scales back and applies the epilogue. A NaN or infinite
// contribution cannot be an integer: it sets a flag bit in the output word
// (zeroed first), and the convert gives NaN or the infinity the float sum
// would give. The `Ops` struct:
//   float contribution(long long row, Index col, long long p, int f) const;
//   float finish(long long row, int f, float sum) const;
//   float *outputRow(long long row) const;
#pragma once

#include "gnnjit/warp.cuh"

namespace gnnjit::device {

enum : unsigned { kFlagPositiveInfinity = 1u, kFlagNegativeInfinity = 2u, kFlagNaN = 4u };

/// Per block b: partials[2b] = the largest |c| of finite contributions of
/// the elements the block strides over, partials[2b + 1] = how many were
/// not finite. Blocks of 256 threads.
template <int F, typename Index, class Ops>
GNNJIT_DEVICE void argScatterBound(const Ops &ops, long long numRows, const Index *__restrict__ args,
                                   const Index *__restrict__ cols, float *__restrict__ partials) {
  float largest = 0.0f, nonFinite = 0.0f;
  const long long n = numRows * F, stride = (long long)gridDim.x * blockDim.x;
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n; t += stride) {
    const long long p = args[t];
    if (p < 0)
      continue;
    const float c = ops.contribution(t / F, cols[p], p, (int)(t % F));
    if (isfinite(c))
      largest = fmaxf(largest, fabsf(c));
    else
      nonFinite += 1.0f;
  }
  __shared__ float warps[2][8];
  largest = groupReduce<32>(largest, MaxOp());
  nonFinite = groupSum<32>(nonFinite);
  if (threadIdx.x % 32 == 0) {
    warps[0][threadIdx.x / 32] = largest;
    warps[1][threadIdx.x / 32] = nonFinite;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < 8; ++w) {
      warps[0][0] = fmaxf(warps[0][0], warps[0][w]);
      warps[1][0] += warps[1][w];
    }
    partials[2 * blockIdx.x] = warps[0][0];
    partials[2 * blockIdx.x + 1] = warps[1][0];
  }
}

/// *scale = 2^(60 - ilogb(largest * maxTerms)) from the bound's numBlocks
/// partials, 1 when every contribution is 0: exec's fixedPointScale, the
/// same double arithmetic. One block of 256.
GNNJIT_DEVICE void argScatterScale(const float *__restrict__ partials, long long numBlocks, long long maxTerms,
                                   double *__restrict__ scale) {
  float largest = 0.0f;
  for (long long b = threadIdx.x; b < numBlocks; b += blockDim.x)
    largest = fmaxf(largest, partials[2 * b]);
  __shared__ float warps[8];
  largest = groupReduce<32>(largest, MaxOp());
  if (threadIdx.x % 32 == 0)
    warps[threadIdx.x / 32] = largest;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < 8; ++w)
      warps[0] = fmaxf(warps[0], warps[w]);
    const double bound = (double)warps[0] * (double)(maxTerms > 1 ? maxTerms : 1);
    *scale = bound > 0.0 ? ldexp(1.0, 61 - ilogb(bound) - 1) : 1.0;
  }
}

/// acc[j * F + f] += llrint(c * scale) for every contribution; flags for
/// the others in the (zeroed) output words.
template <int F, typename Index, class Ops>
GNNJIT_DEVICE void argScatterAdd(const Ops &ops, long long numRows, const Index *__restrict__ args,
                                 const Index *__restrict__ cols, const double *__restrict__ scalePtr,
                                 long long *__restrict__ acc) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= numRows * F)
    return;
  const long long p = args[t];
  if (p < 0)
    return;
  const int f = (int)(t % F);
  const long long j = cols[p];
  const float c = ops.contribution(t / F, (Index)j, p, f);
  const double scale = *scalePtr;
  if (isfinite(c)) {
    atomicAdd(reinterpret_cast<unsigned long long *>(acc + j * F + f),
              static_cast<unsigned long long>(llrint((double)c * scale)));
    return;
  }
  const unsigned flag = isnan(c) ? kFlagNaN : c > 0 ? kFlagPositiveInfinity : kFlagNegativeInfinity;
  atomicOr(reinterpret_cast<unsigned *>(ops.outputRow(j) + f), flag);
}

/// out[j][f] = finish(j, f, acc / scale), or the non-finite value the flags say.
template <int F, class Ops>
GNNJIT_DEVICE void argScatterConvert(const Ops &ops, long long numRows, const double *__restrict__ scalePtr,
                                     const long long *__restrict__ acc) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= numRows * F)
    return;
  const long long j = t / F;
  const int f = (int)(t % F);
  float *out = ops.outputRow(j) + f;
  const unsigned flags = *reinterpret_cast<const unsigned *>(out);
  float sum;
  if (flags == 0)
    sum = (float)((double)acc[t] / *scalePtr); // scale is a power of two: exact division
  else if ((flags & kFlagNaN) || (flags & kFlagPositiveInfinity && flags & kFlagNegativeInfinity))
    sum = __int_as_float(0x7fc00000);
  else
    sum = flags & kFlagPositiveInfinity ? positiveInfinity() : negativeInfinity();
  *out = ops.finish(j, f, sum);
}

} // namespace gnnjit::device
