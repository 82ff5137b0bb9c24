// Reductions over groups of Width consecutive lanes (a sub-warp per node for
// light nodes, a whole warp for heavier ones). Every lane of `mask` must call
// with the same Width; every lane of the group gets the result.
#pragma once

#include "gnnjit/common.cuh"

namespace gnnjit::device {

struct SumOp {
  template <typename T> GNNJIT_DEVICE T operator()(T a, T b) const { return a + b; }
};
struct MaxOp {
  GNNJIT_DEVICE float operator()(float a, float b) const { return fmaxf(a, b); }
  GNNJIT_DEVICE double operator()(double a, double b) const { return fmax(a, b); }
  GNNJIT_DEVICE int operator()(int a, int b) const { return max(a, b); }
  GNNJIT_DEVICE unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return a > b ? a : b;
  }
};
struct MinOp {
  GNNJIT_DEVICE float operator()(float a, float b) const { return fminf(a, b); }
  GNNJIT_DEVICE double operator()(double a, double b) const { return fmin(a, b); }
  GNNJIT_DEVICE int operator()(int a, int b) const { return min(a, b); }
  GNNJIT_DEVICE unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return a < b ? a : b;
  }
};

/// Butterfly reduction: after log2(Width) xor-shuffles every lane of the
/// group holds op over the group, combined in the same order on every run.
template <int Width, typename T, typename Op> GNNJIT_DEVICE T groupReduce(T value, Op op, unsigned mask = kFullMask) {
  static_assert(isGroupWidth(Width), "group width must be a power of two in [1, 32]");
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(mask, value, offset, Width));
  return value;
}

template <int Width, typename T> GNNJIT_DEVICE T groupSum(T value, unsigned mask = kFullMask) {
  return groupReduce<Width>(value, SumOp{}, mask);
}
template <int Width, typename T> GNNJIT_DEVICE T groupMax(T value, unsigned mask = kFullMask) {
  return groupReduce<Width>(value, MaxOp{}, mask);
}
template <int Width, typename T> GNNJIT_DEVICE T groupMin(T value, unsigned mask = kFullMask) {
  return groupReduce<Width>(value, MinOp{}, mask);
}

/// `value` of lane `srcLane` of this lane's group.
template <int Width, typename T> GNNJIT_DEVICE T groupBroadcast(T value, int srcLane, unsigned mask = kFullMask) {
  static_assert(isGroupWidth(Width), "group width must be a power of two in [1, 32]");
  return __shfl_sync(mask, value, srcLane, Width);
}

/// The lanes of this thread's group, for shuffles of groups that may run
/// different trip counts or leave early (a whole-warp mask would then wait
/// on lanes that never arrive).
template <int Width> GNNJIT_DEVICE unsigned groupMask() {
  static_assert(isGroupWidth(Width), "group width must be a power of two in [1, 32]");
  if constexpr (Width == 32)
    return kFullMask;
  else
    return ((1u << Width) - 1u) << (static_cast<int>(threadIdx.x) & 31 & ~(Width - 1));
}

/// This thread's lane within its group, and its group's index in the block.
template <int Width> GNNJIT_DEVICE int groupLane() {
  static_assert(isGroupWidth(Width), "group width must be a power of two in [1, 32]");
  return static_cast<int>(threadIdx.x) & (Width - 1);
}
template <int Width> GNNJIT_DEVICE int groupInBlock() {
  static_assert(isGroupWidth(Width), "group width must be a power of two in [1, 32]");
  return static_cast<int>(threadIdx.x) / Width;
}

} // namespace gnnjit::device
