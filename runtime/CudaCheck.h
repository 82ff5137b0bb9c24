// CUDA runtime failures as exceptions that name the call that failed.
#pragma once

#include "support/Error.h"

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace gnnjit::runtime {

/// A CUDA runtime call failed. Blamed on the machine for a missing device or
/// driver and for running out of device memory; on gnnjit for everything
/// else (an invalid argument, a kernel that faulted).
class CudaError : public LibraryError {
public:
  CudaError(cudaError_t code, std::string_view call);
  cudaError_t code() const { return code_; }

private:
  cudaError_t code_;
};

/// Throws CudaError naming `call` unless `code` is cudaSuccess.
inline void cudaCheck(cudaError_t code, std::string_view call) {
  if (code != cudaSuccess)
    throw CudaError(code, call);
}

} // namespace gnnjit::runtime

/// Checks a CUDA runtime call, naming it by its own text.
#define GNNJIT_CUDA_CHECK(expr) ::gnnjit::runtime::cudaCheck((expr), #expr)
