// Device kernels for what a graph built on the device derives from a CSR
// later (exec/DeviceDerived.cpp): per-row degrees as floats and the heavy
// rows' segments, laid out as the host computes them (exec/DeviceGraph.cpp).
#pragma once

#include "exec/GraphKernels.h"

#include <cstdint>

namespace gnnjit::exec::build::kernels {

/// out[r] = the row's edge count, or the sum of its weights in double (in
/// CSR order, as the host sums them).
template <typename Index>
__global__ void rowDegrees(const Index *offsets, const float *weights, uint32_t rows, float *out) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  const Index begin = offsets[r], end = offsets[r + 1];
  if (weights == nullptr) {
    out[r] = static_cast<float>(end - begin);
    return;
  }
  double sum = 0;
  for (Index p = begin; p < end; ++p)
    sum += weights[p];
  out[r] = static_cast<float>(sum);
}

/// Per row: its segment count (rows of more than `threshold` edges, in
/// segments of `length`) and whether it is heavy. Entry `rows` is written 0,
/// so an exclusive scan over rows + 1 entries ends with the totals.
template <typename Index>
__global__ void countSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                              SegmentCount *counts) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r > rows)
    return;
  if (r == rows) {
    counts[r] = {0, 0};
    return;
  }
  const long long degree = static_cast<long long>(offsets[r + 1] - offsets[r]);
  const bool isHeavy = degree > threshold;
  counts[r] = {isHeavy ? static_cast<unsigned long long>((degree + length - 1) / length) : 0ull, isHeavy ? 1ull : 0ull};
}

/// Writes every heavy row's segments from the scanned counts (`starts`,
/// rows + 1 entries): the segment's row, first edge and heavy-row index; the
/// heavy row and its first segment. Thread `rows` closes the last heavy
/// row's segments with the segment total.
template <typename Index>
__global__ void fillSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                             const SegmentCount *starts, Index *segmentRows, long long *segmentBegins,
                             long long *segmentHeavy, Index *heavyRows, long long *heavyFirstSegment) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r > rows)
    return;
  if (r == rows) {
    heavyFirstSegment[starts[rows].heavy] = static_cast<long long>(starts[rows].segments);
    return;
  }
  const long long begin = static_cast<long long>(offsets[r]), end = static_cast<long long>(offsets[r + 1]);
  if (end - begin <= threshold)
    return;
  const unsigned long long h = starts[r].heavy;
  heavyRows[h] = static_cast<Index>(r);
  heavyFirstSegment[h] = static_cast<long long>(starts[r].segments);
  unsigned long long s = starts[r].segments;
  for (long long p = begin; p < end; p += length, ++s) {
    segmentRows[s] = static_cast<Index>(r);
    segmentBegins[s] = p;
    segmentHeavy[s] = static_cast<long long>(h);
  }
}

} // namespace gnnjit::exec::build::kernels
