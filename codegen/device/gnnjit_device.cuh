// Every gnnjit device helper. Generated kernels include this one header; it
// is served from memory to NVRTC and written beside an exported .cu for nvcc.
#pragma once

#include "gnnjit/common.cuh"
#include "gnnjit/convert.cuh"
#include "gnnjit/dropout.cuh"
#include "gnnjit/online_softmax.cuh"
#include "gnnjit/packed_atomic.cuh"
#include "gnnjit/vector_load.cuh"
#include "gnnjit/warp.cuh"
