// Small test kernels over the device helpers (codegen/device/*.cuh), with the
// entries each defines. test_codegen_device_gpu launches them and checks the
// results against the CPU; test_codegen_device_sources only compiles them for
// sm_90, so a broken kernel source shows up on machines without a GPU too.
#pragma once

#include "codegen/DeviceHeaders.h"
#include "runtime/Source.h"

#include <string>
#include <string_view>
#include <vector>

namespace gnnjit::test {

struct DeviceHelperKernel {
  runtime::Source source;
  std::vector<std::string> entries; ///< extern "C" kernels in the source
};

/// The embedded device headers, as NVRTC is handed them.
inline std::vector<runtime::Header> embeddedDeviceHeaders() {
  std::vector<runtime::Header> out;
  for (const codegen::DeviceHeader &header : codegen::deviceHeaders())
    out.push_back({std::string(header.name), std::string(header.text)});
  return out;
}

/// groupSum / groupMax / groupMin / groupBroadcast / groupLane / groupInBlock
/// for one group width, one value per thread.
inline constexpr std::string_view kWarpKernelText = R"cuda(
#include "gnnjit/gnnjit_device.cuh"
using namespace gnnjit::device;

template <int Width>
__device__ void groupOps(const float *in, const int *ints, float *sums, float *maxs, float *mins, float *last,
                         int *intSums, int *lanes, int *groups) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const float v = in[t];
  sums[t] = groupSum<Width>(v);
  maxs[t] = groupMax<Width>(v);
  mins[t] = groupMin<Width>(v);
  last[t] = groupBroadcast<Width>(v, Width - 1);
  intSums[t] = groupSum<Width>(ints[t]);
  lanes[t] = groupLane<Width>();
  groups[t] = groupInBlock<Width>();
}

#define WARP_ENTRY(W)                                                                                          \
  extern "C" __global__ void warp_w##W(const float *in, const int *ints, float *sums, float *maxs, float *mins, \
                                       float *last, int *intSums, int *lanes, int *groups) {                   \
    groupOps<W>(in, ints, sums, maxs, mins, last, intSums, lanes, groups);                                     \
  }
WARP_ENTRY(1)
WARP_ENTRY(2)
WARP_ENTRY(4)
WARP_ENTRY(8)
WARP_ENTRY(16)
WARP_ENTRY(32)
)cuda";

/// One row of `len` elements, chunks of N per thread: loadVec / ldgVec widen
/// `in` into `widened` / `widenedLdg` (all N per chunk, so the zero tail
/// shows), storeVec writes the widened values back to `copy`, and `src`
/// (f32) is narrowed into `narrowed`.
inline constexpr std::string_view kVectorKernelText = R"cuda(
#include "gnnjit/gnnjit_device.cuh"
using namespace gnnjit::device;

template <typename T, int N>
__device__ void vecRow(const T *in, T *copy, float *widened, float *widenedLdg, const float *src, T *narrowed,
                       int len) {
  const int chunks = (len + N - 1) / N;
  for (int c = static_cast<int>(threadIdx.x); c < chunks; c += static_cast<int>(blockDim.x)) {
    const int start = c * N;
    float v[N];
    loadVec(in + start, len - start, v);
    for (int i = 0; i < N; ++i)
      widened[start + i] = v[i];
    storeVec(copy + start, len - start, v);
    float w[N];
    ldgVec(in + start, len - start, w);
    for (int i = 0; i < N; ++i)
      widenedLdg[start + i] = w[i];
    float s[N]; // plain loads: N floats may be more than one 16-byte vector
    for (int i = 0; i < N; ++i)
      s[i] = start + i < len ? src[start + i] : 0.0f;
    storeVec(narrowed + start, len - start, s);
  }
}

#define VEC_ENTRY(NAME, T, N)                                                                                  \
  extern "C" __global__ void NAME(const T *in, T *copy, float *widened, float *widenedLdg, const float *src,  \
                                  T *narrowed, int len) {                                                     \
    vecRow<T, N>(in, copy, widened, widenedLdg, src, narrowed, len);                                          \
  }
VEC_ENTRY(vec_f32_4, float, 4)
VEC_ENTRY(vec_f32_2, float, 2)
VEC_ENTRY(vec_f32_1, float, 1)
VEC_ENTRY(vec_f16_8, __half, 8)
VEC_ENTRY(vec_f16_4, __half, 4)
VEC_ENTRY(vec_f16_2, __half, 2)
VEC_ENTRY(vec_bf16_8, __nv_bfloat16, 8)
VEC_ENTRY(vec_bf16_4, __nv_bfloat16, 4)
VEC_ENTRY(vec_bf16_2, __nv_bfloat16, 2)
)cuda";

/// PackedMax / PackedMin: every element folded into one slot, either one
/// atomic per thread or a warp's combine() butterfly then one atomic per
/// warp; `decode` reads the slot back through value() and index().
inline constexpr std::string_view kPackedKernelText = R"cuda(
#include "gnnjit/gnnjit_device.cuh"
using namespace gnnjit::device;

template <typename Packed> struct Combine {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return Packed::combine(a, b);
  }
};

template <typename Packed>
__device__ void foldEach(unsigned long long *slot, const float *values, const int *indices, int n) {
  const int stride = static_cast<int>(gridDim.x * blockDim.x);
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += stride)
    Packed::atomic(slot, Packed::pack(values[i], indices[i]));
}

