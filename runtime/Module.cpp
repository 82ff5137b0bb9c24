#include "runtime/Module.h"

#include "runtime/CudaCheck.h"

#include <fmt/format.h>

namespace gnnjit::runtime {

std::shared_ptr<const LoadedModule> LoadedModule::load(const CompiledKernel &compiled) {
  return load(compiled.cubin, compiled.name);
}

std::shared_ptr<const LoadedModule> LoadedModule::load(std::span<const uint8_t> cubin, std::string name) {
  if (cubin.empty())
    throwInternalError("loading {}: empty CUBIN", name);
  cudaLibrary_t library = nullptr;
  cudaCheck(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
            fmt::format("cudaLibraryLoadData({}, {} bytes)", name, cubin.size()));
  // make_shared cannot reach the private constructor.
  return std::shared_ptr<const LoadedModule>(new LoadedModule(library, std::move(name)));
}

LoadedModule::~LoadedModule() {
  // Unloading during process teardown may fail once the runtime is gone; there
  // is nothing left to free then.
  if (library_)
    (void)cudaLibraryUnload(library_);
}

Kernel LoadedModule::kernel(std::string_view entry) const {
  std::string name(entry);
  cudaKernel_t handle = nullptr;
  cudaCheck(cudaLibraryGetKernel(&handle, library_, name.c_str()),
            fmt::format("cudaLibraryGetKernel({}, \"{}\")", name_, name));
  return Kernel(shared_from_this(), handle, std::move(name));
}

void Kernel::launch(dim3 grid, dim3 block, size_t sharedBytes, cudaStream_t stream, void **args) const {
  constexpr size_t kDefaultSharedLimit = 48 * 1024;
  const void *function = reinterpret_cast<const void *>(handle_);
  // The call text is formatted only on failure: launches are on the hot path.
  if (sharedBytes > kDefaultSharedLimit) {
    cudaError_t status = cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(sharedBytes));
    if (status != cudaSuccess)
      throw CudaError(status, fmt::format("cudaFuncSetAttribute({}, max dynamic shared = {} bytes)", name_,
                                          sharedBytes));
  }
  cudaError_t status = cudaLaunchKernel(function, grid, block, args, sharedBytes, stream);
  if (status != cudaSuccess)
    throw CudaError(status, fmt::format("cudaLaunchKernel({}, grid ({}, {}, {}), block ({}, {}, {}), {} shared bytes)",
                                        name_, grid.x, grid.y, grid.z, block.x, block.y, block.z, sharedBytes));
}

} // namespace gnnjit::runtime
