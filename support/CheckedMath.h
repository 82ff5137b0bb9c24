// Size arithmetic that cannot wrap: where a count from the user (a node
// count, a feature width, a file's declared rows) becomes a number of bytes,
// an overflow is the user's input being too large, and says which quantity.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace gnnjit {

/// a * b, or nothing when the product does not fit in 64 bits.
inline std::optional<uint64_t> productOrNothing(uint64_t a, uint64_t b) {
  uint64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p))
    return std::nullopt;
  return p;
}

/// a + b, or nothing when the sum does not fit in 64 bits.
inline std::optional<uint64_t> sumOrNothing(uint64_t a, uint64_t b) {
  uint64_t s = 0;
  if (__builtin_add_overflow(a, b, &s))
    return std::nullopt;
  return s;
}

/// The product of `factors` (each >= 0); a UserError naming `what` when it
/// does not fit in 64 bits, e.g. checkedProduct({rows, cols, 4}, "the bytes of input 'x'").
inline uint64_t checkedProduct(std::initializer_list<int64_t> factors, std::string_view what) {
  uint64_t p = 1;
  for (int64_t f : factors) {
    if (f < 0)
      throwInternalError("a negative factor ({}) in the size of {}", f, what);
    const std::optional<uint64_t> next = productOrNothing(p, static_cast<uint64_t>(f));
    if (!next)
      throwUserError("{} does not fit in 64 bits: the sizes that make it up are too large", what);
    p = *next;
  }
  return p;
}

/// a + b; a UserError naming `what` when the sum does not fit in 64 bits.
inline uint64_t checkedSum(uint64_t a, uint64_t b, std::string_view what) {
  const std::optional<uint64_t> s = sumOrNothing(a, b);
  if (!s)
    throwUserError("{} does not fit in 64 bits: the sizes that make it up are too large", what);
  return *s;
}

} // namespace gnnjit
