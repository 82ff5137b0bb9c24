#include "exec/GraphKernels.h"

#include "exec/device/graph_build.cuh"
#include "exec/device/graph_derived.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

namespace gnnjit::exec::build {

namespace {

constexpr unsigned kThreads = 256;

unsigned blocksFor(uint64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

/// Launches `kernel` over `threads` threads (nothing for none).
template <typename Kernel, typename... Args>
cudaError_t launch(Kernel kernel, uint64_t threads, cudaStream_t stream, Args... args) {
  if (threads == 0)
    return cudaSuccess;
  kernel<<<blocksFor(threads), kThreads, 0, stream>>>(args...);
  return cudaGetLastError();
}

} // namespace

template <typename Id>
cudaError_t markInputEdges(const Id *src, const Id *dst, const float *weight, uint32_t numEdges, uint32_t numNodes,
                           LoopMode mode, const CandidateArrays &a, Summary *summary, cudaStream_t stream) {
  return launch(kernels::markInputEdges<Id>, numEdges, stream, src, dst, weight, numEdges, numNodes,
                static_cast<int>(mode), a.srcKey, a.dstKey, a.candidate, a.hasLoop, a.lastLoop, summary);
}
template cudaError_t markInputEdges<int32_t>(const int32_t *, const int32_t *, const float *, uint32_t, uint32_t,
                                             LoopMode, const CandidateArrays &, Summary *, cudaStream_t);
template cudaError_t markInputEdges<int64_t>(const int64_t *, const int64_t *, const float *, uint32_t, uint32_t,
                                             LoopMode, const CandidateArrays &, Summary *, cudaStream_t);

cudaError_t markAddedLoops(uint32_t numEdges, uint32_t numNodes, LoopMode mode, const CandidateArrays &a,
                           Summary *summary, cudaStream_t stream) {
  return launch(kernels::markAddedLoops, numNodes, stream, numEdges, numNodes, static_cast<int>(mode),
                static_cast<const uint32_t *>(a.hasLoop), a.srcKey, a.dstKey, a.candidate, a.keptAdded, summary);
}

cudaError_t gatherKeys(const uint32_t *index, const uint32_t *table, uint32_t *out, uint32_t count,
                       cudaStream_t stream) {
  return launch(kernels::gatherKeys, count, stream, index, table, out, count);
}

template <typename Index, typename Id>
cudaError_t emitIncomingFrom(const IncomingArgs &a, Summary *summary, cudaStream_t stream) {
  return launch(kernels::emitIncoming<Index, Id>, a.count, stream, a.rows, a.order, static_cast<const Id *>(a.src),
                a.count, a.numEdges, a.numNodes, a.addedRank, a.weightIn, a.lastLoop, a.loopWeight,
                static_cast<Index *>(a.offsets),
                static_cast<Index *>(a.indices), static_cast<Index *>(a.edgeIds), a.weightOut, a.transposeKey,
                a.position, a.loopsOf, summary);
}

template <typename Index> cudaError_t emitIncoming(const IncomingArgs &a, Summary *summary, cudaStream_t stream) {
  return a.src64 ? emitIncomingFrom<Index, int64_t>(a, summary, stream)
                 : emitIncomingFrom<Index, int32_t>(a, summary, stream);
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
cudaError_t degreeSums(const Index *inOffsets, const Index *outOffsets, const uint32_t *loopsOf, uint32_t numNodes,
                       uint32_t *inDegree, uint32_t *outDegree, Summary *summary, cudaStream_t stream) {
  return launch(kernels::degreeSums<Index>, numNodes, stream, inOffsets, outOffsets, loopsOf, numNodes, inDegree,
                outDegree, summary);
}
template cudaError_t degreeSums<int32_t>(const int32_t *, const int32_t *, const uint32_t *, uint32_t, uint32_t *,
                                         uint32_t *, Summary *, cudaStream_t);
template cudaError_t degreeSums<int64_t>(const int64_t *, const int64_t *, const uint32_t *, uint32_t, uint32_t *,
                                         uint32_t *, Summary *, cudaStream_t);

template <typename Index>
cudaError_t finishSummary(const uint32_t *inSorted, const uint32_t *outSorted, uint32_t numNodes,
                          const Index *inOffsets, Summary *summary, cudaStream_t stream) {
  kernels::finishSummary<Index><<<1, 1, 0, stream>>>(inSorted, outSorted, numNodes, inOffsets, summary);
  return cudaGetLastError();
}
template cudaError_t finishSummary<int32_t>(const uint32_t *, const uint32_t *, uint32_t, const int32_t *, Summary *,
                                            cudaStream_t);
template cudaError_t finishSummary<int64_t>(const uint32_t *, const uint32_t *, uint32_t, const int64_t *, Summary *,
                                            cudaStream_t);

cudaError_t sortPairs(void *temp, size_t &tempBytes, uint32_t *const keys[2], uint32_t *const values[2], int &current,
                      uint32_t count, int bits, cudaStream_t stream) {
  cub::DoubleBuffer<uint32_t> k(keys[current], keys[1 - current]), v(values[current], values[1 - current]);
  const cudaError_t status = cub::DeviceRadixSort::SortPairs(temp, tempBytes, k, v, count, 0, bits, stream);
  if (temp != nullptr && status == cudaSuccess)
    current = k.Current() == keys[0] ? 0 : 1;
  return status;
}

cudaError_t sortKeys(void *temp, size_t &tempBytes, const uint32_t *keysIn, uint32_t *keysOut, uint32_t count,
                     cudaStream_t stream) {
  return cub::DeviceRadixSort::SortKeys(temp, tempBytes, keysIn, keysOut, count, 0, 32, stream);
}

cudaError_t exclusiveSum(void *temp, size_t &tempBytes, const uint32_t *in, uint32_t *out, uint32_t count,
                         cudaStream_t stream) {
  return cub::DeviceScan::ExclusiveSum(temp, tempBytes, in, out, count, stream);
}

cudaError_t exclusiveSum(void *temp, size_t &tempBytes, const unsigned long long *in, unsigned long long *out,
                         uint32_t count, cudaStream_t stream) {
  return cub::DeviceScan::ExclusiveSum(temp, tempBytes, in, out, count, stream);
}

template <typename Index>
cudaError_t rowDegrees(const Index *offsets, const float *weights, uint32_t rows, float *out, cudaStream_t stream) {
  return launch(kernels::rowDegrees<Index>, rows, stream, offsets, weights, rows, out);
}
template cudaError_t rowDegrees<int32_t>(const int32_t *, const float *, uint32_t, float *, cudaStream_t);
template cudaError_t rowDegrees<int64_t>(const int64_t *, const float *, uint32_t, float *, cudaStream_t);

template <typename Index>
cudaError_t countSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                          unsigned long long *segmentsOf, unsigned long long *heavy, cudaStream_t stream) {
  return launch(kernels::countSegments<Index>, rows, stream, offsets, rows, threshold, length, segmentsOf, heavy);
}
template cudaError_t countSegments<int32_t>(const int32_t *, uint32_t, long long, long long, unsigned long long *,
                                            unsigned long long *, cudaStream_t);
template cudaError_t countSegments<int64_t>(const int64_t *, uint32_t, long long, long long, unsigned long long *,
                                            unsigned long long *, cudaStream_t);

template <typename Index>
cudaError_t fillSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                         const unsigned long long *firstSegment, const unsigned long long *heavyIndex,
                         const SegmentArrays &out, cudaStream_t stream) {
  return launch(kernels::fillSegments<Index>, rows, stream, offsets, rows, threshold, length, firstSegment,
                heavyIndex, static_cast<Index *>(out.segmentRows), out.segmentBegins, out.segmentHeavy,
                static_cast<Index *>(out.heavyRows), out.heavyFirstSegment);
}
template cudaError_t fillSegments<int32_t>(const int32_t *, uint32_t, long long, long long, const unsigned long long *,
                                           const unsigned long long *, const SegmentArrays &, cudaStream_t);
template cudaError_t fillSegments<int64_t>(const int64_t *, uint32_t, long long, long long, const unsigned long long *,
                                           const unsigned long long *, const SegmentArrays &, cudaStream_t);

} // namespace gnnjit::exec::build
