// Degree statistics of a graph: what the autotuner keys on and what
// `gnnjit info` prints.
#pragma once

#include <cstdint>
#include <vector>

namespace gnnjit::graph {

class Graph;

/// The distribution of one degree (in or out) over all nodes.
struct DegreeSummary {
  double mean = 0, std = 0; ///< population standard deviation
  int64_t min = 0, max = 0;
  /// Nearest-rank percentiles: the smallest degree d such that at least p% of
  /// the nodes have degree <= d.
  int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  /// histogram[d] = number of nodes of degree d, for d in 0..max.
  std::vector<int64_t> histogram;

  /// Number of nodes whose degree is strictly greater than `degree`.
  int64_t nodesAbove(int64_t degree) const;

  static DegreeSummary fromDegrees(const std::vector<int64_t> &degrees);
};

struct DegreeStats {
  int64_t nodes = 0, edges = 0;
  int64_t selfLoops = 0;
  /// Nodes with no edge to or from another node (self loops ignored, as PyG's
  /// has_isolated_nodes does).
  int64_t isolatedNodes = 0;
  DegreeSummary in, out;
  /// Mean of |i - j| over the edges j -> i: small when ids follow locality.
  double avgEdgeSpan = 0;

  static DegreeStats compute(const Graph &graph);
};

} // namespace gnnjit::graph
