// The last JIT stages: a CUBIN loaded through the CUDA runtime's library API
// (never libcuda directly) and the kernels found in it.
#pragma once

#include "runtime/Compile.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace gnnjit::runtime {

class Kernel;

/// A loaded CUBIN, unloaded when the last owner lets go. Kernels keep their
/// module alive.
class LoadedModule : public std::enable_shared_from_this<LoadedModule> {
public:
  /// Loads with cudaLibraryLoadData; throws CudaError (no device, wrong arch).
  static std::shared_ptr<const LoadedModule> load(const CompiledKernel &compiled);
  static std::shared_ptr<const LoadedModule> load(std::span<const uint8_t> cubin, std::string name);

  ~LoadedModule();
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;

  /// The kernel of that (extern "C" or lowered) name; throws CudaError naming it.
  Kernel kernel(std::string_view entry) const;

  cudaLibrary_t handle() const { return library_; }
  const std::string &name() const { return name_; }

private:
  LoadedModule(cudaLibrary_t library, std::string name) : library_(library), name_(std::move(name)) {}

  cudaLibrary_t library_;
  std::string name_;
};

/// A kernel ready to launch on the caller's stream.
class Kernel {
public:
  Kernel(std::shared_ptr<const LoadedModule> module, cudaKernel_t handle, std::string name)
      : module_(std::move(module)), handle_(handle), name_(std::move(name)) {}

  /// Launches with cudaLaunchKernel; `args` points at each argument in order.
  /// Opts in to more than 48 KiB of dynamic shared memory when asked for.
  /// Throws CudaError naming the kernel and the launch shape.
  void launch(dim3 grid, dim3 block, size_t sharedBytes, cudaStream_t stream, void **args) const;

  /// launch() with the arguments themselves; each must match the kernel's
  /// parameter type exactly (no conversions happen).
  template <typename... Args>
  void operator()(dim3 grid, dim3 block, size_t sharedBytes, cudaStream_t stream, const Args &...args) const {
    void *pointers[] = {const_cast<void *>(static_cast<const void *>(&args))..., nullptr};
    launch(grid, block, sharedBytes, stream, pointers);
  }

  cudaKernel_t handle() const { return handle_; }
  const std::string &name() const { return name_; }

private:
  std::shared_ptr<const LoadedModule> module_;
  cudaKernel_t handle_;
  std::string name_;
};

} // namespace gnnjit::runtime
