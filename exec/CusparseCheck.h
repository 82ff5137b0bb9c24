// cuSPARSE failures as exceptions that name the call that failed.
#pragma once

#include "support/Error.h"

#include <cusparse.h>
#include <fmt/format.h>

#include <string_view>

namespace gnnjit::exec {

/// A cuSPARSE call failed. Like runtime::CudaError, blamed on the machine
/// when it ran out of memory or has no usable device, on gnnjit otherwise.
class CusparseError : public LibraryError {
public:
  CusparseError(cusparseStatus_t status, std::string_view call)
      : LibraryError(fmt::format("cuSPARSE call {} failed: {} ({})", call, cusparseGetErrorString(status),
                                 cusparseGetErrorName(status)),
                     blameFor(status)),
        status_(status) {}
  cusparseStatus_t status() const { return status_; }

private:
  static Blame blameFor(cusparseStatus_t status) {
    return status == CUSPARSE_STATUS_ALLOC_FAILED || status == CUSPARSE_STATUS_ARCH_MISMATCH ||
                   status == CUSPARSE_STATUS_NOT_INITIALIZED
               ? Blame::Machine
               : Blame::Gnnjit;
  }

  cusparseStatus_t status_;
};

/// Throws CusparseError naming `call` unless `status` is success.
inline void cusparseCheck(cusparseStatus_t status, std::string_view call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw CusparseError(status, call);
}

} // namespace gnnjit::exec
