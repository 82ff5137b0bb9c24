// Device kernels of a graph built on the GPU (exec/DeviceBuild.cpp): the
// host build's semantics (graph/Graph.cpp) step for step, so both give the
// same CSR bit for bit. Candidates are the input edges (ids 0..E-1) and,
// when self loops are added, one loop per node (E + i); a candidate that is
// dropped (an edge cleaning removes, or an invalid one) sorts last under the
// key `numNodes`. Keys and values are 32-bit: nodes and candidates below
// 2^32 - 1 (the host checks).
#pragma once

#include "exec/GraphKernels.h"

#include <cmath>
#include <cstdint>

namespace gnnjit::exec::build::kernels {

__device__ inline bool dropsLoops(int mode) { return mode == kRemove || mode == kReplace || mode == kAddRemaining; }

template <typename T> __device__ inline T warpSum(T v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

/// Adds v to *total once per warp (lane 0), after a warp sum. Every lane of
/// the warp must call it (out-of-range threads with v = 0).
__device__ inline void addPerWarp(unsigned long long *total, unsigned long long v) {
  v = warpSum(v);
  if ((threadIdx.x & 31) == 0 && v != 0)
    atomicAdd(total, v);
}

/// Input edge c: checks its ids and weight, and writes its sort keys (source;
/// destination or the drop key) and its candidate index. Dropped loops
/// record, for add-remaining with weights, the last one of each node
/// (lastLoop holds id + 1); kept loops mark their node for add-missing.
template <typename Id>
__global__ void markInputEdges(const Id *src, const Id *dst, const float *weight, uint32_t numEdges, uint32_t numNodes,
                               int mode, uint32_t *srcKey, uint32_t *dstKey, uint32_t *candidate, uint32_t *hasLoop,
                               uint32_t *lastLoop, Summary *summary) {
  const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= numEdges)
    return;
  candidate[c] = c;
  const long long s = static_cast<long long>(src[c]), d = static_cast<long long>(dst[c]);
  if (s < 0 || s >= numNodes || d < 0 || d >= numNodes) {
    atomicMin(&summary->firstBadEdge, static_cast<unsigned long long>(c));
    srcKey[c] = 0;
    dstKey[c] = numNodes;
    return;
  }
  if (weight != nullptr && !isfinite(weight[c]))
    atomicMin(&summary->firstBadWeight, static_cast<unsigned long long>(c));
  const bool loop = s == d, dropped = loop && dropsLoops(mode);
  if (dropped && lastLoop != nullptr)
    atomicMax(&lastLoop[s], c + 1);
  if (loop && mode == kAddMissing)
    hasLoop[s] = 1;
  srcKey[c] = static_cast<uint32_t>(s);
  dstKey[c] = dropped ? numNodes : static_cast<uint32_t>(d);
}

/// The added loop of node i (candidate numEdges + i): kept unless add-missing
/// finds the node has its own; counts the kept ones.
__global__ void markAddedLoops(uint32_t numEdges, uint32_t numNodes, int mode, const uint32_t *hasLoop,
                               uint32_t *srcKey, uint32_t *dstKey, uint32_t *candidate, uint32_t *keptAdded,
                               Summary *summary) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  bool kept = false;
  if (i < numNodes) {
    const uint32_t c = numEdges + i;
    kept = mode != kAddMissing || hasLoop[i] == 0;
    candidate[c] = c;
    srcKey[c] = i;
    dstKey[c] = kept ? i : numNodes;
    if (keptAdded != nullptr)
      keptAdded[i] = kept ? 1 : 0;
  }
  addPerWarp(&summary->addedEdges, kept ? 1 : 0);
}

/// out[k] = table[index[k]].
__global__ void gatherKeys(const uint32_t *index, const uint32_t *table, uint32_t *out, uint32_t count) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count)
    out[k] = table[index[k]];
}

/// Row pointers from keys sorted ascending (the drop key numRows last):
/// offsets[r] is the first position whose key is at least r.
template <typename Index>
__device__ inline void writeOffsets(const uint32_t *keys, uint32_t p, uint32_t count, uint32_t numRows, Index *offsets) {
  const uint32_t key = keys[p];
  const long long previous = p == 0 ? -1 : static_cast<long long>(keys[p - 1]);
  for (long long r = previous + 1; r <= static_cast<long long>(key) && r <= numRows; ++r)
    offsets[r] = static_cast<Index>(p);
  if (p + 1 == count)
    for (long long r = static_cast<long long>(key) + 1; r <= numRows; ++r)
      offsets[r] = static_cast<Index>(count);
}

