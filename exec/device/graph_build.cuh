// Device kernels of a graph built on the GPU (exec/DeviceBuild.cpp): the
// host build's semantics (graph/Graph.cpp) step for step, so both give the
// same CSR bit for bit. Candidates are the input edges (ids 0..E-1) and,
// when self loops are added, one loop per node (E + i). Each sorts under one
// key, its destination above its source (`srcBits` low bits), so a single
// stable sort orders them by (destination, source, candidate); a candidate
// that is dropped (an edge cleaning removes, or an invalid one) has the
// destination `numNodes` and sorts last. Keeping every edge (kKeep), a build
// has no drop row, so its keys need no bit for it: an invalid edge sorts as
// 0 -> 0 there (the host throws on the first one after its read-back, so
// where it lands does not matter). Keys are 32-bit where both parts fit,
// else 64-bit; candidates are 32-bit (the host checks nodes and candidates
// stay below 2^32 - 1).
#pragma once

#include "exec/GraphKernels.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace gnnjit::exec::build::kernels {

__device__ inline bool dropsLoops(int mode) { return mode == kRemove || mode == kReplace || mode == kAddRemaining; }

/// Folds v over the warp with `combine` (lane 0 holds the result).
template <typename Combine> __device__ inline unsigned long long warpFold(unsigned long long v, Combine combine) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

struct Add {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a + b; }
};
struct Max {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a > b ? a : b; }
};

/// Folds each v[k] over the block with `combine` and merges the block's
/// result into *totals[k] with one atomic (Add: atomicAdd, Max: atomicMax),
/// not one per warp: thousands of warps on one address serialise. Every
/// thread of the block must call it, with the fold's identity (0) where it
/// has nothing; `partial` is the block's scratch, one per use in a kernel.
template <typename Combine, int K>
__device__ inline void foldPerBlock(unsigned long long *const (&totals)[K], unsigned long long (&v)[K],
                                    unsigned long long (&partial)[K][32]) {
  const Combine combine;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  for (int k = 0; k < K; ++k) {
    v[k] = warpFold(v[k], combine);
    if (lane == 0)
      partial[k][warp] = v[k];
  }
  __syncthreads();
  if (warp != 0)
    return;
  for (int k = 0; k < K; ++k) {
    const unsigned long long total = warpFold(lane < warps ? partial[k][lane] : 0ull, combine);
    if (lane != 0 || total == 0)
      continue;
    if constexpr (std::is_same_v<Combine, Max>)
      atomicMax(totals[k], total);
    else
      atomicAdd(totals[k], total);
  }
}

/// Adds each v[k] to *totals[k] once per block (foldPerBlock).
template <int K>
__device__ inline void addPerBlock(unsigned long long *const (&totals)[K], unsigned long long (&v)[K]) {
  __shared__ unsigned long long partial[K][32];
  foldPerBlock<Add>(totals, v, partial);
}

/// The sort key of a candidate: `row` (a destination, or numNodes to drop
/// it) above `column` (its source).
template <typename Key> __device__ inline Key edgeKey(uint32_t row, uint32_t column, int srcBits) {
  return (static_cast<Key>(row) << srcBits) | static_cast<Key>(column);
}

/// Records input edge c as a bad one: the summary keeps the lowest, as the
/// complement under atomicMax (so a zeroed summary means none).
__device__ inline void noteBad(unsigned long long *worst, uint32_t c) {
  atomicMax(worst, ~static_cast<unsigned long long>(c));
}

