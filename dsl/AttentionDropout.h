// What attentionDropout draws (dsl/Ops.h): whether edge `edgeId`'s attention
// coefficient of head h is kept, from a counter-based hash of (seed, edge id,
// head), so the forward and the backward of one call drop the same edges
// without storing a mask, and every GPU, the reference executor and any run
// order agree bit for bit. codegen/device/dropout.cuh computes the same bits
// on the device; the reference executor calls these.
#pragma once

#include <cstdint>

namespace gnnjit::dsl {

/// SplitMix64's finalizer: a bijective mix of 64 bits.
constexpr uint64_t dropoutMix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The 32 random bits of (seed, edge id, head).
constexpr uint32_t dropoutBits(uint64_t seed, uint64_t edgeId, int64_t heads, int64_t head) {
  const uint64_t counter = edgeId * static_cast<uint64_t>(heads) + static_cast<uint64_t>(head);
  return static_cast<uint32_t>(dropoutMix(seed ^ dropoutMix(counter)) >> 32);
}

/// Bits below this drop the edge: round(p * 2^32), so a coefficient is
/// dropped with probability p to within 2^-33.
constexpr uint32_t dropoutThreshold(double probability) {
  const double scaled = probability * 4294967296.0 + 0.5;
  return scaled >= 4294967295.0 ? 0xFFFFFFFFu : scaled <= 0.0 ? 0u : static_cast<uint32_t>(scaled);
}

/// The mask's value: 1 / (1 - p) when kept, 0 when dropped.
inline double dropoutFactor(uint64_t seed, uint64_t edgeId, int64_t heads, int64_t head, double probability) {
  return dropoutBits(seed, edgeId, heads, head) >= dropoutThreshold(probability) ? 1.0 / (1.0 - probability) : 0.0;
}

} // namespace gnnjit::dsl
