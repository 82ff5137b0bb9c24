#include "exec/HostTransfer.h"

#include "runtime/CudaCheck.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gnnjit::exec {

UploadedTensors::UploadedTensors(const ref::TensorMap &host, int64_t padding, cudaStream_t stream) {
  for (const auto &[name, t] : host) {
    const int64_t ld = t.cols + padding;
    std::vector<float> rows(static_cast<size_t>(t.rows * ld), 0.0f);
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t c = 0; c < t.cols; ++c)
        rows[static_cast<size_t>(r * ld + c)] = static_cast<float>(t.at(r, c));
    auto &buffer = buffers_.emplace(name, runtime::DeviceBuffer<float>(rows.size())).first->second;
    if (!rows.empty())
      buffer.upload(rows, stream);
    tensors_[name] = DeviceTensor{buffer.data(), t.rows, t.cols, ld};
  }
}

ref::Tensor download(const DeviceTensor &t, cudaStream_t stream) {
  ref::Tensor host(t.rows, t.cols);
  if (t.rows * t.cols == 0)
    return host;
  std::vector<float> rows(static_cast<size_t>(t.rows * t.ld));
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(rows.data(), t.data, rows.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c)
      host.at(r, c) = rows[static_cast<size_t>(r * t.ld + c)];
  return host;
}

Agreement compare(const ref::Tensor &expected, const ref::Tensor &actual, double atolScale) {
  Agreement a;
  if (expected.rows != actual.rows || expected.cols != actual.cols) {
    a.shapeMismatch = true;
    a.worst = INFINITY;
    return a;
  }
  double scale = 0;
  for (double v : expected.values)
    scale = std::max(scale, std::fabs(v));
  const double atol = atolScale * scale + 1e-30;
  for (int64_t r = 0; r < expected.rows; ++r)
    for (int64_t c = 0; c < expected.cols; ++c) {
      const double e = expected.at(r, c), x = actual.at(r, c);
      if (std::isnan(x) && std::isnan(e))
        continue; // both NaN: they agree
      const double err = std::isnan(x) != std::isnan(e) ? INFINITY : std::fabs(x - e) / (atol + std::fabs(e));
      if (err > a.worst) {
        a.worst = err, a.row = r, a.col = c, a.expected = e, a.actual = x;
      }
    }
  return a;
}

} // namespace gnnjit::exec
