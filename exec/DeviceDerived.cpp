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

/// One request's first half: each row's first segment and heavy-row index
/// (the prefix sums of their counts: entry `rows` holds the totals), and
/// the totals copied to `totals` (device memory) on the stream.
template <typename Index>
runtime::DeviceMemory countSegmentsOf(const SegmentRequest &request, uint32_t rows, unsigned long long *totals,
                                      cudaStream_t stream) {
  const auto *offsets = static_cast<const Index *>(request.csr->offsets.data());
  const size_t entries = static_cast<size_t>(rows) + 1;
  runtime::DeviceMemory counts(entries * sizeof(build::SegmentCount)), starts(counts.bytes());
  auto *in = static_cast<build::SegmentCount *>(counts.data());
  auto *out = static_cast<build::SegmentCount *>(starts.data());
  GNNJIT_CUDA_CHECK(build::countSegments<Index>(offsets, rows, request.threshold, request.length, in, stream));
  runCub([&](void *temp, size_t &bytes) { return build::exclusiveSum(temp, bytes, in, out, rows + 1, stream); },
         "the segments' prefix sums (cub::DeviceScan)");
  static_assert(sizeof(build::SegmentCount) == 2 * sizeof(unsigned long long));
  GNNJIT_CUDA_CHECK(
      cudaMemcpyAsync(totals, out + rows, sizeof(build::SegmentCount), cudaMemcpyDeviceToDevice, stream));
  return starts;
}

/// The second half, once the totals are on the host: the segment arrays.
template <typename Index>
HeavySegments fillSegmentsOf(const SegmentRequest &request, uint32_t rows, const runtime::DeviceMemory &starts,
                             const unsigned long long *totals, cudaStream_t stream) {
  const auto *offsets = static_cast<const Index *>(request.csr->offsets.data());
  HeavySegments s;
  s.numSegments = static_cast<int64_t>(totals[0]);
  s.numHeavyRows = static_cast<int64_t>(totals[1]);
  s.segmentRows = runtime::DeviceMemory(static_cast<size_t>(s.numSegments) * sizeof(Index));
  s.heavyRows = runtime::DeviceMemory(static_cast<size_t>(s.numHeavyRows) * sizeof(Index));
  s.segmentBegins = runtime::DeviceBuffer<int64_t>(static_cast<size_t>(s.numSegments));
  s.segmentHeavy = runtime::DeviceBuffer<int64_t>(static_cast<size_t>(s.numSegments));
  s.heavyFirstSegment = runtime::DeviceBuffer<int64_t>(static_cast<size_t>(s.numHeavyRows) + 1);
  static_assert(sizeof(long long) == sizeof(int64_t));
  const build::SegmentArrays out{s.segmentRows.data(), s.heavyRows.data(),
                                 reinterpret_cast<long long *>(s.segmentBegins.data()),
                                 reinterpret_cast<long long *>(s.segmentHeavy.data()),
                                 reinterpret_cast<long long *>(s.heavyFirstSegment.data())};
  // Also closes heavyFirstSegment with the segment total.
  GNNJIT_CUDA_CHECK(build::fillSegments<Index>(offsets, rows, request.threshold, request.length,
                                               static_cast<const build::SegmentCount *>(starts.data()), out, stream));
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

std::vector<runtime::DeviceMemory> countSegmentsOnDevice(const std::vector<SegmentRequest> &requests,
                                                         graph::IndexType index, int64_t rows,
                                                         unsigned long long *deviceTotals, cudaStream_t stream) {
  const uint32_t n = rowCount(rows);
  std::vector<runtime::DeviceMemory> starts;
  for (size_t k = 0; k < requests.size(); ++k)
    starts.push_back(index == graph::IndexType::Int32
                         ? countSegmentsOf<int32_t>(requests[k], n, deviceTotals + 2 * k, stream)
                         : countSegmentsOf<int64_t>(requests[k], n, deviceTotals + 2 * k, stream));
  return starts;
}

std::vector<HeavySegments> fillSegmentsOnDevice(const std::vector<SegmentRequest> &requests,
                                                const std::vector<runtime::DeviceMemory> &starts,
                                                const unsigned long long *totals, graph::IndexType index,
                                                int64_t rows, cudaStream_t stream) {
  const uint32_t n = rowCount(rows);
  std::vector<HeavySegments> out;
  for (size_t k = 0; k < requests.size(); ++k)
    out.push_back(index == graph::IndexType::Int32
                      ? fillSegmentsOf<int32_t>(requests[k], n, starts[k], &totals[2 * k], stream)
                      : fillSegmentsOf<int64_t>(requests[k], n, starts[k], &totals[2 * k], stream));
  // The prefix sums go back to the allocator (the caller's), stream-ordered after the fills.
  return out;
}

std::vector<HeavySegments> segmentsOnDevice(const std::vector<SegmentRequest> &requests, graph::IndexType index,
                                            int64_t rows, cudaStream_t stream) {
  if (requests.empty())
    return {};
  // Every request's two totals gathered on the device, then one copy back
  // (to pageable memory: the copy returns once the stream has reached it).
  runtime::DeviceBuffer<unsigned long long> deviceTotals(2 * requests.size());
  const std::vector<runtime::DeviceMemory> starts =
      countSegmentsOnDevice(requests, index, rows, deviceTotals.data(), stream);
  std::vector<unsigned long long> totals(deviceTotals.size());
  GNNJIT_CUDA_CHECK(
      cudaMemcpyAsync(totals.data(), deviceTotals.data(), deviceTotals.bytes(), cudaMemcpyDeviceToHost, stream));
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return fillSegmentsOnDevice(requests, starts, totals.data(), index, rows, stream);
}

} // namespace gnnjit::exec
