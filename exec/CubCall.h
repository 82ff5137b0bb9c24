// CUB's two-call protocol (the first call sizes the scratch, the second
// runs) with the scratch from the installed device allocator, freed
// stream-ordered after the call. For the launches of exec/GraphKernels.h.
#pragma once

#include "runtime/CudaCheck.h"
#include "runtime/DeviceBuffer.h"

#include <cstddef>

namespace gnnjit::exec {

/// Runs call(temp, tempBytes) twice: to size, then to run. `what` names it in errors.
template <typename Call> void runCub(Call &&call, const char *what) {
  size_t bytes = 0;
  runtime::cudaCheck(call(nullptr, bytes), what);
  runtime::DeviceMemory temp(bytes);
  runtime::cudaCheck(call(temp.data(), bytes), what);
}

} // namespace gnnjit::exec
