#include "exec/DeviceDerived.h"

#include "exec/CubCall.h"
#include "exec/GraphKernels.h"
#include "runtime/CudaCheck.h"

#include <array>
#include <limits>

namespace gnnjit::exec {

namespace {

uint32_t rowCount(int64_t rows) {
  if (rows < 0 || rows >= std::numeric_limits<uint32_t>::max())
    throwInternalError("{} rows for a graph built on the device", rows);
  return static_cast<uint32_t>(rows);
}

/// Exclusive prefix sums of `count` values into `out`, on `stream`.
void exclusiveSum(const unsigned long long *in, unsigned long long *out, uint32_t count, cudaStream_t stream) {
  runCub([&](void *temp, size_t &bytes) { return build::exclusiveSum(temp, bytes, in, out, count, stream); },
         "the segments' prefix sums (cub::DeviceScan)");
}

template <typename Index>
HeavySegments segmentsOf(const DeviceCsrArrays &csr, uint32_t rows, int64_t threshold, int64_t length,
                         cudaStream_t stream) {
  const auto *offsets = static_cast<const Index *>(csr.offsets.data());
  // Counts per row, then their prefix sums: entry `rows` is 0 and becomes the total.
  runtime::DeviceBuffer<unsigned long long> counts(2 * (static_cast<size_t>(rows) + 1));
  runtime::DeviceBuffer<unsigned long long> starts(counts.size());
  unsigned long long *segmentsOf = counts.data(), *heavy = counts.data() + rows + 1;
  GNNJIT_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), stream));
  GNNJIT_CUDA_CHECK(build::countSegments<Index>(offsets, rows, threshold, length, segmentsOf, heavy, stream));
  exclusiveSum(segmentsOf, starts.data(), rows + 1, stream);
  exclusiveSum(heavy, starts.data() + rows + 1, rows + 1, stream);
  std::array<unsigned long long, 2> totals{};
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(&totals[0], starts.data() + rows, sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(&totals[1], starts.data() + 2 * (static_cast<size_t>(rows) + 1) - 1,
                                    sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));

  HeavySegments s;
  s.numSegments = static_cast<int64_t>(totals[0]);
  s.numHeavyRows = static_cast<int64_t>(totals[1]);
  s.segmentRows = runtime::DeviceMemory(static_cast<size_t>(s.numSegments) * sizeof(Index));
  s.heavyRows = runtime::DeviceMemory(static_cast<size_t>(s.numHeavyRows) * sizeof(Index));
  s.segmentBegins = runtime::DeviceBuffer<int64_t>(static_cast<size_t>(s.numSegments));
  s.segmentHeavy = runtime::DeviceBuffer<int64_t>(static_cast<size_t>(s.numSegments));
  s.heavyFirstSegment = runtime::DeviceBuffer<int64_t>(static_cast<size_t>(s.numHeavyRows) + 1);
  if (s.numHeavyRows > 0) {
    const build::SegmentArrays out{s.segmentRows.data(), s.heavyRows.data(),
                                   reinterpret_cast<long long *>(s.segmentBegins.data()),
                                   reinterpret_cast<long long *>(s.segmentHeavy.data()),
                                   reinterpret_cast<long long *>(s.heavyFirstSegment.data())};
    GNNJIT_CUDA_CHECK(build::fillSegments<Index>(offsets, rows, threshold, length, starts.data(),
                                                 starts.data() + rows + 1, out, stream));
  }
  // The last entry closes the last heavy row's segments (copied from a host
  // value: pageable memory is staged before the call returns).
  const int64_t end = s.numSegments;
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(s.heavyFirstSegment.data() + s.numHeavyRows, &end, sizeof(int64_t),
                                    cudaMemcpyHostToDevice, stream));
  // The scratch above goes back to the allocator, stream-ordered after the fill.
  return s;
}

} // namespace

runtime::DeviceBuffer<float> degreesOnDevice(const DeviceCsrArrays &csr, graph::IndexType index, int64_t rows,
                                             bool weighted, cudaStream_t stream) {
  const uint32_t n = rowCount(rows);
  runtime::DeviceBuffer<float> out(n);
  if (n == 0)
    return out;
  const float *weights = weighted && !csr.weights.empty() ? csr.weights.data() : nullptr;
  if (index == graph::IndexType::Int32)
    GNNJIT_CUDA_CHECK(build::rowDegrees(static_cast<const int32_t *>(csr.offsets.data()), weights, n, out.data(), stream));
  else
    GNNJIT_CUDA_CHECK(build::rowDegrees(static_cast<const int64_t *>(csr.offsets.data()), weights, n, out.data(), stream));
  return out;
}

HeavySegments segmentsOnDevice(const DeviceCsrArrays &csr, graph::IndexType index, int64_t rows, int64_t threshold,
                               int64_t length, cudaStream_t stream) {
  const uint32_t n = rowCount(rows);
  return index == graph::IndexType::Int32 ? segmentsOf<int32_t>(csr, n, threshold, length, stream)
                                          : segmentsOf<int64_t>(csr, n, threshold, length, stream);
}

} // namespace gnnjit::exec