/// Input edge c: checks its ids and weight, and writes its sort key and its
/// candidate index. Dropped loops record, for add-remaining with weights,
/// the last one of each node (lastLoop holds id + 1); kept loops mark their
/// node for add-missing.
template <typename Id, typename Key>
__global__ void markInputEdges(const Id *src, const Id *dst, const float *weight, uint32_t numEdges, uint32_t numNodes,
                               int mode, int srcBits, Key *key, uint32_t *candidate, uint32_t *hasLoop,
                               uint32_t *lastLoop, Summary *summary) {
  const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= numEdges)
    return;
  candidate[c] = c;
  const long long s = static_cast<long long>(src[c]), d = static_cast<long long>(dst[c]);
  if (s < 0 || s >= numNodes || d < 0 || d >= numNodes) {
    noteBad(&summary->badEdge, c);
    key[c] = edgeKey<Key>(mode == kKeep ? 0 : numNodes, 0, srcBits);
    return;
  }
  if (weight != nullptr && !isfinite(weight[c]))
    noteBad(&summary->badWeight, c);
  const bool loop = s == d, dropped = loop && dropsLoops(mode);
  if (dropped && lastLoop != nullptr)
    atomicMax(&lastLoop[s], c + 1);
  if (loop && mode == kAddMissing)
    hasLoop[s] = 1;
  key[c] = edgeKey<Key>(dropped ? numNodes : static_cast<uint32_t>(d), static_cast<uint32_t>(s), srcBits);
}

/// The added loop of node i (candidate numEdges + i): kept unless add-missing
/// finds the node has its own; counts the kept ones.
template <typename Key>
__global__ void markAddedLoops(uint32_t numEdges, uint32_t numNodes, int mode, int srcBits, const uint32_t *hasLoop,
                               Key *key, uint32_t *candidate, uint32_t *keptAdded, Summary *summary) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long kept[1] = {0};
  if (i < numNodes) {
    const uint32_t c = numEdges + i;
    kept[0] = mode != kAddMissing || hasLoop[i] == 0;
    candidate[c] = c;
    key[c] = edgeKey<Key>(kept[0] ? i : numNodes, i, srcBits);
    if (keptAdded != nullptr)
      keptAdded[i] = kept[0] ? 1 : 0;
  }
  unsigned long long *const totals[1] = {&summary->addedEdges};
  addPerBlock(totals, kept);
}

/// Row pointers where position p holds row `row` and p - 1 row `previous`
/// (-1 at p = 0), rows ascending (the drop row numRows last): offsets[r] is
/// the first position whose row is at least r.
template <typename Index>
__device__ inline void writeOffsets(long long row, long long previous, uint32_t p, uint32_t count, uint32_t numRows,
                                    Index *offsets) {
  for (long long r = previous + 1; r <= row && r <= numRows; ++r)
    offsets[r] = static_cast<Index>(p);
  if (p + 1 == count)
    for (long long r = row + 1; r <= numRows; ++r)
      offsets[r] = static_cast<Index>(count);
}

/// Row pointers from 32-bit keys sorted ascending (the drop key numRows last).
template <typename Index>
__device__ inline void writeOffsets(const uint32_t *keys, uint32_t p, uint32_t count, uint32_t numRows,
                                    Index *offsets) {
  writeOffsets(static_cast<long long>(keys[p]), p == 0 ? -1 : static_cast<long long>(keys[p - 1]), p, count, numRows,
               offsets);
}

