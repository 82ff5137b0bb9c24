#include "runtime/CudaCheck.h"

#include <fmt/format.h>

namespace gnnjit::runtime {

namespace {

std::string describe(cudaError_t code, std::string_view call) {
  std::string message = fmt::format("CUDA call {} failed: {} ({})", call, cudaGetErrorString(code),
                                    cudaGetErrorName(code));
  if (code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver)
    message += "; this machine has no usable GPU (compile-only mode still works)";
  return message;
}

} // namespace

CudaError::CudaError(cudaError_t code, std::string_view call)
    : UserError(describe(code, call)), code_(code) {
  // A failed call leaves the error as the runtime's last error; clear it so the
  // next unrelated check does not report it again.
  (void)cudaGetLastError();
}

} // namespace gnnjit::runtime
