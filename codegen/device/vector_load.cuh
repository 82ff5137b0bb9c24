// Vector loads and stores of feature rows, widened to / narrowed from f32.
// A vector is N elements of T whose bytes (N * sizeof(T)) are 4, 8 or 16:
// float4 for f32 and 8 halves in a uint4 for f16/bf16 move 16 bytes at once.
// Rows of any length and any start are safe: the checked forms fall back to
// scalar accesses when the row is misaligned or fewer than N elements remain.
#pragma once

#include "gnnjit/common.cuh"
#include "gnnjit/convert.cuh"

namespace gnnjit::device {

/// Elements of T in one 16-byte vector: 4 for f32, 8 for f16 and bf16.
template <typename T> constexpr int kVecWidth = 16 / static_cast<int>(sizeof(T));

template <int Bytes> GNNJIT_DEVICE bool isAligned(const void *p) {
  return (reinterpret_cast<unsigned long long>(p) & (Bytes - 1)) == 0;
}

namespace detail {

template <typename T, int N> __host__ __device__ constexpr int vecBytes() {
  constexpr int bytes = N * static_cast<int>(sizeof(T));
  static_assert(bytes == 4 || bytes == 8 || bytes == 16, "a vector is 4, 8 or 16 bytes");
  return bytes;
}

// The vector's bytes as 32-bit words; ReadOnly takes the __ldg path (for rows
// the kernel never writes, e.g. gathered source features).
template <bool ReadOnly, int Words> GNNJIT_DEVICE void loadWords(const void *p, unsigned (&w)[Words]) {
  if constexpr (Words == 4) {
    const uint4 v = ReadOnly ? __ldg(static_cast<const uint4 *>(p)) : *static_cast<const uint4 *>(p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else if constexpr (Words == 2) {
    const uint2 v = ReadOnly ? __ldg(static_cast<const uint2 *>(p)) : *static_cast<const uint2 *>(p);
    w[0] = v.x, w[1] = v.y;
  } else {
    w[0] = ReadOnly ? __ldg(static_cast<const unsigned *>(p)) : *static_cast<const unsigned *>(p);
  }
}

template <int Words> GNNJIT_DEVICE void storeWords(void *p, const unsigned (&w)[Words]) {
  if constexpr (Words == 4)
    *static_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  else if constexpr (Words == 2)
    *static_cast<uint2 *>(p) = make_uint2(w[0], w[1]);
  else
    *static_cast<unsigned *>(p) = w[0];
}

template <typename T, int N, int Words> GNNJIT_DEVICE void widen(const unsigned (&w)[Words], float (&out)[N]) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = __uint_as_float(w[i]);
  } else {
#pragma unroll
    for (int i = 0; i < Words; ++i) {
      const float2 pair = unpackWord<T>(w[i]);
      out[2 * i] = pair.x, out[2 * i + 1] = pair.y;
    }
  }
}

template <typename T, int N, int Words> GNNJIT_DEVICE void narrow(const float (&in)[N], unsigned (&w)[Words]) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      w[i] = __float_as_uint(in[i]);
  } else {
#pragma unroll
    for (int i = 0; i < Words; ++i)
      w[i] = packWord<T>(in[2 * i], in[2 * i + 1]);
  }
}

template <bool ReadOnly, typename T> GNNJIT_DEVICE T loadScalar(const T *p) {
  if constexpr (ReadOnly)
    return __ldg(p);
  else
    return *p;
}

template <bool ReadOnly, typename T, int N> GNNJIT_DEVICE void loadAligned(const T *p, float (&out)[N]) {
  unsigned w[vecBytes<T, N>() / 4];
  loadWords<ReadOnly>(p, w);
  widen<T>(w, out);
}

template <bool ReadOnly, typename T, int N> GNNJIT_DEVICE void loadChecked(const T *p, int count, float (&out)[N]) {
  if (count >= N && isAligned<vecBytes<T, N>()>(p)) {
    loadAligned<ReadOnly>(p, out);
    return;
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    out[i] = i < count ? toFloat(loadScalar<ReadOnly>(p + i)) : 0.0f;
}

} // namespace detail

/// Elements p[0, N) as f32 through the read-only cache. p must be aligned to
/// the vector's size.
template <typename T, int N> GNNJIT_DEVICE void ldgVecAligned(const T *p, float (&out)[N]) {
  detail::loadAligned<true>(p, out);
}
/// Elements p[0, min(count, N)) as f32 through the read-only cache; the rest
/// of `out` is 0. Any alignment.
template <typename T, int N> GNNJIT_DEVICE void ldgVec(const T *p, int count, float (&out)[N]) {
  detail::loadChecked<true>(p, count, out);
}
/// As ldgVecAligned / ldgVec, through the ordinary path: for memory this
/// kernel also writes, and for reads the compiler should be free to merge
/// and move (it picks the read-only path itself for a const __restrict__
/// pointer; __ldg's inline asm it neither merges nor hoists out of loops).
template <typename T, int N> GNNJIT_DEVICE void loadVecAligned(const T *p, float (&out)[N]) {
  detail::loadAligned<false>(p, out);
}
template <typename T, int N> GNNJIT_DEVICE void loadVec(const T *p, int count, float (&out)[N]) {
  detail::loadChecked<false>(p, count, out);
}

/// Rounds in[0, N) to T and stores them; p aligned to the vector's size.
template <typename T, int N> GNNJIT_DEVICE void storeVecAligned(T *p, const float (&in)[N]) {
  unsigned w[detail::vecBytes<T, N>() / 4];
  detail::narrow<T>(in, w);
  detail::storeWords(p, w);
}
/// Stores in[0, min(count, N)) to p; any alignment.
template <typename T, int N> GNNJIT_DEVICE void storeVec(T *p, int count, const float (&in)[N]) {
  if (count >= N && isAligned<detail::vecBytes<T, N>()>(p)) {
    storeVecAligned(p, in);
    return;
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (i < count)
      p[i] = fromFloat<T>(in[i]);
}

} // namespace gnnjit::device
