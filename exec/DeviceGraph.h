// A graph's arrays on the device, uploaded on first use and kept for every
// layer run on the graph: the CSR by destination and its transpose (for
// backward passes, so they need no atomics), edge weights in each CSR's
// order, per-node quantities (degrees) as floats, the segments heavy rows
// are split into, and the cuSPARSE objects (matrix values, descriptors,
// workspaces) of each aggregation's weight.
#pragma once

#include "exec/CusparseSpmm.h"
#include "graph/Graph.h"
#include "runtime/DeviceBuffer.h"

#include "dsl/Expr.h"
#include "lower/KernelPlan.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace gnnjit::exec {

using lower::Direction;

/// Rows with more than `threshold` edges, split into segments of `length` edges.
struct HeavySegments {
  int64_t numSegments = 0, numHeavyRows = 0;
  runtime::DeviceMemory segmentRows; ///< index type of the graph
  runtime::DeviceBuffer<int64_t> segmentBegins;
  runtime::DeviceMemory heavyRows;                  ///< index type of the graph
  runtime::DeviceBuffer<int64_t> heavyFirstSegment; ///< numHeavyRows + 1
  runtime::DeviceBuffer<int64_t> segmentHeavy;      ///< per segment, its heavy row's index in heavyRows
};

class DeviceGraph {
public:
  explicit DeviceGraph(const graph::Graph &graph) : graph_(graph) {}
  DeviceGraph(const DeviceGraph &) = delete;
  DeviceGraph &operator=(const DeviceGraph &) = delete;

  const graph::Graph &host() const { return graph_; }
  int64_t numNodes() const { return graph_.numNodes(); }
  int64_t numEdges() const { return graph_.numEdges(); }

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
  const float *nodeQuantity(std::string_view name);
  const HeavySegments &segments(Direction direction, int64_t threshold, int64_t length);

  /// Matrix values for cuSPARSE under `key` (the weight's identity), filled
  /// by `fill(values)` the first time; then the cached SpMM object.
  CusparseSpmm &cusparse(Direction direction, const std::string &key, const std::function<void(float *)> &fill);

  /// Device bytes this object holds.
  size_t deviceBytes() const;

private:
  struct CsrOnDevice {
    runtime::DeviceMemory offsets, indices;
    runtime::DeviceBuffer<float> weights;
    runtime::DeviceMemory edgeIds, peerPositions; ///< when a kernel reads them
  };
  struct CusparseEntry {
    runtime::DeviceBuffer<float> values;
    std::unique_ptr<CusparseSpmm> spmm;
  };
  CsrOnDevice &upload(Direction direction);

  const graph::Graph &graph_;
  std::map<Direction, CsrOnDevice> csrs_;
  std::map<std::string, runtime::DeviceBuffer<float>, std::less<>> quantities_;
  std::map<std::tuple<Direction, int64_t, int64_t>, HeavySegments> segments_;
  std::map<std::pair<Direction, std::string>, CusparseEntry> cusparse_;
};

} // namespace gnnjit::exec
