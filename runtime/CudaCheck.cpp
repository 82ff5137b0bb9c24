#include "runtime/CudaCheck.h"

#include <fmt/format.h>

namespace gnnjit::runtime {

namespace {

std::string describe(cudaError_t code, std::string_view call) {
  std::string message = fmt::format("CUDA call {} failed: {} ({})", call, cudaGetErrorString(code),
                                    cudaGetErrorName(code));
  if (code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver)
    message += "; this machine has no usable GPU (compile-only mode still works)";
  else if (code == cudaErrorMemoryAllocation)
    message += "; the GPU has too little free memory for this run (other processes may hold some)";
  return message;
}

LibraryError::Blame blameFor(cudaError_t code) {
  switch (code) {
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorMemoryAllocation:
  case cudaErrorDevicesUnavailable:
  case cudaErrorSystemNotReady:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorUnsupportedPtxVersion:
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorInitializationError:
    return LibraryError::Blame::Machine;
  default:
    return LibraryError::Blame::Gnnjit;
  }
}

} // namespace

CudaError::CudaError(cudaError_t code, std::string_view call)
    : LibraryError(describe(code, call), blameFor(code)), code_(code) {
  // A failed call leaves the error as the runtime's last error; clear it so the
  // next unrelated check does not report it again.
  (void)cudaGetLastError();
}

} // namespace gnnjit::runtime
