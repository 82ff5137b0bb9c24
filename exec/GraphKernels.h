// The launches of the graph kernels nvcc compiles (exec/GraphKernels.cu:
// exec/device/graph_build.cuh, graph_derived.cuh, and CUB's radix sort and
// scan), behind plain declarations so that the C++ that drives them
// (DeviceBuild.cpp, DeviceDerived.cpp) needs no nvcc. Each returns the
// launch's cudaError_t; `Index` is int32_t or int64_t (the graph's index
// type), `Id` that of the input edges. Sorts and scans follow CUB's
// two-call protocol: a null `temp` asks for `tempBytes`.
#pragma once

#include "graph/NearestRank.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gnnjit::exec::build {

/// What the build reads back in its one synchronisation. All counters are
/// 64-bit so atomics on them are exact (deterministic whatever the order).
struct Summary {
  unsigned long long badEdge;   ///< ~(lowest input edge naming a node out of range), 0: none
  unsigned long long badWeight; ///< ~(lowest input edge with a non-finite weight), 0: none
  unsigned long long numEdges;       ///< stored edges (the incoming CSR's last offset)
  unsigned long long addedEdges;     ///< loops cleaning added (and kept)
  unsigned long long selfLoops;      ///< stored i -> i edges
  unsigned long long isolatedNodes;  ///< no stored edge to or from another node
  unsigned long long spanSum;        ///< sum of |i - j| over the stored edges j -> i
  unsigned long long inSquares, outSquares; ///< sums of squared in- and out-degrees
  /// Nearest-rank percentiles (50, 90, 99, 99.9), min and max of in- and out-degrees.
  unsigned long long inRanked[6], outRanked[6];
};

/// How self loops are handled (graph::SelfLoops, as plain ints for the kernels).
enum LoopMode : int { kKeep = 0, kRemove = 1, kAddMissing = 2, kReplace = 3, kAddRemaining = 4 };

/// The arrays of one build; sizes: `count` candidates (the input edges, then
/// one loop per node when loops are added), `numNodes` (+ 1 for offsets).
struct CandidateArrays {
  void *key;   ///< each candidate's sort key: uint64_t where key64, else uint32_t
  bool key64;
  int srcBits; ///< the low bits of a key that hold the source
  uint32_t *candidate, *hasLoop, *lastLoop, *keptAdded, *addedRank;
};

template <typename Id>
cudaError_t markInputEdges(const Id *src, const Id *dst, const float *weight, uint32_t numEdges, uint32_t numNodes,
                           LoopMode mode, const CandidateArrays &a, Summary *summary, cudaStream_t stream);
cudaError_t markAddedLoops(uint32_t numEdges, uint32_t numNodes, LoopMode mode, const CandidateArrays &a,
                           Summary *summary, cudaStream_t stream);

/// What emitIncoming reads and writes.
struct IncomingArgs {
  const void *keys; ///< the candidates' keys, sorted (CandidateArrays::key)
  bool key64;
  int srcBits;
  const uint32_t *order; ///< the candidates in key order
  const uint32_t *addedRank, *lastLoop;
  const float *weightIn; ///< the input's weights, or null (its edges weigh 1)
  float loopWeight;      ///< what an added loop weighs without an own loop's weight
  uint32_t count, numEdges, numNodes;
  void *offsets, *indices, *edgeIds; ///< Index
  float *weightOut;
  uint32_t *rows, *transposeKey, *position;
};
template <typename Index> cudaError_t emitIncoming(const IncomingArgs &a, Summary *summary, cudaStream_t stream);

/// What emitOutgoing reads and writes.
struct OutgoingArgs {
  const uint32_t *cols, *order, *rows;
  uint32_t count, numNodes;
  const void *edgeIdsIn; ///< Index
  const float *weightIn;
  void *offsets, *indices, *edgeIds, *peerPositions; ///< Index
  float *weightOut;
};
template <typename Index> cudaError_t emitOutgoing(const OutgoingArgs &a, cudaStream_t stream);

/// The degree histogram the percentiles are read from: `bins` counters per
/// side (in-degrees, then out-degrees), zeroed; a degree past the last bin
/// counts in it.
struct DegreeHistogram {
  uint32_t *counts;
  uint32_t bins;
};
/// The degree histogram, the largest degrees (the summary's max) and the
/// degree sums.
template <typename Index>
cudaError_t degreeSums(const Index *inOffsets, const Index *inIndices, const Index *outOffsets, uint32_t numNodes,
                       const DegreeHistogram &histogram, Summary *summary, cudaStream_t stream);
/// The percentiles and min from the histogram once inclusiveSum has scanned
/// it (both sides as one sequence), and the stored edge count.
template <typename Index>
cudaError_t finishSummary(const DegreeHistogram &cumulative, uint32_t numNodes, const Index *inOffsets,
                          Summary *summary, cudaStream_t stream);
/// Inclusive prefix sums of `count` counters in place (wrapping at 2^32).
cudaError_t inclusiveSum(void *temp, size_t &tempBytes, uint32_t *values, uint64_t count, cudaStream_t stream);

/// Stable sort of (key, value) pairs by the low `bits` of the key, over two
/// buffers of each (CUB's DoubleBuffer: no scratch copy of the pairs):
/// keys[current] and values[current] hold the pairs; after the sort,
/// `current` says which hold them sorted (the others are overwritten).
cudaError_t sortPairs(void *temp, size_t &tempBytes, uint32_t *const keys[2], uint32_t *const values[2], int &current,
                      uint32_t count, int bits, cudaStream_t stream);
cudaError_t sortPairs(void *temp, size_t &tempBytes, uint64_t *const keys[2], uint32_t *const values[2], int &current,
                      uint32_t count, int bits, cudaStream_t stream);
cudaError_t exclusiveSum(void *temp, size_t &tempBytes, const uint32_t *in, uint32_t *out, uint32_t count,
                         cudaStream_t stream);

// What a graph built on the device derives later (exec/DeviceDerived.cpp).
template <typename Index>
cudaError_t rowDegrees(const Index *offsets, const float *weights, uint32_t rows, float *out, cudaStream_t stream);
/// A row's segments and whether it is heavy; scanned, those of the rows
/// before it (its first segment and its heavy-row index).
struct SegmentCount {
  unsigned long long segments, heavy;
};
/// counts[r] for each of `rows` rows, and counts[rows] = {0, 0}.
template <typename Index>
cudaError_t countSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                          SegmentCount *counts, cudaStream_t stream);
/// Exclusive prefix sums of `count` segment counts (both fields at once).
cudaError_t exclusiveSum(void *temp, size_t &tempBytes, const SegmentCount *in, SegmentCount *out, uint32_t count,
                         cudaStream_t stream);
/// The segment arrays of every heavy row, from the scanned counts.
struct SegmentArrays {
  void *segmentRows, *heavyRows; ///< Index
  long long *segmentBegins, *segmentHeavy, *heavyFirstSegment;
};
template <typename Index>
cudaError_t fillSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                         const SegmentCount *starts, const SegmentArrays &out, cudaStream_t stream);

} // namespace gnnjit::exec::build
