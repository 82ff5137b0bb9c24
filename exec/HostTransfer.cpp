#include "exec/HostTransfer.h"

#include "runtime/CudaCheck.h"
#include "support/CheckedMath.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gnnjit::exec {

namespace {

/// Rows per block: as many as fit kTransferBlockBytes, at least one.
int64_t blockRows(const DeviceTensor &t) {
  const int64_t rowBytes = std::max<int64_t>(1, t.cols) * static_cast<int64_t>(sizeof(float));
  return std::max<int64_t>(1, static_cast<int64_t>(kTransferBlockBytes) / rowBytes);
}

/// Folds one (expected, actual) pair into `a`.
void fold(Agreement &a, double atol, int64_t r, int64_t c, double e, double x) {
  if ((std::isnan(x) && std::isnan(e)) || (std::isinf(e) && x == e))
    return; // both NaN, or the same infinity: they agree
  const bool finite = std::isfinite(x) && std::isfinite(e);
  const double err = !finite ? INFINITY : std::fabs(x - e) / (atol + std::fabs(e));
  if (err > a.worst) {
    a.worst = err, a.row = r, a.col = c, a.expected = e, a.actual = x;
  }
}

/// Marks `a` as a mismatch (an infinite error) when the shapes differ.
bool shapesDiffer(const ref::Tensor &expected, int64_t rows, int64_t cols, Agreement &a) {
  if (expected.rows == rows && expected.cols == cols)
    return false;
  a.shapeMismatch = true;
  a.worst = INFINITY;
  return true;
}

double toleranceFor(const ref::Tensor &expected, double atolScale) {
  double scale = 0;
  for (double v : expected.values)
    scale = std::max(scale, std::fabs(v));
  return atolScale * scale + 1e-30;
}

} // namespace

const DeviceTensor &OwnedTensors::add(const std::string &name, int64_t rows, int64_t cols, int64_t ld) {
  if (ld == 0)
    ld = cols;
  const uint64_t count = checkedProduct({rows, ld}, fmt::format("the floats of tensor '{}'", name));
  auto &buffer = buffers_.insert_or_assign(name, runtime::DeviceBuffer<float>(static_cast<size_t>(count))).first->second;
  return views_[name] = DeviceTensor{buffer.data(), rows, cols, ld};
}

size_t OwnedTensors::bytes() const {
  size_t total = 0;
  for (const auto &[name, b] : buffers_)
    total += b.bytes();
  return total;
}

UploadedTensors::UploadedTensors(const ref::TensorMap &host, int64_t padding, cudaStream_t stream) {
  for (const auto &[name, t] : host) {
    const DeviceTensor &d = owned_.add(name, t.rows, t.cols, t.cols + padding);
    if (padding > 0 && t.rows > 0) // the padding is never read; keep it defined for tools that check
      GNNJIT_CUDA_CHECK(cudaMemsetAsync(d.data, 0, static_cast<size_t>(d.rows * d.ld) * sizeof(float), stream));
    upload(t, d, stream);
  }
}

void forEachRowBlock(const DeviceTensor &t, const std::function<void(int64_t, int64_t, const float *)> &fn,
                     cudaStream_t stream) {
  const int64_t rowsPerBlock = blockRows(t);
  std::vector<float> block(static_cast<size_t>(std::min(rowsPerBlock, t.rows) * t.cols));
  for (int64_t first = 0; first < t.rows; first += rowsPerBlock) {
    const int64_t rows = std::min(rowsPerBlock, t.rows - first);
    if (t.cols > 0)
      GNNJIT_CUDA_CHECK(cudaMemcpy2DAsync(block.data(), static_cast<size_t>(t.cols) * sizeof(float),
                                          t.data + first * t.ld, static_cast<size_t>(t.ld) * sizeof(float),
                                          static_cast<size_t>(t.cols) * sizeof(float), static_cast<size_t>(rows),
                                          cudaMemcpyDeviceToHost, stream));
    GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    fn(first, rows, block.data());
  }
}

void uploadRowBlocks(const DeviceTensor &t, const std::function<void(int64_t, int64_t, float *)> &fill,
                     cudaStream_t stream) {
  const int64_t rowsPerBlock = blockRows(t);
  std::vector<float> block(static_cast<size_t>(std::min(rowsPerBlock, t.rows) * t.cols));
  for (int64_t first = 0; first < t.rows; first += rowsPerBlock) {
    const int64_t rows = std::min(rowsPerBlock, t.rows - first);
    fill(first, rows, block.data());
    if (t.cols > 0)
      GNNJIT_CUDA_CHECK(cudaMemcpy2DAsync(t.data + first * t.ld, static_cast<size_t>(t.ld) * sizeof(float),
                                          block.data(), static_cast<size_t>(t.cols) * sizeof(float),
                                          static_cast<size_t>(t.cols) * sizeof(float), static_cast<size_t>(rows),
                                          cudaMemcpyHostToDevice, stream));
    GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream)); // the block is refilled next
  }
}

void upload(const ref::Tensor &host, const DeviceTensor &t, cudaStream_t stream) {
  uploadRowBlocks(
      t,
      [&](int64_t first, int64_t rows, float *values) {
        const double *from = host.values.data() + first * host.cols;
        std::transform(from, from + rows * host.cols, values, [](double v) { return static_cast<float>(v); });
      },
      stream);
}

ref::Tensor download(const DeviceTensor &t, cudaStream_t stream) {
  ref::Tensor host(t.rows, t.cols);
  forEachRowBlock(
      t,
      [&](int64_t first, int64_t rows, const float *values) {
        std::copy(values, values + rows * t.cols, host.values.begin() + first * t.cols);
      },
      stream);
  return host;
}

Agreement compare(const ref::Tensor &expected, const ref::Tensor &actual, double atolScale) {
  Agreement a;
  if (shapesDiffer(expected, actual.rows, actual.cols, a))
    return a;
  const double atol = toleranceFor(expected, atolScale);
  for (int64_t r = 0; r < expected.rows; ++r)
    for (int64_t c = 0; c < expected.cols; ++c)
      fold(a, atol, r, c, expected.at(r, c), actual.at(r, c));
  return a;
}

Agreement compare(const ref::Tensor &expected, const DeviceTensor &actual, double atolScale, cudaStream_t stream) {
  Agreement a;
  if (shapesDiffer(expected, actual.rows, actual.cols, a))
    return a;
  const double atol = toleranceFor(expected, atolScale);
  forEachRowBlock(
      actual,
      [&](int64_t first, int64_t rows, const float *values) {
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < actual.cols; ++c)
            fold(a, atol, first + r, c, expected.at(first + r, c), values[r * actual.cols + c]);
      },
      stream);
  return a;
}

} // namespace gnnjit::exec
