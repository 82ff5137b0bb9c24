#include "exec/GraphKernels.h"

#include "exec/device/graph_build.cuh"
#include "exec/device/graph_derived.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>

namespace gnnjit::exec::build {

namespace {

constexpr unsigned kThreads = 256;

unsigned blocksFor(uint64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

/// Grid of a grid-stride kernel: enough blocks to fill the GPU a few times
/// over, no more (their per-block atomics stay few).
unsigned strideBlocksFor(uint64_t threads) { return std::min(blocksFor(threads), 1024u); }

/// Launches `kernel` over `threads` threads (nothing for none).
template <typename Kernel, typename... Args>
cudaError_t launch(Kernel kernel, uint64_t threads, cudaStream_t stream, Args... args) {
  if (threads == 0)
    return cudaSuccess;
  kernel<<<blocksFor(threads), kThreads, 0, stream>>>(args...);
  return cudaGetLastError();
}

} // namespace

template <typename Id, typename Key>
cudaError_t markInputEdgesWith(const Id *src, const Id *dst, const float *weight, uint32_t numEdges,
                               uint32_t numNodes, LoopMode mode, const CandidateArrays &a, Summary *summary,
                               cudaStream_t stream) {
  return launch(kernels::markInputEdges<Id, Key>, numEdges, stream, src, dst, weight, numEdges, numNodes,
                static_cast<int>(mode), a.srcBits, static_cast<Key *>(a.key), a.candidate, a.hasLoop, a.lastLoop,
                summary);
}

template <typename Id>
cudaError_t markInputEdges(const Id *src, const Id *dst, const float *weight, uint32_t numEdges, uint32_t numNodes,
                           LoopMode mode, const CandidateArrays &a, Summary *summary, cudaStream_t stream) {
  return a.key64 ? markInputEdgesWith<Id, uint64_t>(src, dst, weight, numEdges, numNodes, mode, a, summary, stream)
                 : markInputEdgesWith<Id, uint32_t>(src, dst, weight, numEdges, numNodes, mode, a, summary, stream);
}
template cudaError_t markInputEdges<int32_t>(const int32_t *, const int32_t *, const float *, uint32_t, uint32_t,
                                             LoopMode, const CandidateArrays &, Summary *, cudaStream_t);
template cudaError_t markInputEdges<int64_t>(const int64_t *, const int64_t *, const float *, uint32_t, uint32_t,
                                             LoopMode, const CandidateArrays &, Summary *, cudaStream_t);

template <typename Key>
cudaError_t markAddedLoopsWith(uint32_t numEdges, uint32_t numNodes, LoopMode mode, const CandidateArrays &a,
                               Summary *summary, cudaStream_t stream) {
  return launch(kernels::markAddedLoops<Key>, numNodes, stream, numEdges, numNodes, static_cast<int>(mode), a.srcBits,
                static_cast<const uint32_t *>(a.hasLoop), static_cast<Key *>(a.key), a.candidate, a.keptAdded,
                summary);
}

cudaError_t markAddedLoops(uint32_t numEdges, uint32_t numNodes, LoopMode mode, const CandidateArrays &a,
                           Summary *summary, cudaStream_t stream) {
  return a.key64 ? markAddedLoopsWith<uint64_t>(numEdges, numNodes, mode, a, summary, stream)
                 : markAddedLoopsWith<uint32_t>(numEdges, numNodes, mode, a, summary, stream);
}

template <typename Index, typename Key>
cudaError_t emitIncomingWith(const IncomingArgs &a, Summary *summary, cudaStream_t stream) {
  if (a.count == 0)
    return cudaSuccess;
  kernels::emitIncoming<Index, Key><<<strideBlocksFor(a.count), kThreads, 0, stream>>>(
      static_cast<const Key *>(a.keys), a.order, a.srcBits, a.count, a.numEdges, a.numNodes, a.addedRank, a.weightIn,
      a.lastLoop, a.loopWeight, static_cast<Index *>(a.offsets), static_cast<Index *>(a.indices),
      static_cast<Index *>(a.edgeIds), a.weightOut, a.rows, a.transposeKey, a.position, summary);
  return cudaGetLastError();
}

template <typename Index> cudaError_t emitIncoming(const IncomingArgs &a, Summary *summary, cudaStream_t stream) {
  return a.key64 ? emitIncomingWith<Index, uint64_t>(a, summary, stream)
                 : emitIncomingWith<Index, uint32_t>(a, summary, stream);
}
template cudaError_t emitIncoming<int32_t>(const IncomingArgs &, Summary *, cudaStream_t);
template cudaError_t emitIncoming<int64_t>(const IncomingArgs &, Summary *, cudaStream_t);

template <typename Index> cudaError_t emitOutgoing(const OutgoingArgs &a, cudaStream_t stream) {
  return launch(kernels::emitOutgoing<Index>, a.count, stream, a.cols, a.order, a.rows, a.count, a.numNodes,
                static_cast<const Index *>(a.edgeIdsIn), a.weightIn, static_cast<Index *>(a.offsets),
                static_cast<Index *>(a.indices), static_cast<Index *>(a.edgeIds),
                static_cast<Index *>(a.peerPositions), a.weightOut);
}
template cudaError_t emitOutgoing<int32_t>(const OutgoingArgs &, cudaStream_t);
template cudaError_t emitOutgoing<int64_t>(const OutgoingArgs &, cudaStream_t);

template <typename Index>
cudaError_t degreeSums(const Index *inOffsets, const Index *inIndices, const Index *outOffsets, uint32_t numNodes,
                       const DegreeHistogram &histogram, Summary *summary, cudaStream_t stream) {
  if (numNodes == 0)
    return cudaSuccess;
  kernels::degreeSums<Index><<<strideBlocksFor(numNodes), kThreads, 0, stream>>>(
      inOffsets, inIndices, outOffsets, numNodes, histogram.counts, histogram.bins, summary);
  return cudaGetLastError();
}
template cudaError_t degreeSums<int32_t>(const int32_t *, const int32_t *, const int32_t *, uint32_t,
                                         const DegreeHistogram &, Summary *, cudaStream_t);
template cudaError_t degreeSums<int64_t>(const int64_t *, const int64_t *, const int64_t *, uint32_t,
                                         const DegreeHistogram &, Summary *, cudaStream_t);

template <typename Index>
cudaError_t finishSummary(const DegreeHistogram &cumulative, uint32_t numNodes, const Index *inOffsets,
                          Summary *summary, cudaStream_t stream) {
  kernels::finishSummary<Index><<<1, 32, 0, stream>>>(cumulative.counts, cumulative.bins, numNodes, inOffsets, summary);
  return cudaGetLastError();
}
template cudaError_t finishSummary<int32_t>(const DegreeHistogram &, uint32_t, const int32_t *, Summary *,
                                            cudaStream_t);
template cudaError_t finishSummary<int64_t>(const DegreeHistogram &, uint32_t, const int64_t *, Summary *,
                                            cudaStream_t);

cudaError_t inclusiveSum(void *temp, size_t &tempBytes, uint32_t *values, uint64_t count, cudaStream_t stream) {
  return cub::DeviceScan::InclusiveSum(temp, tempBytes, values, values, count, stream);
}

namespace {

template <typename Key>
cudaError_t sortPairsOf(void *temp, size_t &tempBytes, Key *const keys[2], uint32_t *const values[2], int &current,
                        uint32_t count, int bits, cudaStream_t stream) {
  cub::DoubleBuffer<Key> k(keys[current], keys[1 - current]);
  cub::DoubleBuffer<uint32_t> v(values[current], values[1 - current]);
  const cudaError_t status = cub::DeviceRadixSort::SortPairs(temp, tempBytes, k, v, count, 0, bits, stream);
  if (temp != nullptr && status == cudaSuccess)
    current = k.Current() == keys[0] ? 0 : 1;
  return status;
}

} // namespace

cudaError_t sortPairs(void *temp, size_t &tempBytes, uint32_t *const keys[2], uint32_t *const values[2], int &current,
                      uint32_t count, int bits, cudaStream_t stream) {
  return sortPairsOf(temp, tempBytes, keys, values, current, count, bits, stream);
}

cudaError_t sortPairs(void *temp, size_t &tempBytes, uint64_t *const keys[2], uint32_t *const values[2], int &current,
                      uint32_t count, int bits, cudaStream_t stream) {
  return sortPairsOf(temp, tempBytes, keys, values, current, count, bits, stream);
}

cudaError_t exclusiveSum(void *temp, size_t &tempBytes, const uint32_t *in, uint32_t *out, uint32_t count,
                         cudaStream_t stream) {
  return cub::DeviceScan::ExclusiveSum(temp, tempBytes, in, out, count, stream);
}

namespace {

/// Adds segment counts field by field (CUB's scan operator).
struct AddCounts {
  __host__ __device__ SegmentCount operator()(const SegmentCount &a, const SegmentCount &b) const {
    return {a.segments + b.segments, a.heavy + b.heavy};
  }
};

} // namespace

cudaError_t exclusiveSum(void *temp, size_t &tempBytes, const SegmentCount *in, SegmentCount *out, uint32_t count,
                         cudaStream_t stream) {
  return cub::DeviceScan::ExclusiveScan(temp, tempBytes, in, out, AddCounts{}, SegmentCount{0, 0}, count, stream);
}

template <typename Index>
cudaError_t rowDegrees(const Index *offsets, const float *weights, uint32_t rows, float *out, cudaStream_t stream) {
  return launch(kernels::rowDegrees<Index>, rows, stream, offsets, weights, rows, out);
}
template cudaError_t rowDegrees<int32_t>(const int32_t *, const float *, uint32_t, float *, cudaStream_t);
template cudaError_t rowDegrees<int64_t>(const int64_t *, const float *, uint32_t, float *, cudaStream_t);

template <typename Index>
cudaError_t countSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                          SegmentCount *counts, cudaStream_t stream) {
  return launch(kernels::countSegments<Index>, static_cast<uint64_t>(rows) + 1, stream, offsets, rows, threshold,
                length, counts);
}
template cudaError_t countSegments<int32_t>(const int32_t *, uint32_t, long long, long long, SegmentCount *,
                                            cudaStream_t);
template cudaError_t countSegments<int64_t>(const int64_t *, uint32_t, long long, long long, SegmentCount *,
                                            cudaStream_t);

template <typename Index>
cudaError_t fillSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                         const SegmentCount *starts, const SegmentArrays &out, cudaStream_t stream) {
  return launch(kernels::fillSegments<Index>, static_cast<uint64_t>(rows) + 1, stream, offsets, rows, threshold,
                length, starts, static_cast<Index *>(out.segmentRows), out.segmentBegins, out.segmentHeavy,
                static_cast<Index *>(out.heavyRows), out.heavyFirstSegment);
}
template cudaError_t fillSegments<int32_t>(const int32_t *, uint32_t, long long, long long, const SegmentCount *,
                                           const SegmentArrays &, cudaStream_t);
template cudaError_t fillSegments<int64_t>(const int64_t *, uint32_t, long long, long long, const SegmentCount *,
                                           const SegmentArrays &, cudaStream_t);

} // namespace gnnjit::exec::build
