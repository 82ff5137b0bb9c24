// cuSPARSE failures as exceptions that name the call that failed.
#pragma once

#include "support/Error.h"

#include <cusparse.h>
#include <fmt/format.h>

#include <string_view>

namespace gnnjit::exec {

/// A cuSPARSE call failed. Derives from UserError, like runtime::CudaError:
/// most failures are about the machine (no device, out of memory) or sizes
/// cuSPARSE does not take (say, an int32 graph past 2^31 entries).
class CusparseError : public UserError {
public:
  CusparseError(cusparseStatus_t status, std::string_view call)
      : UserError(fmt::format("cuSPARSE call {} failed: {} ({})", call, cusparseGetErrorString(status),
                              cusparseGetErrorName(status))),
        status_(status) {}
  cusparseStatus_t status() const { return status_; }

private:
  cusparseStatus_t status_;
};

/// Throws CusparseError naming `call` unless `status` is success.
inline void cusparseCheck(cusparseStatus_t status, std::string_view call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw CusparseError(status, call);
}

} // namespace gnnjit::exec
