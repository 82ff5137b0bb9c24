// The device build's steps (exec/DeviceBuild.h's buildOnDevice runs them in
// order): what it queues before its one read-back, the read-back, and what
// it does with the numbers read back. Everything before the read-back
// depends on the sizes and options alone, never on values read from the
// device, so the queued part could be captured and replayed; that was built
// and measured on an H100, and did not pay: a small graph's build is bound
// by its kernels' GPU time, not by the host's launches (docs/benchmarks.md).
#pragma once

#include "exec/DeviceBuild.h"
#include "exec/DeviceDerived.h"
#include "exec/GraphKernels.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace gnnjit::exec {

class DeviceBuilder {
public:
  /// A build of `edges` on `stream`, making `splits` (exec/SplitForecast.h)
  /// ahead. The graph gets `number` (split_forecast::newGraph).
  DeviceBuilder(const DeviceEdges &edges, const graph::BuildOptions &options, cudaStream_t stream,
                std::vector<SegmentKey> splits, uint64_t number);

  /// Queues everything before the read-back: both CSRs, the degree
  /// statistics and the forecast splits' counts.
  void enqueue();
  /// Bytes the read-back copies: the summary and two totals per split.
  size_t readBackBytes() const;
  /// Queues the copy of the read-back into `host` (pinned, readBackBytes()).
  void enqueueReadBack(void *host);
  /// The graph, from the numbers read back (the stream synchronised since
  /// the copy): checks the edges (a UserError for the first bad one), then
  /// queues the splits' arrays.
  std::unique_ptr<DeviceGraph> finish(const void *readBack);

private:
  template <typename Key> struct Candidates;

  build::Summary *summary();
  unsigned long long *splitTotals();
  void emitGraph();
  std::vector<SegmentRequest> splitRequests();
  template <typename Key> Candidates<Key> markCandidates();
  template <typename Index> void allocate(DeviceCsrArrays &csr);
  template <typename Index, typename Key> void emit();
  template <typename Index> void summarizeDegrees();
  void checkEdges(const build::Summary &s) const;
  DeviceBuilt finishBuilt(const build::Summary &s);

  const DeviceEdges edges_;
  cudaStream_t stream_;
  build::LoopMode mode_;
  uint32_t numEdges_, numNodes_;
  bool adds_;
  uint32_t count_; ///< candidates: the input edges, then one loop per node when loops are added
  bool weighted_;     ///< the graph stores weights (given, or made by loops of another weight)
  float loopWeight_; ///< graph::BuildOptions::loopWeight
  graph::IndexType index_;
  int srcBits_; ///< the low bits of a sort key that hold the source
  /// The bits above them that hold the row: up to the drop row numNodes
  /// where the mode drops candidates; without one (keep) a node id, which
  /// saves a sort pass where the node count is a power of two (2^20 nodes:
  /// 40-bit keys, 5 passes of 8 bits, not 6).
  int rowBits_;
  std::vector<SegmentKey> splits_;
  runtime::DeviceMemory summary_;
  std::vector<runtime::DeviceMemory> starts_; ///< per split, its rows' first segments (countSegmentsOnDevice)
  DeviceBuilt built_;
};

} // namespace gnnjit::exec
