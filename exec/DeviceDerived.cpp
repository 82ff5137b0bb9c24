#include "exec/DeviceDerived.h"

#include "exec/CubCall.h"
#include "exec/GraphKernels.h"
#include "runtime/CudaCheck.h"

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

/// One request's first half: each row's segment and heavy-row starts (the
/// prefix sums of their counts: entry `rows` is the total), and the two
/// totals copied to `totals` (device memory) on the stream.
template <typename Index>
runtime::DeviceBuffer<unsigned long long> countSegmentsOf(const SegmentRequest &request, uint32_t rows,
                                                          unsigned long long *totals, cudaStream_t stream) {
  const auto *offsets = static_cast<const Index *>(request.csr->offsets.data());
  runtime::DeviceBuffer<unsigned long long> counts(2 * (static_cast<size_t>(rows) + 1));
  runtime::DeviceBuffer<unsigned long long> starts(counts.size());
  unsigned long long *segmentsOf = counts.data(), *heavy = counts.data() + rows + 1;
  GNNJIT_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), stream));
  GNNJIT_CUDA_CHECK(
      build::countSegments<Index>(offsets, rows, request.threshold, request.length, segmentsOf, heavy, stream));
  exclusiveSum(segmentsOf, starts.data(), rows + 1, stream);
  exclusiveSum(heavy, starts.data() + rows + 1, rows + 1, stream);
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(&totals[0], starts.data() + rows, sizeof(unsigned long long),
                                    cudaMemcpyDeviceToDevice, stream));
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(&totals[1], starts.data() + 2 * (static_cast<size_t>(rows) + 1) - 1,
                                    sizeof(unsigned long long), cudaMemcpyDeviceToDevice, stream));
  return starts;
}

/// The second half, once the totals are on the host: the segment arrays.
template <typename Index>
HeavySegments fillSegmentsOf(const SegmentRequest &request, uint32_t rows, const unsigned long long *starts,
                             const unsigned long long *totals, cudaStream_t stream) {
  const auto *offsets = static_cast<const Index *>(request.csr->offsets.data());
  const int64_t threshold = request.threshold, length = request.length;
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
    GNNJIT_CUDA_CHECK(
        build::fillSegments<Index>(offsets, rows, threshold, length, starts, starts + rows + 1, out, stream));
  }
  // The last entry closes the last heavy row's segments: the segment total,
  // copied on the device (a copy from pageable host memory would wait for
  // the stream first).
  static_assert(sizeof(unsigned long long) == sizeof(int64_t));
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(s.heavyFirstSegment.data() + s.numHeavyRows, starts + rows, sizeof(int64_t),
                                    cudaMemcpyDeviceToDevice, stream));
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

std::vector<HeavySegments> segmentsOnDevice(const std::vector<SegmentRequest> &requests, graph::IndexType index,
                                            int64_t rows, cudaStream_t stream) {
  const uint32_t n = rowCount(rows);
  const bool int32 = index == graph::IndexType::Int32;
  if (requests.empty())
    return {};
  // Every request's two totals gathered on the device, then one copy back
  // (to pageable memory: the copy returns once the stream has reached it).
  runtime::DeviceBuffer<unsigned long long> deviceTotals(2 * requests.size());
  std::vector<runtime::DeviceBuffer<unsigned long long>> starts;
  for (size_t k = 0; k < requests.size(); ++k)
    starts.push_back(int32 ? countSegmentsOf<int32_t>(requests[k], n, deviceTotals.data() + 2 * k, stream)
                           : countSegmentsOf<int64_t>(requests[k], n, deviceTotals.data() + 2 * k, stream));
  std::vector<unsigned long long> totals(deviceTotals.size());
  GNNJIT_CUDA_CHECK(
      cudaMemcpyAsync(totals.data(), deviceTotals.data(), deviceTotals.bytes(), cudaMemcpyDeviceToHost, stream));
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<HeavySegments> out;
  for (size_t k = 0; k < requests.size(); ++k)
    out.push_back(int32 ? fillSegmentsOf<int32_t>(requests[k], n, starts[k].data(), &totals[2 * k], stream)
                        : fillSegmentsOf<int64_t>(requests[k], n, starts[k].data(), &totals[2 * k], stream));
  // The prefix sums go back to the allocator, stream-ordered after the fills.
  return out;
}

} // namespace gnnjit::exec
