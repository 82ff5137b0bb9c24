// What the evaluator keeps between passes: materialized Global and per-node
// values, the per-destination softmax statistics, the arg positions of
// max/min aggregations, and the description of one edge.
#pragma once

#include "dsl/Expr.h"

#include <cstdint>
#include <vector>

namespace gnnjit::ref {

/// One edge j -> i as every per-edge evaluation sees it, whatever order the
/// loop visits edges in.
struct EdgeContext {
  int64_t dst; ///< i
  int64_t src; ///< j
  int64_t id;  ///< original edge id: the row of edge inputs and edge gradients
  int64_t pos; ///< position in graph.incoming(): indexes weights and arg tables
};

/// A Global value (one row) or a per-node value (one row per node), owned
/// or viewing memory that outlives it (a bound tensor, another value).
class NodeValue {
public:
  /// Zero-filled: `rows` = 1 for a Global value, numNodes for a per-node one.
  static NodeValue zeros(bool perNode, int64_t rows, int64_t size) {
    NodeValue v;
    v.perNode_ = perNode;
    v.size_ = size;
    v.storage_.assign(static_cast<size_t>(rows * size), 0.0);
    return v;
  }
  static NodeValue view(bool perNode, const double *data, int64_t size) {
    NodeValue v;
    v.perNode_ = perNode;
    v.size_ = size;
    v.view_ = data;
    return v;
  }

  bool perNode() const { return perNode_; }
  int64_t size() const { return size_; }
  /// The value at `node`; a Global value is the same row for every node.
  const double *row(int64_t node) const { return data() + (perNode_ ? node * size_ : 0); }
  double *mutableRow(int64_t node) { return storage_.data() + (perNode_ ? node * size_ : 0); }

private:
  const double *data() const { return view_ ? view_ : storage_.data(); }

  bool perNode_ = false;
  int64_t size_ = 0;
  const double *view_ = nullptr;
  std::vector<double> storage_;
};

/// Per (destination, head) statistics of one EdgeSoftmax:
/// alpha_e = exp(s_e - max) / sum with sum = sum over the row of exp(s - max).
struct SoftmaxStats {
  int64_t heads = 1;
  std::vector<double> max, sum; ///< numNodes x heads
};

/// For a Max/Min aggregation: per (group, element) the incoming() position
/// of the edge that gave the result (the first in the group's CSR order
/// among ties), -1 for an empty group. Groups follow the aggregation's Over.
struct ArgTable {
  dsl::Over over = dsl::Over::InEdges;
  int64_t size = 0;
  std::vector<int64_t> pos;
};

} // namespace gnnjit::ref