/// The incoming CSR from the candidates sorted by (destination, source,
/// candidate): offsets, sources, edge ids (input ids, then added loops
/// numbered after them in node order), weights; and the transpose's sort
/// keys (source, or the drop key) with each position. Counts stored loops
/// per node and in all, and the edge span. Sources come from the input
/// edges (`src`, already checked) or are the added loops' nodes.
template <typename Index, typename Id>
__global__ void emitIncoming(const uint32_t *rows, const uint32_t *order, const Id *src, uint32_t count,
                             uint32_t numEdges, uint32_t numNodes, const uint32_t *addedRank, const float *weightIn,
                             const uint32_t *lastLoop, float loopWeight, Index *offsets, Index *indices, Index *edgeIds,
                             float *weightOut, uint32_t *transposeKey, uint32_t *position, uint32_t *loopsOf,
                             Summary *summary) {
  const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long loops = 0, span = 0;
  if (p < count) {
    writeOffsets(rows, p, count, numNodes, offsets);
    const uint32_t r = rows[p];
    position[p] = p;
    if (r == numNodes) {
      transposeKey[p] = numNodes;
    } else {
      const uint32_t c = order[p];
      const bool input = c < numEdges;
      const uint32_t added = c - numEdges, s = input ? static_cast<uint32_t>(src[c]) : added;
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
      if (s == r) {
        loops = 1;
        atomicAdd(&loopsOf[r], 1u);
      }
      span = s > r ? s - r : r - s;
    }
  }
  addPerWarp(&summary->selfLoops, loops);
  addPerWarp(&summary->spanSum, span);
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

/// Per node: in- and out-degree (for the percentile sorts), their squares
/// summed, and whether the node is isolated (only loops, if anything).
template <typename Index>
__global__ void degreeSums(const Index *inOffsets, const Index *outOffsets, const uint32_t *loopsOf,
                           uint32_t numNodes, uint32_t *inDegree, uint32_t *outDegree, Summary *summary) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long in = 0, out = 0, isolated = 0;
  if (i < numNodes) {
    in = static_cast<unsigned long long>(inOffsets[i + 1] - inOffsets[i]);
    out = static_cast<unsigned long long>(outOffsets[i + 1] - outOffsets[i]);
    inDegree[i] = static_cast<uint32_t>(in);
    outDegree[i] = static_cast<uint32_t>(out);
    isolated = in == loopsOf[i] && out == loopsOf[i] ? 1 : 0;
  }
  addPerWarp(&summary->inSquares, in * in);
  addPerWarp(&summary->outSquares, out * out);
  addPerWarp(&summary->isolatedNodes, isolated);
}

/// Nearest rank: the smallest degree reached by ceil(n * numerator /
/// denominator) nodes (at least one), as graph::DegreeSummary computes it.
__device__ inline unsigned long long rankedDegree(const uint32_t *sorted, unsigned long long n,
                                                  unsigned long long numerator, unsigned long long denominator) {
  unsigned long long rank = (n * numerator + denominator - 1) / denominator;
  return sorted[(rank < 1 ? 1 : rank) - 1];
}

/// One thread: the percentiles, min and max of the sorted degrees, and the
/// stored edge count.
template <typename Index>
__global__ void finishSummary(const uint32_t *inSorted, const uint32_t *outSorted, uint32_t numNodes,
                              const Index *inOffsets, Summary *summary) {
  summary->numEdges = static_cast<unsigned long long>(inOffsets[numNodes]);
  if (numNodes == 0)
    return;
  const uint32_t *sorted[2] = {inSorted, outSorted};
  unsigned long long *out[2] = {summary->inRanked, summary->outRanked};
  for (int k = 0; k < 2; ++k) {
    out[k][0] = rankedDegree(sorted[k], numNodes, 50, 100);
    out[k][1] = rankedDegree(sorted[k], numNodes, 90, 100);
    out[k][2] = rankedDegree(sorted[k], numNodes, 99, 100);
    out[k][3] = rankedDegree(sorted[k], numNodes, 999, 1000);
    out[k][4] = sorted[k][0];
    out[k][5] = sorted[k][numNodes - 1];
  }
}

} // namespace gnnjit::exec::build::kernels
