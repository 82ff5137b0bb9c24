// Element conversions: kernels load f16/bf16 storage and accumulate in f32.
#pragma once

#include "gnnjit/common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace gnnjit::device {

GNNJIT_DEVICE float toFloat(float x) { return x; }
GNNJIT_DEVICE float toFloat(__half x) { return __half2float(x); }
GNNJIT_DEVICE float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

/// Round-to-nearest-even from f32 to the storage type T.
template <typename T> GNNJIT_DEVICE T fromFloat(float x);
template <> GNNJIT_DEVICE float fromFloat<float>(float x) { return x; }
template <> GNNJIT_DEVICE __half fromFloat<__half>(float x) { return __float2half_rn(x); }
template <> GNNJIT_DEVICE __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

/// The two 16-bit elements of a 32-bit word (the lower address in the low
/// half, as in memory), widened to f32. Vector loads arrive as such words.
template <typename T> GNNJIT_DEVICE float2 unpackWord(unsigned word);
template <> GNNJIT_DEVICE float2 unpackWord<__half>(unsigned word) {
  return __half22float2(__halves2half2(__ushort_as_half(static_cast<unsigned short>(word & 0xffffu)),
                                       __ushort_as_half(static_cast<unsigned short>(word >> 16))));
}
template <> GNNJIT_DEVICE float2 unpackWord<__nv_bfloat16>(unsigned word) {
  // bf16 is the high half of an f32: widening is a shift, exact.
  return make_float2(__uint_as_float(word << 16), __uint_as_float(word & 0xffff0000u));
}

/// Two f32 values rounded to T and packed into a word (inverse of unpackWord).
template <typename T> GNNJIT_DEVICE unsigned packWord(float lo, float hi);
template <> GNNJIT_DEVICE unsigned packWord<__half>(float lo, float hi) {
  return static_cast<unsigned>(__half_as_ushort(__float2half_rn(lo))) |
         (static_cast<unsigned>(__half_as_ushort(__float2half_rn(hi))) << 16);
}
template <> GNNJIT_DEVICE unsigned packWord<__nv_bfloat16>(float lo, float hi) {
  return static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
         (static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16);
}

} // namespace gnnjit::device
