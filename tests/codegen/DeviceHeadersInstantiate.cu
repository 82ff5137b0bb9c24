// Instantiates every device helper, so a compiler sees all of them. Compiled
// by nvcc (ctest codegen_nvcc_device_headers) and by NVRTC
// (test_codegen_nvrtc) from this same file.
#include "gnnjit/gnnjit_device.cuh"
#include "gnnjit/tensor_ops.cuh" // whole-tensor kernels; generated modules do not include it

using namespace gnnjit::device;

template <int Width> __device__ void reduceAll(float *out, const float *in, const int *ints, const double *doubles) {
  const int t = static_cast<int>(threadIdx.x);
  out[0 * 32 + t] = groupSum<Width>(in[t]);
  out[1 * 32 + t] = groupMax<Width>(in[t]);
  out[2 * 32 + t] = groupMin<Width>(in[t]);
  out[3 * 32 + t] = static_cast<float>(groupSum<Width>(ints[t]) + groupMax<Width>(ints[t]) + groupMin<Width>(ints[t]));
  out[4 * 32 + t] = static_cast<float>(groupSum<Width>(doubles[t]) + groupMax<Width>(doubles[t]));
  out[5 * 32 + t] = groupBroadcast<Width>(in[t], 0) + static_cast<float>(groupLane<Width>() + groupInBlock<Width>());
}

extern "C" __global__ void gnnjit_test_warp(float *out, const float *in, const int *ints, const double *doubles) {
  reduceAll<1>(out, in, ints, doubles);
  reduceAll<2>(out, in, ints, doubles);
  reduceAll<4>(out, in, ints, doubles);
  reduceAll<8>(out, in, ints, doubles);
  reduceAll<16>(out, in, ints, doubles);
  reduceAll<32>(out, in, ints, doubles);
}

template <typename T, int N> __device__ void copyRows(T *dst, const T *src, int count) {
  float v[N];
  ldgVec(src, count, v);
  storeVec(dst, count, v);
  ldgVecAligned(src, v);
  storeVecAligned(dst, v);
  loadVec(src, count, v);
  loadVecAligned(src, v);
  storeVec(dst + 1, count - 1, v);
}

extern "C" __global__ void gnnjit_test_vector_load(float *f32, __half *f16, __nv_bfloat16 *bf16, int count) {
  copyRows<float, 1>(f32, f32 + 64, count);
  copyRows<float, 2>(f32, f32 + 64, count);
  copyRows<float, kVecWidth<float>>(f32, f32 + 64, count);
  copyRows<__half, 2>(f16, f16 + 64, count);
  copyRows<__half, 4>(f16, f16 + 64, count);
  copyRows<__half, kVecWidth<__half>>(f16, f16 + 64, count);
  copyRows<__nv_bfloat16, 2>(bf16, bf16 + 64, count);
  copyRows<__nv_bfloat16, 4>(bf16, bf16 + 64, count);
  copyRows<__nv_bfloat16, kVecWidth<__nv_bfloat16>>(bf16, bf16 + 64, count);
}

extern "C" __global__ void gnnjit_test_convert(float *out, __half *f16, __nv_bfloat16 *bf16) {
  const int t = static_cast<int>(threadIdx.x);
  out[t] = toFloat(out[t]) + toFloat(f16[t]) + toFloat(bf16[t]);
  f16[t] = fromFloat<__half>(out[t]);
  bf16[t] = fromFloat<__nv_bfloat16>(out[t]);
  out[t] = fromFloat<float>(out[t]);
  const float2 h = unpackWord<__half>(packWord<__half>(out[0], out[1]));
  const float2 b = unpackWord<__nv_bfloat16>(packWord<__nv_bfloat16>(out[0], out[1]));
  out[t + 32] = h.x + h.y + b.x + b.y;
}

template <typename Packed>
__device__ void argReduce(unsigned long long *slots, float *values, int *indices, float value, int index) {
  unsigned long long mine = Packed::pack(value, index);
  mine = groupReduce<32>(mine, [](unsigned long long a, unsigned long long b) { return Packed::combine(a, b); });
  if (threadIdx.x == 0)
    Packed::atomic(slots, mine);
  __syncthreads();
  const unsigned long long result = *slots;
  values[threadIdx.x] = result == Packed::kEmpty ? 0.0f : Packed::value(result);
  indices[threadIdx.x] = Packed::index(result);
}

extern "C" __global__ void gnnjit_test_packed_atomic(unsigned long long *slots, float *values, int *indices) {
  const int t = static_cast<int>(threadIdx.x);
  argReduce<PackedMax>(slots, values, indices, values[t], t);
  argReduce<PackedMin>(slots + 1, values, indices, values[t], t);
  slots[2] = MaxOp{}(slots[2], slots[3]) + MinOp{}(slots[2], slots[3]);
}

extern "C" __global__ void gnnjit_test_online_softmax(float *out, float *lse, const float *scores, const float *values,
                                                      int edges) {
  OnlineSoftmax state;
  float acc = 0.0f;
  for (int e = static_cast<int>(threadIdx.x); e < edges; e += 32) {
    const SoftmaxStep step = state.update(scores[e]);
    acc = acc * step.rescale + step.weight * values[e];
  }
  const OnlineSoftmax merged = groupMerge<32>(state);
  acc = groupSum<32>(acc * OnlineSoftmax::scaleFactor(state.max, merged.max));
  OnlineSoftmax other;
  const SoftmaxStep joined = other.merge(merged);
  out[threadIdx.x] = acc * merged.inverseSum() * joined.weight;
  lse[threadIdx.x] = merged.logSumExp() + other.logSumExp();
}
