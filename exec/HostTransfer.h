// Moving tensors between the host and the runner's device form (float rows),
// and measuring how far a device result is from the reference. Large
// tensors move in row blocks through one bounded host buffer, so a GPU run
// never holds a tensor-sized host copy. Used by `run`, the GPU tests and the
// benchmarks.
#pragma once

#include "exec/LayerRunner.h"
#include "ref/Tensor.h"
#include "runtime/DeviceBuffer.h"

#include <functional>
#include <map>
#include <string>

namespace gnnjit::exec {

/// Device tensors a caller owns, by name (the inputs `gnnjit run` makes).
class OwnedTensors {
public:
  /// A new rows x cols tensor with rows `ld` floats apart (0: contiguous);
  /// its contents are undefined until written.
  const DeviceTensor &add(const std::string &name, int64_t rows, int64_t cols, int64_t ld = 0);
  const DeviceTensors &views() const { return views_; }
  size_t bytes() const;

private:
  std::map<std::string, runtime::DeviceBuffer<float>, std::less<>> buffers_;
  DeviceTensors views_;
};

/// Device copies of host tensors; rows padded to `ld` = cols + padding
/// floats (padding 0: contiguous), so strided inputs can be tested.
class UploadedTensors {
public:
  UploadedTensors(const ref::TensorMap &host, int64_t padding = 0, cudaStream_t stream = nullptr);
  const DeviceTensors &tensors() const { return owned_.views(); }

private:
  OwnedTensors owned_;
};

/// The most host memory one block of a transfer takes.
inline constexpr size_t kTransferBlockBytes = size_t{64} << 20;

/// fn(firstRow, rows, values) for consecutive blocks of rows of `t`, each
/// downloaded into one reused host buffer (values: rows x cols floats,
/// packed); every call's data is valid until it returns.
void forEachRowBlock(const DeviceTensor &t, const std::function<void(int64_t, int64_t, const float *)> &fn,
                     cudaStream_t stream = nullptr);

/// Fills `t` block by block: fill(firstRow, rows, values) writes rows x cols
/// floats (packed) that are then uploaded.
void uploadRowBlocks(const DeviceTensor &t, const std::function<void(int64_t, int64_t, float *)> &fill,
                     cudaStream_t stream = nullptr);

/// Copies a host tensor into a device tensor of its shape.
void upload(const ref::Tensor &host, const DeviceTensor &t, cudaStream_t stream = nullptr);

/// The whole device tensor as a host tensor (tests and the reference check).
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
/// The same against a device tensor, read in blocks.
Agreement compare(const ref::Tensor &expected, const DeviceTensor &actual, double atolScale = 1e-2,
                  cudaStream_t stream = nullptr);

} // namespace gnnjit::exec
