// What a graph built on the device derives from its CSR later, computed on
// the device (a host graph computes the same on the host, exec/DeviceGraph):
// per-node degrees as floats and the segments heavy rows are split into.
#pragma once

#include "exec/DeviceGraph.h"

#include <cuda_runtime_api.h>

namespace gnnjit::exec {

/// One float per row: its edge count, or with `weighted` the sum of its
/// weights (in double, in CSR order, as the host sums them; its edge count
/// when the CSR has no weights).
runtime::DeviceBuffer<float> degreesOnDevice(const DeviceCsrArrays &csr, graph::IndexType index, int64_t rows,
                                             bool weighted, cudaStream_t stream);

/// The rows of more than `threshold` edges split into segments of `length`,
/// in row order, as DeviceGraph::segments lays them out. Reads the segment
/// and heavy-row counts back: synchronises `stream`.
HeavySegments segmentsOnDevice(const DeviceCsrArrays &csr, graph::IndexType index, int64_t rows, int64_t threshold,
                               int64_t length, cudaStream_t stream);

} // namespace gnnjit::exec