/// The incoming CSR from the candidates sorted by key (destination, source,
/// candidate): offsets, sources, edge ids (input ids, then added loops
/// numbered after them in node order), weights; each position's row, and
/// the transpose's sort keys (source, or the drop key) with each position.
/// Counts stored loops and sums the edge span. A grid-stride loop: few
/// blocks, so few atomics on the summary.
template <typename Index, typename Key>
__global__ void emitIncoming(const Key *keys, const uint32_t *order, int srcBits, uint32_t count, uint32_t numEdges,
                             uint32_t numNodes, const uint32_t *addedRank, const float *weightIn,
                             const uint32_t *lastLoop, float loopWeight, Index *offsets, Index *indices, Index *edgeIds,
                             float *weightOut, uint32_t *rows, uint32_t *transposeKey, uint32_t *position,
                             Summary *summary) {
  const Key sourceMask = (static_cast<Key>(1) << srcBits) - 1;
  unsigned long long sums[2] = {0, 0}; // loops, span
  // A 64-bit index: near 2^32 candidates, a 32-bit one would wrap past the end and start over.
  for (uint64_t next = blockIdx.x * blockDim.x + threadIdx.x; next < count; next += gridDim.x * blockDim.x) {
    const auto p = static_cast<uint32_t>(next);
    const Key key = keys[p];
    const uint32_t r = static_cast<uint32_t>(key >> srcBits), s = static_cast<uint32_t>(key & sourceMask);
    writeOffsets(static_cast<long long>(r), p == 0 ? -1 : static_cast<long long>(keys[p - 1] >> srcBits), p, count,
                 numNodes, offsets);
    position[p] = p;
    rows[p] = r;
    if (r == numNodes) {
      transposeKey[p] = numNodes;
      continue;
    }
    const uint32_t c = order[p];
    const bool input = c < numEdges;
    const uint32_t added = c - numEdges;
    indices[p] = static_cast<Index>(s);
    edgeIds[p] = static_cast<Index>(input ? c : numEdges + (addedRank ? addedRank[added] : added));
    if (weightOut != nullptr) {
      // Input edges of a graph given no weights weigh 1; an added loop its
      // node's last own loop's weight (add-remaining) or loopWeight.
      float w = loopWeight;
      if (input)
        w = weightIn != nullptr ? weightIn[c] : 1.0f;
      else if (lastLoop != nullptr && lastLoop[added] != 0)
        w = weightIn[lastLoop[added] - 1];
      weightOut[p] = w;
    }
    transposeKey[p] = s;
    sums[0] += s == r ? 1 : 0;
    sums[1] += s > r ? s - r : r - s;
  }
  unsigned long long *const totals[2] = {&summary->selfLoops, &summary->spanSum};
  addPerBlock(totals, sums);
}

/// The outgoing CSR from the incoming positions sorted by (source,
/// position): offsets, destinations, edge ids, each edge's position in the
/// incoming CSR, weights.
template <typename Index>
__global__ void emitOutgoing(const uint32_t *cols, const uint32_t *order, const uint32_t *rows, uint32_t count,
                             uint32_t numNodes, const Index *edgeIdsIn, const float *weightIn, Index *offsets,
                             Index *indices, Index *edgeIds, Index *peerPositions, float *weightOut) {
  const uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= count)
    return;
  writeOffsets(cols, q, count, numNodes, offsets);
  if (cols[q] == numNodes)
    return;
  const uint32_t p = order[q];
  indices[q] = static_cast<Index>(rows[p]);
  edgeIds[q] = edgeIdsIn[p];
  peerPositions[q] = static_cast<Index>(p);
  if (weightOut != nullptr)
    weightOut[q] = weightIn[p];
}

/// The low degrees of the histogram, which most nodes have (power-law
/// graphs pile thousands of nodes on each), counted per block in shared
/// memory first; only larger ones go to global memory one by one.
constexpr uint32_t kSharedDegreeBins = 1024;

