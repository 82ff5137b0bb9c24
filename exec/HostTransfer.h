// Moving tensors between the reference executor's host form (double rows)
// and the runner's device form (float rows), and measuring how far a device
// result is from the reference. Used by `run --backend cuda --check`, the
// GPU tests and the benchmarks.
#pragma once

#include "exec/LayerRunner.h"
#include "ref/Tensor.h"
#include "runtime/DeviceBuffer.h"

#include <map>
#include <string>

namespace gnnjit::exec {

/// Device copies of host tensors; rows padded to `ld` = cols + padding
/// floats (padding 0: contiguous), so strided inputs can be tested.
class UploadedTensors {
public:
  UploadedTensors(const ref::TensorMap &host, int64_t padding = 0, cudaStream_t stream = nullptr);
  const DeviceTensors &tensors() const { return tensors_; }

private:
  std::map<std::string, runtime::DeviceBuffer<float>, std::less<>> buffers_;
  DeviceTensors tensors_;
};

ref::Tensor download(const DeviceTensor &t, cudaStream_t stream = nullptr);

/// How far `actual` is from `expected`: the largest |a - e| over
/// (atolScale * max|e| + |e|). With the default, 1e-4 means "within 1e-4
/// relative, or 1e-6 of the tensor's largest value where the value is near
/// zero" (float sums of thousands of terms that cancel are that far off).
struct Agreement {
  double worst = 0; ///< the largest scaled error
  int64_t row = -1, col = -1;
  double expected = 0, actual = 0;
  bool shapeMismatch = false;
};
Agreement compare(const ref::Tensor &expected, const ref::Tensor &actual, double atolScale = 1e-2);

} // namespace gnnjit::exec
