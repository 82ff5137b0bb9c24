// Streaming softmax over a destination's edges (FlashAttention's online
// softmax): a running max m and a running sum s = sum(exp(score - m)), so the
// scores and weights of an edge never reach memory. An accumulator of
// weighted messages is kept beside the state and rescaled whenever m grows.
//
//   OnlineSoftmax st;                       // empty: m = -inf, s = 0
//   auto w = st.update(score);              // acc = acc * w.rescale + w.weight * value
//   ...                                     // out = acc / st.sum
//
// Scores of -inf (masked edges) add nothing; an all-masked or empty row
// keeps sum = 0, which the caller must treat as "no output" (PyG writes 0).
#pragma once

#include "gnnjit/common.cuh"
#include "gnnjit/warp.cuh"

namespace gnnjit::device {

/// How to fold one more element into an accumulator.
struct SoftmaxStep {
  float rescale; ///< factor for everything accumulated so far
  float weight;  ///< unnormalized weight of the new element
};

struct OnlineSoftmax {
  float max = negativeInfinity();
  float sum = 0.0f;

  /// exp(from - to), with exp(-inf - -inf) taken as 1 (nothing to rescale).
  /// expf, not __expf: -use_fast_math swaps it in when a config asks.
  static GNNJIT_DEVICE float scaleFactor(float from, float to) { return from == to ? 1.0f : expf(from - to); }

  GNNJIT_DEVICE SoftmaxStep update(float score) {
    const float newMax = fmaxf(max, score);
    const SoftmaxStep step{scaleFactor(max, newMax), score == negativeInfinity() ? 0.0f : expf(score - newMax)};
    sum = sum * step.rescale + step.weight;
    max = newMax;
    return step;
  }

  /// Merges `other` (a disjoint set of elements) into this state; returns the
  /// factors for this side's accumulator (rescale) and the other's (weight).
  GNNJIT_DEVICE SoftmaxStep merge(const OnlineSoftmax &other) {
    const float newMax = fmaxf(max, other.max);
    const SoftmaxStep step{scaleFactor(max, newMax), scaleFactor(other.max, newMax)};
    // Unfused on purpose: two lanes merging each other's states hold the
    // same two products in swapped roles; an fma would round them
    // differently and the lanes would disagree in the last bit.
    sum = __fadd_rn(__fmul_rn(sum, step.rescale), __fmul_rn(other.sum, step.weight));
    max = newMax;
    return step;
  }

  /// log(sum(exp(score))): what backward saves per (node, head) to recompute
  /// the weights as exp(score - lse). -inf when empty.
  GNNJIT_DEVICE float logSumExp() const { return sum > 0.0f ? max + logf(sum) : negativeInfinity(); }
  /// 1 / sum, or 0 for an empty row so that acc * inverseSum() writes 0.
  GNNJIT_DEVICE float inverseSum() const { return sum > 0.0f ? 1.0f / sum : 0.0f; }
};

/// Merges the states of a group of Width lanes (each over its own edges);
/// every lane gets the group's state. A lane then scales its accumulator by
/// OnlineSoftmax::scaleFactor(ownMax, merged.max) before a groupSum.
template <int Width> GNNJIT_DEVICE OnlineSoftmax groupMerge(OnlineSoftmax state, unsigned mask = kFullMask) {
  static_assert(isGroupWidth(Width), "group width must be a power of two in [1, 32]");
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) {
    OnlineSoftmax other;
    other.max = __shfl_xor_sync(mask, state.max, offset, Width);
    other.sum = __shfl_xor_sync(mask, state.sum, offset, Width);
    state.merge(other);
  }
  return state;
}

} // namespace gnnjit::device