/// Per node: its in- and out-degree counted in `histogram` (`bins` counters
/// per side, in-degrees first; a degree past the last bin counts in it),
/// the largest of each, their squares summed, and whether the node is
/// isolated: no stored edge to or from another node. It is iff its in- and
/// out-degree are equal and its incoming row (ordered by source) holds only
/// itself, first to last: then every in-edge is a loop, and so is every
/// out-edge.
template <typename Index>
__global__ void degreeSums(const Index *inOffsets, const Index *inIndices, const Index *outOffsets, uint32_t numNodes,
                           uint32_t *histogram, uint32_t bins, Summary *summary) {
  __shared__ uint32_t low[2][kSharedDegreeBins];
  const uint32_t shared = bins < kSharedDegreeBins ? bins : kSharedDegreeBins;
  for (uint32_t b = threadIdx.x; b < 2 * kSharedDegreeBins; b += blockDim.x)
    low[b / kSharedDegreeBins][b % kSharedDegreeBins] = 0;
  __syncthreads();
  const auto count = [&](unsigned long long degree, int side) {
    const auto bin = static_cast<uint32_t>(degree < bins - 1 ? degree : bins - 1);
    if (bin < shared)
      atomicAdd(&low[side][bin], 1u);
    else
      atomicAdd(&histogram[static_cast<uint64_t>(side) * bins + bin], 1u);
  };
  unsigned long long sums[3] = {0, 0, 0}; // in squares, out squares, isolated
  unsigned long long largest[2] = {0, 0};
  for (uint64_t next = blockIdx.x * blockDim.x + threadIdx.x; next < numNodes; next += gridDim.x * blockDim.x) {
    const auto i = static_cast<uint32_t>(next);
    const Index begin = inOffsets[i], end = inOffsets[i + 1];
    const auto in = static_cast<unsigned long long>(end - begin);
    const auto out = static_cast<unsigned long long>(outOffsets[i + 1] - outOffsets[i]);
    count(in, 0);
    count(out, 1);
    largest[0] = in > largest[0] ? in : largest[0];
    largest[1] = out > largest[1] ? out : largest[1];
    sums[0] += in * in;
    sums[1] += out * out;
    const Index self = static_cast<Index>(i);
    sums[2] += in == out && (in == 0 || (inIndices[begin] == self && inIndices[end - 1] == self)) ? 1 : 0;
  }
  __syncthreads();
  for (uint32_t b = threadIdx.x; b < 2 * shared; b += blockDim.x) {
    const uint32_t side = b / shared, bin = b % shared, n = low[side][bin];
    if (n != 0)
      atomicAdd(&histogram[static_cast<uint64_t>(side) * bins + bin], n);
  }
  __shared__ unsigned long long partial[2][32];
  unsigned long long *const maxima[2] = {&summary->inRanked[5], &summary->outRanked[5]};
  foldPerBlock<Max>(maxima, largest, partial);
  unsigned long long *const totals[3] = {&summary->inSquares, &summary->outSquares, &summary->isolatedNodes};
  addPerBlock(totals, sums);
}

/// The smallest degree whose cumulative count reaches `rank`: the first bin
/// of `cumulative` (one side's, each count `base` too many) at or past it.
__device__ inline unsigned long long degreeAtRank(const uint32_t *cumulative, uint32_t bins, uint32_t base,
                                                  unsigned long long rank) {
  uint32_t lo = 0, hi = bins - 1; // the last bin holds every node: the answer is at or before it
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    // Unsigned wrap-around: the in-degrees' total (base) may wrap the counts too.
    if (static_cast<uint32_t>(cumulative[mid] - base) >= rank)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/// One warp, ten of its threads a search each: the percentiles (50, 90, 99, 99.9) and
/// min of in- and out-degrees from their histogram scanned across both
/// sides (degreeSums set the max), and the stored edge count. In parallel
/// because each binary search is a chain of dependent loads: one thread
/// doing all ten took 17-31 us on pubmed and tolokers (ncu), a sixth of the
/// build.
template <typename Index>
__global__ void finishSummary(const uint32_t *cumulative, uint32_t bins, uint32_t numNodes, const Index *inOffsets,
                              Summary *summary) {
  const uint32_t t = threadIdx.x;
  if (t == 0)
    summary->numEdges = static_cast<unsigned long long>(inOffsets[numNodes]);
  if (numNodes == 0 || t >= 10)
    return;
  const uint32_t k = t / 5, which = t % 5;
  const uint32_t *side = cumulative + static_cast<uint64_t>(k) * bins;
  const uint32_t base = k * numNodes; // the in-degrees' total, counted into every out-degree bin
  const unsigned long long ranks[5] = {graph::nearestRank(numNodes, 50, 100), graph::nearestRank(numNodes, 90, 100),
                                       graph::nearestRank(numNodes, 99, 100), graph::nearestRank(numNodes, 999, 1000),
                                       1};
  (k == 0 ? summary->inRanked : summary->outRanked)[which] = degreeAtRank(side, bins, base, ranks[which]);
}

} // namespace gnnjit::exec::build::kernels
