// Dropout of attention coefficients on the device: the same bits as
// dsl/AttentionDropout.h on the host (the reference executor's), from a
// counter-based hash of (seed, edge id, head), so no mask is stored and the
// backward, given its forward's seed, drops the same edges.
#pragma once

#include "gnnjit/common.cuh"

namespace gnnjit::device {

/// SplitMix64's finalizer.
GNNJIT_DEVICE unsigned long long dropoutMix(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// `scale` (1 / (1 - p)) when the coefficient of (edge, head) is kept, 0
/// when its 32 bits fall below `threshold` (round(p * 2^32)).
GNNJIT_DEVICE float dropoutFactor(unsigned long long seed, long long edgeId, int heads, int head,
                                  unsigned threshold, float scale) {
  const unsigned long long counter =
      static_cast<unsigned long long>(edgeId) * static_cast<unsigned long long>(heads) +
      static_cast<unsigned long long>(head);
  const unsigned bits = static_cast<unsigned>(dropoutMix(seed ^ dropoutMix(counter)) >> 32);
  return bits >= threshold ? scale : 0.0f;
}

} // namespace gnnjit::device
