// What every gnnjit device header shares. These headers are compiled by nvcc
// and by NVRTC, which has no standard library: only CUDA built-ins and the
// toolkit's cuda_fp16.h / cuda_bf16.h may be used.
#pragma once

#if !defined(__CUDACC__)
#error "gnnjit device headers are CUDA code: compile them with nvcc or NVRTC"
#endif

#define GNNJIT_DEVICE __device__ __forceinline__

namespace gnnjit::device {

/// All 32 lanes of a warp.
constexpr unsigned kFullMask = 0xffffffffu;

/// True for 1, 2, 4, 8, 16 and 32: the group widths a warp splits into.
__host__ __device__ constexpr bool isGroupWidth(int width) {
  return width >= 1 && width <= 32 && (width & (width - 1)) == 0;
}

/// IEEE infinities without <cmath> (NVRTC has no INFINITY macro).
GNNJIT_DEVICE float positiveInfinity() { return __int_as_float(0x7f800000); }
GNNJIT_DEVICE float negativeInfinity() { return __int_as_float(static_cast<int>(0xff800000u)); }

} // namespace gnnjit::device
