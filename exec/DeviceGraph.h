// A graph's arrays on the device, kept for every layer run on the graph:
// the CSR by destination and its transpose (for backward passes, so they
// need no atomics), edge weights in each CSR's order, per-node quantities
// (degrees) as floats, the segments heavy rows are split into, and the
// cuSPARSE objects (matrix values, descriptors, workspaces) of each
// aggregation's weight. Either the mirror of a host graph (its arrays
// uploaded on first use) or a graph built on the device (exec/DeviceBuild.h:
// there is no host copy, and what is derived from it later is computed on
// the device).
#pragma once

#include "exec/CusparseSpmm.h"
#include "graph/DegreeStats.h"
#include "graph/Graph.h"
#include "runtime/DeviceBuffer.h"

#include "dsl/Expr.h"
#include "lower/KernelPlan.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace gnnjit::exec {

using lower::Direction;

/// Which segments: of the CSR of a direction, rows of more than a threshold
/// of edges, in segments of a length.
using SegmentKey = std::tuple<Direction, int64_t, int64_t>;

/// Rows with more than `threshold` edges, split into segments of `length` edges.
struct HeavySegments {
  int64_t numSegments = 0, numHeavyRows = 0;
  runtime::DeviceMemory segmentRows; ///< index type of the graph
  runtime::DeviceBuffer<int64_t> segmentBegins;
  runtime::DeviceMemory heavyRows;                  ///< index type of the graph
  runtime::DeviceBuffer<int64_t> heavyFirstSegment; ///< numHeavyRows + 1
  runtime::DeviceBuffer<int64_t> segmentHeavy;      ///< per segment, its heavy row's index in heavyRows
};

/// One CSR's arrays on the device (offsets, indices, edge ids and peer
/// positions in the graph's index type).
struct DeviceCsrArrays {
  runtime::DeviceMemory offsets, indices;
  runtime::DeviceBuffer<float> weights;
  runtime::DeviceMemory edgeIds, peerPositions; ///< of a host graph: uploaded when a kernel reads them
};

/// What a build on the device hands its graph: every array, and what the
/// host build would know (counts, index type, statistics).
struct DeviceBuilt {
  int64_t numNodes = 0, numEdges = 0, numInputEdges = 0, numEdgeIds = 0;
  graph::IndexType index = graph::IndexType::Int32;
  bool weighted = false;
  graph::DegreeStats stats;
  DeviceCsrArrays incoming, outgoing;
  uint64_t number = 0; ///< exec::split_forecast's number for the graph
  /// Heavy-row splits the build made ahead (split_forecast::forecast).
  std::vector<std::pair<SegmentKey, HeavySegments>> splits;
};

class DeviceGraph {
public:
  /// The mirror of `graph`, which must outlive it.
  explicit DeviceGraph(const graph::Graph &graph);
  /// A graph built on the device.
  explicit DeviceGraph(DeviceBuilt built);
  ~DeviceGraph();
  DeviceGraph(const DeviceGraph &) = delete;
  DeviceGraph &operator=(const DeviceGraph &) = delete;

  /// Whether the graph was built on the device (no host graph behind it).
  bool builtOnDevice() const { return host_ == nullptr; }
  /// The host graph this mirrors; a UserError for a graph built on the device.
  const graph::Graph &host() const;
  int64_t numNodes() const { return shape_.numNodes; }
  int64_t numEdges() const { return shape_.numEdges; }
  /// Rows of a per-edge input (graph::Graph::numEdgeIds).
  int64_t numEdgeIds() const { return shape_.numEdgeIds; }
  int64_t numInputEdges() const { return shape_.numInputEdges; }
  graph::IndexType indexType() const { return shape_.index; }
  bool hasWeights() const { return shape_.weighted; }
  const graph::DegreeStats &stats() const;
  /// A host graph with the same CSR (copied back): for tests, and for what
  /// only runs on host graphs (tuning).
  graph::Graph download() const;

  DeviceCsrView csr(Direction direction);
  /// The edge weight at each position of that CSR; null when unweighted.
  const float *csrWeights(Direction direction);
  /// The edge id of each position of that CSR (the row of edge inputs),
  /// in the graph's index type; uploaded on first use.
  const void *edgeIds(Direction direction);
  /// For each position of the transposed CSR, the same edge's position in
  /// the incoming CSR (index type); uploaded on first use.
  const void *peerPositions();
  /// One float per node: "in_degree", "out_degree" or "weighted_in_degree"
  /// (dsl::graphQuantityName).
  /// For a graph built on the device these are computed there, on `stream`
  /// (segments read their count back: one synchronisation per call that
  /// makes new ones).
  const float *nodeQuantity(std::string_view name, cudaStream_t stream = nullptr);
  const HeavySegments &segments(Direction direction, int64_t threshold, int64_t length, cudaStream_t stream = nullptr);
  /// For a graph built on the device, makes the segments of every key given
  /// that are not made yet with a single synchronisation, so that the
  /// passes that use them need none, and notes the keys for the next
  /// graphs' builds (exec/SplitForecast.h: a build makes the splits its
  /// predecessors were asked for within its own synchronisation). A host
  /// graph makes each on the host when first used (no synchronisation), so
  /// this does nothing for it.
  void prepareSegments(const std::vector<SegmentKey> &keys, cudaStream_t stream = nullptr);
  /// How many splits (direction, threshold, length) this graph holds: for tests.
  size_t segmentSplits() const { return segments_.size(); }

  /// Matrix values for cuSPARSE under `key` (the weight's identity), filled
  /// by `fill(values)` the first time; then the cached SpMM object.
  CusparseSpmm &cusparse(Direction direction, const std::string &key, const std::function<void(float *)> &fill);

  /// Device bytes this object holds.
  size_t deviceBytes() const;

private:
  using CsrOnDevice = DeviceCsrArrays;
  struct Shape {
    int64_t numNodes = 0, numEdges = 0, numInputEdges = 0, numEdgeIds = 0;
    graph::IndexType index = graph::IndexType::Int32;
    bool weighted = false;
  };
  struct CusparseEntry {
    runtime::DeviceBuffer<float> values;
    std::unique_ptr<CusparseSpmm> spmm;
  };
  CsrOnDevice &upload(Direction direction);
  /// A per-node quantity of a graph built on the device, computed there.
  runtime::DeviceBuffer<float> derivedQuantity(std::string_view name, cudaStream_t stream) const;

  const graph::Graph *host_ = nullptr; ///< null: built on the device
  uint64_t number_ = 0;                ///< of a graph built on the device: split_forecast's number
  std::vector<SegmentKey> asked_;      ///< splits prepareSegments was asked for (and noted) so far
  Shape shape_;
  std::unique_ptr<graph::DegreeStats> builtStats_; ///< of a graph built on the device
  std::map<Direction, CsrOnDevice> csrs_;
  std::map<std::string, runtime::DeviceBuffer<float>, std::less<>> quantities_;
  std::map<SegmentKey, HeavySegments> segments_;
  std::map<std::pair<Direction, std::string>, CusparseEntry> cusparse_;
};

} // namespace gnnjit::exec
