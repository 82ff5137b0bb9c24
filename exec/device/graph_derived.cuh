// Device kernels for what a graph built on the device derives from a CSR
// later (exec/DeviceDerived.cpp): per-row degrees as floats and the heavy
// rows' segments, laid out as the host computes them (exec/DeviceGraph.cpp).
#pragma once

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
/// segments of `length`) and whether it is heavy. Entry `rows` is left 0, so
/// an exclusive scan over rows + 1 entries ends with the totals.
template <typename Index>
__global__ void countSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                              unsigned long long *segmentsOf, unsigned long long *heavy) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  const long long degree = static_cast<long long>(offsets[r + 1] - offsets[r]);
  const bool isHeavy = degree > threshold;
  segmentsOf[r] = isHeavy ? static_cast<unsigned long long>((degree + length - 1) / length) : 0;
  heavy[r] = isHeavy ? 1 : 0;
}

/// Writes every heavy row's segments from the scanned counts: the segment's
/// row, first edge and heavy-row index; the heavy row and its first segment.
template <typename Index>
__global__ void fillSegments(const Index *offsets, uint32_t rows, long long threshold, long long length,
                             const unsigned long long *firstSegment, const unsigned long long *heavyIndex,
                             Index *segmentRows, long long *segmentBegins, long long *segmentHeavy, Index *heavyRows,
                             long long *heavyFirstSegment) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  const long long begin = static_cast<long long>(offsets[r]), end = static_cast<long long>(offsets[r + 1]);
  if (end - begin <= threshold)
    return;
  const unsigned long long h = heavyIndex[r];
  heavyRows[h] = static_cast<Index>(r);
  heavyFirstSegment[h] = static_cast<long long>(firstSegment[r]);
  unsigned long long s = firstSegment[r];
  for (long long p = begin; p < end; p += length, ++s) {
    segmentRows[s] = static_cast<Index>(r);
    segmentBegins[s] = p;
    segmentHeavy[s] = static_cast<long long>(h);
  }
}

} // namespace gnnjit::exec::build::kernels