template <typename Packed>
__device__ void foldWarps(unsigned long long *slot, const float *values, const int *indices, int n) {
  const int stride = static_cast<int>(gridDim.x * blockDim.x);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  // base is the same on every lane of a warp, so all 32 lanes shuffle together.
  for (int base = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) - lane; base < n; base += stride) {
    const int i = base + lane;
    unsigned long long mine = i < n ? Packed::pack(values[i], indices[i]) : Packed::kEmpty;
    mine = groupReduce<32>(mine, Combine<Packed>{});
    if (lane == 0)
      Packed::atomic(slot, mine);
  }
}

template <typename Packed> __device__ void decode(const unsigned long long *slot, float *value, int *index) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    value[0] = Packed::value(*slot);
    index[0] = Packed::index(*slot);
  }
}

extern "C" __global__ void packed_max_each(unsigned long long *slot, const float *values, const int *indices, int n) {
  foldEach<PackedMax>(slot, values, indices, n);
}
extern "C" __global__ void packed_min_each(unsigned long long *slot, const float *values, const int *indices, int n) {
  foldEach<PackedMin>(slot, values, indices, n);
}
extern "C" __global__ void packed_max_warp(unsigned long long *slot, const float *values, const int *indices, int n) {
  foldWarps<PackedMax>(slot, values, indices, n);
}
extern "C" __global__ void packed_min_warp(unsigned long long *slot, const float *values, const int *indices, int n) {
  foldWarps<PackedMin>(slot, values, indices, n);
}
extern "C" __global__ void packed_max_decode(const unsigned long long *slot, float *value, int *index) {
  decode<PackedMax>(slot, value, index);
}
extern "C" __global__ void packed_min_decode(const unsigned long long *slot, float *value, int *index) {
  decode<PackedMin>(slot, value, index);
}
)cuda";

/// One group of Width lanes per row (rows given by CSR offsets): each lane
/// updates an OnlineSoftmax over a strided subset of the row, keeping a
/// weighted accumulator of `values`; groupMerge<Width> merges the states and
/// the accumulators are rescaled and summed as online_softmax.cuh describes.
/// Every lane writes its result (index row * Width + lane).
inline constexpr std::string_view kSoftmaxKernelText = R"cuda(
#include "gnnjit/gnnjit_device.cuh"
using namespace gnnjit::device;

template <int Width>
__device__ void softmaxRows(const float *scores, const float *values, const int *rowStart, int rows, float *lse,
                            float *inverse, float *maxOut, float *weighted) {
  const int group = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) / Width;
  const int lane = groupLane<Width>();
  const bool active = group < rows;
  const int begin = active ? rowStart[group] : 0;
  const int end = active ? rowStart[group + 1] : 0;
  OnlineSoftmax state;
  float acc = 0.0f;
  for (int j = begin + lane; j < end; j += Width) {
    const SoftmaxStep step = state.update(scores[j]);
    acc = acc * step.rescale + step.weight * values[j];
  }
  const OnlineSoftmax merged = groupMerge<Width>(state);
  acc *= OnlineSoftmax::scaleFactor(state.max, merged.max);
  acc = groupSum<Width>(acc);
  if (active) {
    const int t = group * Width + lane;
    lse[t] = merged.logSumExp();
    inverse[t] = merged.inverseSum();
    maxOut[t] = merged.max;
    weighted[t] = acc * merged.inverseSum();
  }
}

#define SOFTMAX_ENTRY(W)                                                                                      \
  extern "C" __global__ void softmax_w##W(const float *scores, const float *values, const int *rowStart,     \
                                          int rows, float *lse, float *inverse, float *maxOut,               \
                                          float *weighted) {                                                 \
    softmaxRows<W>(scores, values, rowStart, rows, lse, inverse, maxOut, weighted);                           \
  }
SOFTMAX_ENTRY(1)
SOFTMAX_ENTRY(4)
SOFTMAX_ENTRY(32)
)cuda";

inline DeviceHelperKernel warpKernels() {
  return {{"device_warp_test.cu", std::string(kWarpKernelText), embeddedDeviceHeaders()},
          {"warp_w1", "warp_w2", "warp_w4", "warp_w8", "warp_w16", "warp_w32"}};
}

inline DeviceHelperKernel vectorKernels() {
  return {{"device_vector_test.cu", std::string(kVectorKernelText), embeddedDeviceHeaders()},
          {"vec_f32_4", "vec_f32_2", "vec_f32_1", "vec_f16_8", "vec_f16_4", "vec_f16_2", "vec_bf16_8", "vec_bf16_4",
           "vec_bf16_2"}};
}

inline DeviceHelperKernel packedKernels() {
  return {{"device_packed_test.cu", std::string(kPackedKernelText), embeddedDeviceHeaders()},
          {"packed_max_each", "packed_min_each", "packed_max_warp", "packed_min_warp", "packed_max_decode",
           "packed_min_decode"}};
}

inline DeviceHelperKernel softmaxKernels() {
  return {{"device_softmax_test.cu", std::string(kSoftmaxKernelText), embeddedDeviceHeaders()},
          {"softmax_w1", "softmax_w4", "softmax_w32"}};
}

inline std::vector<DeviceHelperKernel> deviceHelperKernels() {
  return {warpKernels(), vectorKernels(), packedKernels(), softmaxKernels()};
}

} // namespace gnnjit::test
