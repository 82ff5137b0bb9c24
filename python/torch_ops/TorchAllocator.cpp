// The allocator half of gnnjit's torch operator library: torch's caching
// allocator behind AllocatorBridge.h's C table, whose address
// gnnjit_eager::allocator_bridge() gives gnnjit._cuda to install in
// gnnjit._core (no Python or GIL per allocation).
#include "python/core/AllocatorBridge.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

namespace gnnjit::torch_ops {

namespace {

void *allocate(size_t bytes, void *stream) noexcept {
  try {
    const cudaStream_t on =
        stream != nullptr ? static_cast<cudaStream_t>(stream) : c10::cuda::getCurrentCUDAStream().stream();
    return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(bytes, on);
  } catch (...) { // the caller asks again through Python, which raises torch's error with its message
    return nullptr;
  }
}

void release(void *data) noexcept {
  try {
    c10::cuda::CUDACachingAllocator::raw_delete(data);
  } catch (...) { // nothing to return the memory to: torch's allocator does not know it
  }
}

constexpr GnnjitAllocatorBridge bridge{GNNJIT_ALLOCATOR_BRIDGE_VERSION, &allocate, &release};

int64_t bridgeAddress() { return reinterpret_cast<int64_t>(&bridge); }

} // namespace

TORCH_LIBRARY_FRAGMENT(gnnjit_eager, m) { m.def("allocator_bridge() -> int", &bridgeAddress); }

} // namespace gnnjit::torch_ops
