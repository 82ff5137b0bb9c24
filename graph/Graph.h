// The graph every layer runs on: CSR by destination (row i lists the sources j
// of the edges j -> i, what an aggregation reads), the transposed CSR built on
// first use, optional edge weights, and the original id of every stored edge.
#pragma once

#include "graph/Csr.h"
#include "graph/EdgeList.h"

#include <memory>
#include <string>

namespace gnnjit::graph {

struct DegreeStats;

enum class SelfLoops : uint8_t {
  Keep,      ///< as given
  Remove,    ///< drop every i -> i
  AddMissing, ///< add i -> i (weight 1) to each node that has none; a node's own loops stay, all of them
  Replace,    ///< drop every i -> i, then add one (weight 1) to every node: PyG's remove_self_loops + add_self_loops
  /// PyG's add_remaining_self_loops: drop every i -> i, then add one to
  /// every node, of the weight of the node's last own loop (in input
  /// order), or 1 when it has none. Without weights, the same as Replace.
  AddRemaining
};

/// Whether a build with these loops drops the input's i -> i edges, and
/// whether it adds one per node (where kept loops do not stand for it).
inline bool dropsSelfLoops(SelfLoops s) {
  return s == SelfLoops::Remove || s == SelfLoops::Replace || s == SelfLoops::AddRemaining;
}
inline bool addsSelfLoops(SelfLoops s) {
  return s == SelfLoops::AddMissing || s == SelfLoops::Replace || s == SelfLoops::AddRemaining;
}

enum class IndexChoice : uint8_t { Auto, Int32, Int64 };

/// Cleaning applied while building, in this order: remove self loops
/// (Remove, Replace, AddRemaining), symmetrize, remove duplicates, add
/// missing self loops (AddMissing, Replace, AddRemaining).
struct BuildOptions {
  /// Add j -> i for every edge i -> j (i != j) that has no reverse yet. An
  /// added edge copies the weight of the edge it reverses.
  bool symmetrize = false;
  SelfLoops selfLoops = SelfLoops::Keep;
  /// Keep one edge per (source, destination): the one with the lowest id.
  bool removeDuplicates = false;
  /// Auto picks int32 when node and edge counts fit, int64 otherwise.
  IndexChoice index = IndexChoice::Auto;
  /// The weight of a self loop cleaning adds where no own loop gives it one
  /// (PyG's fill_value: 2 for GCN's improved). Other than 1 on a graph
  /// without weights, the graph is weighted: its input edges weigh 1.
  float loopWeight = 1.0f;
};

/// Whether a build with these options stores weights (the input has them,
/// or it adds loops weighing other than 1).
inline bool buildsWeights(bool inputWeighted, const BuildOptions &options) {
  return inputWeighted || (addsSelfLoops(options.selfLoops) && options.loopWeight != 1.0f);
}

class Graph {
public:
  /// Validates `edges` (ids in range, weight count, finite weights) and builds
  /// the CSR. Throws UserError naming the first bad edge.
  ///
  /// Edge ids: an input edge keeps its position in `edges` as its id; edges
  /// that symmetrize or AddMissing create get ids numEdges(input), +1, ... in
  /// the order (reverse edges by the id of the edge they reverse, then self
  /// loops by node). Rows are sorted by source, then by edge id.
  static Graph fromEdges(const EdgeList &edges, const BuildOptions &options = {});
  /// A graph of an incoming CSR already built (by a build on the device):
  /// its rows must be numNodes, its edge ids below numEdgeIds. Throws
  /// InternalError when the shapes disagree.
  static Graph fromCsr(int64_t numNodes, int64_t numInputEdges, int64_t numEdgeIds, Csr incoming);

  Graph(Graph &&) noexcept;
  Graph &operator=(Graph &&) noexcept;
  ~Graph();

  int64_t numNodes() const { return numNodes_; }
  int64_t numEdges() const { return incoming_.numEdges(); }
  IndexType indexType() const { return incoming_.indexType(); }
  bool hasWeights() const { return incoming_.hasWeights(); }
  /// How many ids the input had; ids at or above it were added by cleaning.
  int64_t numInputEdges() const { return numInputEdges_; }
  /// Rows of a per-edge value indexed by edge id: one per input edge (an
  /// edge cleaning removed keeps its row, never read), then one per edge
  /// cleaning added. Every stored edge's id is below it; it is numEdges()
  /// unless cleaning removed edges.
  int64_t numEdgeIds() const { return numEdgeIds_; }

  /// CSR by destination: row i holds the sources of the edges j -> i.
  const Csr &incoming() const { return incoming_; }
  /// CSR by source (the transpose), built on first use and cached; safe to
  /// call from several threads. Its peerPositions give each edge's position
  /// in incoming(); its weights are permuted to match.
  const Csr &outgoing() const;
  /// Degree statistics, computed on first use and cached.
  const DegreeStats &stats() const;

  /// Free-form name for messages and reports ("cora", "rmat:scale=20").
  const std::string &name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }

private:
  struct Lazy;
  Graph(int64_t numNodes, int64_t numInputEdges, int64_t numEdgeIds, Csr incoming);

  int64_t numNodes_ = 0;
  int64_t numInputEdges_ = 0;
  int64_t numEdgeIds_ = 0;
  Csr incoming_;
  std::string name_;
  std::unique_ptr<Lazy> lazy_;
};

/// Transposes a CSR of `numCols` columns (rows become columns). The result's
/// edgeIds are carried over and peerPositions point back into `csr`.
Csr transpose(const Csr &csr, int64_t numCols);

} // namespace gnnjit::graph
