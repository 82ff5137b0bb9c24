#include "exec/DeviceBuild.h"

#include "exec/DeviceBuilder.h"
#include "exec/SplitForecast.h"
#include "runtime/CudaCheck.h"
#include "support/Error.h"

#include <cmath>
#include <limits>
#include <utility>

namespace gnnjit::exec {

namespace {

/// Pinned host memory of at least `bytes` for the read-back, one
/// buffer per thread, grown as needed and kept: a copy into pageable memory
/// is staged through a driver buffer, into pinned memory it is one DMA.
void *pinnedReadBack(size_t bytes) {
  struct Pinned {
    void *data = nullptr;
    size_t bytes = 0;
    ~Pinned() {
      if (data != nullptr)
        cudaFreeHost(data); // at exit the runtime may be gone: nothing to report to
    }
  };
  thread_local Pinned pinned;
  if (pinned.bytes < bytes) {
    if (pinned.data != nullptr)
      GNNJIT_CUDA_CHECK(cudaFreeHost(std::exchange(pinned.data, nullptr)));
    pinned.bytes = 0;
    GNNJIT_CUDA_CHECK(cudaMallocHost(&pinned.data, bytes));
    pinned.bytes = bytes;
  }
  return pinned.data;
}

void checkInput(const DeviceEdges &edges, const graph::BuildOptions &options) {
  if (options.symmetrize || options.removeDuplicates)
    throwUserError("a graph built on the GPU keeps its edges as given: symmetrize and removing duplicates are "
                   "done by the host build (graph::Graph::fromEdges)");
  if (edges.numNodes < 0)
    throwUserError("the graph declares {} nodes; a node count cannot be negative", edges.numNodes);
  if (edges.numEdges < 0)
    throwInternalError("{} edges", edges.numEdges);
  const int64_t limit = std::numeric_limits<uint32_t>::max() - 1;
  if (edges.numNodes >= limit || edges.numEdges + edges.numNodes >= limit)
    throwUserError("a graph built on the GPU takes fewer than {} nodes and edges together; this one has {} nodes "
                   "and {} edges (build it on the host: a CPU edge_index)",
                   limit, edges.numNodes, edges.numEdges);
  if (!std::isfinite(options.loopWeight))
    throwUserError("added self loops would weigh {}; a loop weight must be finite", options.loopWeight);
  if (edges.numEdges > 0 && (edges.src == nullptr || edges.dst == nullptr))
    throwInternalError("device edges without arrays");
}

} // namespace

std::unique_ptr<DeviceGraph> buildOnDevice(const DeviceEdges &edges, const graph::BuildOptions &options,
                                           cudaStream_t stream) {
  checkInput(edges, options);
  const runtime::AllocationStream scope(stream);
  const uint64_t number = split_forecast::newGraph();
  DeviceBuilder builder(edges, options, stream, split_forecast::forecast(), number);
  builder.enqueue();
  // The build's one synchronisation.
  void *host = pinnedReadBack(builder.readBackBytes());
  builder.enqueueReadBack(host);
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return builder.finish(host);
}

} // namespace gnnjit::exec
