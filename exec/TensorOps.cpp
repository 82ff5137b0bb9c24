#include "exec/TensorOps.h"

#include "exec/KernelSource.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/DeviceBuffer.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gnnjit::exec {

namespace {

constexpr int kBlock = 256; ///< GNNJIT_TENSOR_OPS_BLOCK
/// Blocks of a checksum: enough to fill an H200 several times over, few
/// enough that the host adds their partials in no time.
constexpr int64_t kChecksumBlocks = 1024;

runtime::Kernel tensorKernel(const char *entry) {
  runtime::CompileOptions options;
  options.arch = runtime::targetArch("");
  return defaultKernelCache().kernel(kernelSource("gnnjit_tensor_ops.cu", "#include \"gnnjit/tensor_ops.cuh\"\n"),
                                     options, entry);
}

int64_t blocksFor(int64_t n) { return std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, kChecksumBlocks); }

} // namespace

Checksum checksum(const ref::Tensor &t) {
  Checksum c;
  for (double v : t.values) {
    if (!std::isfinite(v)) {
      ++c.nonFinite;
      continue;
    }
    c.sum += v;
    c.sumSq += v * v;
    c.maxAbs = std::max(c.maxAbs, std::abs(v));
  }
  return c;
}

Checksum checksum(const DeviceTensor &t, cudaStream_t stream) {
  Checksum c;
  if (t.rows == 0 || t.cols == 0)
    return c;
  const int64_t blocks = blocksFor(t.rows * t.cols);
  runtime::DeviceBuffer<double> partials(static_cast<size_t>(4 * blocks));
  const runtime::Kernel kernel = tensorKernel("gnnjit_tensor_checksum");
  const float *x = t.data;
  double *p = partials.data();
  const long long rows = t.rows, cols = t.cols, ld = t.ld;
  kernel(dim3(static_cast<unsigned>(blocks)), dim3(kBlock), 0, stream, x, rows, cols, ld, p);
  std::vector<double> host(static_cast<size_t>(4 * blocks));
  partials.download(host, stream);
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  double nonFinite = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    c.sum += host[static_cast<size_t>(4 * b)];
    c.sumSq += host[static_cast<size_t>(4 * b + 1)];
    c.maxAbs = std::max(c.maxAbs, host[static_cast<size_t>(4 * b + 2)]);
    nonFinite += host[static_cast<size_t>(4 * b + 3)];
  }
  c.nonFinite = static_cast<int64_t>(nonFinite);
  return c;
}

Agreement compare(const DeviceTensor &expected, const DeviceTensor &actual, double atolScale, cudaStream_t stream) {
  Agreement a;
  if (expected.rows != actual.rows || expected.cols != actual.cols) {
    a.shapeMismatch = true;
    a.worst = INFINITY;
    return a;
  }
  if (expected.rows == 0 || expected.cols == 0)
    return a;
  const double atol = atolScale * checksum(expected, stream).maxAbs + 1e-30;
  const int64_t blocks = blocksFor(expected.rows * expected.cols);
  runtime::DeviceBuffer<double> partials(static_cast<size_t>(2 * blocks));
  const runtime::Kernel kernel = tensorKernel("gnnjit_tensor_compare");
  const float *e = expected.data, *x = actual.data;
  double *p = partials.data();
  const long long rows = expected.rows, cols = expected.cols, ldE = expected.ld, ldA = actual.ld;
  kernel(dim3(static_cast<unsigned>(blocks)), dim3(kBlock), 0, stream, e, x, rows, cols, ldE, ldA, atol, p);
  std::vector<double> host(static_cast<size_t>(2 * blocks));
  partials.download(host, stream);
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  double where = -1;
  for (int64_t b = 0; b < blocks; ++b) // in block order: a tie keeps the first
    if (host[static_cast<size_t>(2 * b)] > a.worst) {
      a.worst = host[static_cast<size_t>(2 * b)];
      where = host[static_cast<size_t>(2 * b + 1)];
    }
  if (where < 0)
    return a;
  const auto flat = static_cast<int64_t>(where);
  a.row = flat / expected.cols;
  a.col = flat % expected.cols;
  float values[2];
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(&values[0], expected.data + a.row * expected.ld + a.col, sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(&values[1], actual.data + a.row * actual.ld + a.col, sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  a.expected = values[0];
  a.actual = values[1];
  return a;
}

void affineInPlace(const DeviceTensor &t, float scale, float shift, cudaStream_t stream) {
  if (t.ld != t.cols)
    throwInternalError("affineInPlace on a strided tensor (ld {} for {} columns)", t.ld, t.cols);
  const long long n = t.rows * t.cols;
  if (n == 0)
    return;
  const runtime::Kernel kernel = tensorKernel("gnnjit_tensor_affine");
  float *x = t.data;
  kernel(dim3(static_cast<unsigned>(blocksFor(n))), dim3(kBlock), 0, stream, x, n, scale, shift);
}

} // namespace gnnjit::exec
