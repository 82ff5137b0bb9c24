// Evaluates an expression DAG level by level: every Global and per-node
// (Src, Dst) value is materialized once, in post order; per-edge values are
// not stored but recomputed edge by edge by an EdgeProgram wherever a loop
// over edges needs them. What those programs need beyond materialized values
// is prepared here too: each EdgeSoftmax's per-destination statistics, and
// the arg positions of the max/min aggregations a Saved ArgMatch reads.
#pragma once

#include "graph/Graph.h"
#include "ref/Tensor.h"
#include "ref/Values.h"

#include <memory>
#include <unordered_map>

namespace gnnjit::ref {

class Evaluator {
public:
  /// `inputs` must outlive the evaluator; the executor has checked that it
  /// binds every input the expressions read (by name, with exact shapes).
  /// Attention dropout draws from `seed`.
  Evaluator(const graph::Graph &graph, const TensorMap &inputs, uint64_t seed = 0)
      : graph_(graph), inputs_(inputs), seed_(seed) {}

  /// Materializes everything reachable from `roots` that is not per edge.
  void prepare(const std::vector<dsl::ExprPtr> &roots);

  const graph::Graph &graph() const { return graph_; }
  /// A prepared Global or per-node value; per-edge nodes have none.
  const NodeValue &value(const dsl::ExprNode &node) const;
  const SoftmaxStats &softmaxStats(const dsl::EdgeSoftmax &node) const;
  const ArgTable &argTable(const dsl::Aggregate &node) const;
  /// The tensor bound to an input (rows follow the input's kind).
  const Tensor &input(const dsl::InputDecl &decl) const;
  uint64_t seed() const { return seed_; }

private:
  /// `args` is filled for a Max/Min aggregate that a Saved ArgMatch reads.
  NodeValue materialize(const dsl::ExprNode &node, ArgTable *args);
  NodeValue materializeRowOp(const dsl::ExprNode &node) const;
  NodeValue graphQuantity(const dsl::GraphValue &node) const;

  const graph::Graph &graph_;
  const TensorMap &inputs_;
  uint64_t seed_;
  // unique_ptr: a Saved Value views its forward value's memory.
  std::unordered_map<const dsl::ExprNode *, std::unique_ptr<NodeValue>> values_;
  std::unordered_map<const dsl::ExprNode *, SoftmaxStats> softmax_;
  std::unordered_map<const dsl::ExprNode *, ArgTable> args_;
};

} // namespace gnnjit::ref
