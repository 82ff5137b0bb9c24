// A graph built on the GPU from edges already in device memory (a CUDA
// edge_index), on the caller's stream: the same CSR, transpose, edge ids and
// weights as graph::Graph::fromEdges would make of the same edges, bit for
// bit, without a trip through the host. CUB's radix sort orders the edges;
// kernels of exec/device/graph_build.cuh do the rest.
#pragma once

#include "exec/DeviceGraph.h"
#include "graph/Graph.h"

#include <cuda_runtime_api.h>

#include <memory>

namespace gnnjit::exec {

/// Edges in device memory: edge k is src[k] -> dst[k], its id k.
struct DeviceEdges {
  const void *src = nullptr, *dst = nullptr;
  graph::IndexType idType = graph::IndexType::Int64; ///< element type of src and dst
  int64_t numEdges = 0;
  int64_t numNodes = 0;
  const float *weights = nullptr; ///< one per edge, or null
};

/// Builds the graph of `edges` on `stream` (self loops as options.selfLoops
/// says; symmetrize and removeDuplicates are host-only and refused). Memory
/// comes from the installed device allocator; the temporaries go back to it
/// before this returns.
///
/// It synchronises `stream` once, at the end, to read back the stored edge
/// count and the degree statistics (a few dozen numbers) with the segment
/// counts of the heavy-row splits exec/SplitForecast.h forecasts (the
/// graph comes with those splits made), and throws a
/// UserError naming the first bad edge (a node id out of range, a
/// non-finite weight) as graph::Graph::fromEdges does. The index type Auto
/// picks from the node count and the edges before cleaning plus any added
/// loops (an upper bound of the stored ones). The degree statistics have
/// no full histogram (DegreeSummary::histogram is empty).
std::unique_ptr<DeviceGraph> buildOnDevice(const DeviceEdges &edges, const graph::BuildOptions &options,
                                           cudaStream_t stream);

} // namespace gnnjit::exec
