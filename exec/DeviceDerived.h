// What a graph built on the device derives from its CSR later, computed on
// the device (a host graph computes the same on the host, exec/DeviceGraph):
// per-node degrees as floats and the segments heavy rows are split into.
#pragma once

#include "exec/DeviceGraph.h"

#include <cuda_runtime_api.h>

#include <vector>

namespace gnnjit::exec {

/// One float per row: its edge count, or with `weighted` the sum of its
/// weights (in double, in CSR order, as the host sums them; its edge count
/// when the CSR has no weights).
runtime::DeviceBuffer<float> degreesOnDevice(const DeviceCsrArrays &csr, graph::IndexType index, int64_t rows,
                                             bool weighted, cudaStream_t stream);

/// Rows of more than `threshold` edges of `csr`, to be split into segments
/// of `length`.
struct SegmentRequest {
  const DeviceCsrArrays *csr = nullptr;
  int64_t threshold = 0, length = 0;
};

/// For each request, its heavy rows split into segments, in row order, as
/// DeviceGraph::segments lays them out. Reads every request's segment and
/// heavy-row counts back at once: synchronises `stream` once (not at all
/// for no requests).
std::vector<HeavySegments> segmentsOnDevice(const std::vector<SegmentRequest> &requests, graph::IndexType index,
                                            int64_t rows, cudaStream_t stream);

/// segmentsOnDevice's first half, for a caller that reads the totals back
/// within a copy of its own (the device build): per request, each row's
/// first segment and heavy-row index (rows + 1 build::SegmentCount prefix
/// sums), and its two totals (segments, heavy rows) copied to
/// deviceTotals[2k] and [2k + 1], on `stream`.
std::vector<runtime::DeviceMemory> countSegmentsOnDevice(const std::vector<SegmentRequest> &requests,
                                                         graph::IndexType index, int64_t rows,
                                                         unsigned long long *deviceTotals, cudaStream_t stream);
/// The second half, once the totals are on the host (`totals`, two per
/// request): the segment arrays, queued on `stream` (no synchronisation).
std::vector<HeavySegments> fillSegmentsOnDevice(const std::vector<SegmentRequest> &requests,
                                                const std::vector<runtime::DeviceMemory> &starts,
                                                const unsigned long long *totals, graph::IndexType index,
                                                int64_t rows, cudaStream_t stream);

} // namespace gnnjit::exec
