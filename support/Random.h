// A seeded random source that gives the same numbers on every machine and
// standard library (std::*_distribution does not promise that).
#pragma once

#include <cstdint>

namespace gnnjit {

/// SplitMix64: used to expand a user seed into generator state.
inline uint64_t splitMix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// xoshiro256** with portable helpers for bounded integers and doubles.
class Rng {
  __extension__ typedef unsigned __int128 Uint128; // GCC/Clang; exact 64x64 -> 128 product

public:
  explicit Rng(uint64_t seed) {
    uint64_t s = seed;
    for (uint64_t &word : state_)
      word = splitMix64(s);
  }

  /// Derives an independent stream, e.g. one per thread or per block of work.
  Rng fork(uint64_t stream) const {
    uint64_t s = state_[0] ^ (stream * 0xD1B54A32D192ED03ull);
    return Rng(splitMix64(s));
  }

  uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform in [0, bound), bound > 0, without modulo bias (Lemire's method).
  uint64_t below(uint64_t bound) {
    Uint128 m = static_cast<Uint128>(next()) * bound;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < bound) {
      const uint64_t threshold = -bound % bound;
      while (low < threshold) {
        m = static_cast<Uint128>(next()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

} // namespace gnnjit
