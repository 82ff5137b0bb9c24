// Arg-max / arg-min of (float value, int32 index) pairs with one 64-bit
// integer atomic, for heavy nodes whose edges are split across warps.
//
// Encoding: high 32 bits = ordered(value), low 32 bits = an index key, so
// unsigned 64-bit order is value order, then index order.
//   ordered(v): the float bits with the sign bit set for v >= +0 and all bits
//     flipped for v < 0; unsigned order then equals float order, -inf lowest.
//     -0 is first made +0 so the two zeros tie. A NaN is made the winner
//     (above +inf for max, below -inf for min), so NaN propagates as in
//     PyTorch's scatter max/min.
//   index key: ~index for max and index for min, so equal values resolve to
//     the lower index whatever the order the atomics land in.
// Indices must be >= 0. The empty states are the unsigned identities (0 for
// max, ~0 for min), so cudaMemset with byte 0x00 / 0xff initializes them; both
// decode to index -1 ("no element") and lose to every real pair.
#pragma once

#include "gnnjit/common.cuh"

namespace gnnjit::device {

namespace detail {

GNNJIT_DEVICE unsigned orderedBits(float value) {
  const unsigned bits = __float_as_uint(value == 0.0f ? 0.0f : value);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

GNNJIT_DEVICE float fromOrderedBits(unsigned key) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

GNNJIT_DEVICE unsigned long long join(unsigned high, unsigned low) {
  return (static_cast<unsigned long long>(high) << 32) | low;
}

} // namespace detail

struct PackedMax {
  static constexpr unsigned long long kEmpty = 0ull;

  static GNNJIT_DEVICE unsigned long long pack(float value, int index) {
    const unsigned high = value != value ? 0xffffffffu : detail::orderedBits(value);
    return detail::join(high, ~static_cast<unsigned>(index));
  }
  static GNNJIT_DEVICE float value(unsigned long long packed) {
    return detail::fromOrderedBits(static_cast<unsigned>(packed >> 32));
  }
  /// -1 for kEmpty.
  static GNNJIT_DEVICE int index(unsigned long long packed) { return static_cast<int>(~static_cast<unsigned>(packed)); }
  static GNNJIT_DEVICE unsigned long long combine(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
  /// Folds `packed` into *address; returns the previous state.
  static GNNJIT_DEVICE unsigned long long atomic(unsigned long long *address, unsigned long long packed) {
    return atomicMax(address, packed);
  }
};

struct PackedMin {
  static constexpr unsigned long long kEmpty = ~0ull;

  static GNNJIT_DEVICE unsigned long long pack(float value, int index) {
    const unsigned high = value != value ? 0u : detail::orderedBits(value);
    return detail::join(high, static_cast<unsigned>(index));
  }
  static GNNJIT_DEVICE float value(unsigned long long packed) {
    return detail::fromOrderedBits(static_cast<unsigned>(packed >> 32));
  }
  /// -1 for kEmpty.
  static GNNJIT_DEVICE int index(unsigned long long packed) { return static_cast<int>(static_cast<unsigned>(packed)); }
  static GNNJIT_DEVICE unsigned long long combine(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
  static GNNJIT_DEVICE unsigned long long atomic(unsigned long long *address, unsigned long long packed) {
    return atomicMin(address, packed);
  }
};

} // namespace gnnjit::device
