#include "ref/Evaluator.h"

#include "dsl/IRVisitor.h"
#include "ref/Aggregation.h"
#include "ref/RowOps.h"
#include "ref/Softmax.h"
#include "support/Error.h"

#include <unordered_set>

namespace gnnjit::ref {

using llvm::dyn_cast;
using llvm::isa;

void Evaluator::prepare(const std::vector<dsl::ExprPtr> &roots) {
  const std::vector<dsl::ExprPtr> nodes = dsl::postOrder(roots);
  // Arg tables cost numNodes x size indices: keep only those a Saved reads.
  std::unordered_set<const dsl::ExprNode *> argsWanted;
  for (const dsl::ExprPtr &n : nodes)
    if (const auto *saved = dyn_cast<dsl::Saved>(n.get()); saved && saved->what() == dsl::SavedKind::ArgMatch)
      argsWanted.insert(saved->forward().get());

  for (const dsl::ExprPtr &ptr : nodes) {
    const dsl::ExprNode &n = *ptr;
    if (values_.count(&n) || softmax_.count(&n))
      continue; // prepared by an earlier call
    // Operands come first, so the first malformed node names the reason.
    if (!n.valid())
      throwInternalError("a malformed {} node reached the reference executor: {}", dsl::nodeKindName(n.kind()),
                         n.error().empty() ? "an operand is malformed" : n.error());
    if (isa<dsl::Placeholder>(&n))
      throwInternalError("a placeholder reached the reference executor; LayerBuilder::build() resolves them");
    if (n.level() == dsl::Level::Edge) {
      if (const auto *softmax = dyn_cast<dsl::EdgeSoftmax>(&n))
        softmax_.emplace(&n, computeSoftmaxStats(*softmax, *this));
      continue; // per-edge values are recomputed where they are used
    }
    ArgTable *args = argsWanted.count(&n) ? &args_[&n] : nullptr;
    values_.emplace(&n, std::make_unique<NodeValue>(materialize(n, args)));
  }
}

const NodeValue &Evaluator::value(const dsl::ExprNode &node) const {
  auto it = values_.find(&node);
  if (it == values_.end())
    throwInternalError("no prepared value for a {} node at level {}", dsl::nodeKindName(node.kind()),
                       dsl::levelName(node.level()));
  return *it->second;
}

const SoftmaxStats &Evaluator::softmaxStats(const dsl::EdgeSoftmax &node) const {
  auto it = softmax_.find(&node);
  if (it == softmax_.end())
    throwInternalError("edge softmax statistics were not prepared");
  return it->second;
}

const ArgTable &Evaluator::argTable(const dsl::Aggregate &node) const {
  auto it = args_.find(&node);
  if (it == args_.end())
    throwInternalError("the arg table of a {} aggregation was not prepared", dsl::reduceName(node.reduce()));
  return it->second;
}

const Tensor &Evaluator::input(const dsl::InputDecl &decl) const {
  auto it = inputs_.find(decl.name);
  if (it == inputs_.end())
    throwInternalError("input '{}' is read but not bound (the executor checks bindings first)", decl.name);
  const Tensor &t = it->second;
  int64_t rows = 1;
  if (decl.kind == dsl::InputKind::Node)
    rows = graph_.numNodes();
  else if (decl.kind == dsl::InputKind::Edge)
    rows = graph_.numEdgeIds();
  if (t.rows != rows || t.cols != decl.shape.size() || static_cast<int64_t>(t.values.size()) != rows * t.cols)
    throwInternalError("input '{}' is read as a {} input of shape {}, which its binding ({} x {}) does not fit",
                       decl.name, dsl::inputKindName(decl.kind), dsl::shapeText(decl.shape), t.rows, t.cols);
  return t;
}

NodeValue Evaluator::materialize(const dsl::ExprNode &n, ArgTable *args) {
  if (const auto *agg = dyn_cast<dsl::Aggregate>(&n))
    return aggregate(*agg, *this, args);
  if (const auto *ref = dyn_cast<dsl::InputRef>(&n)) {
    const Tensor &t = input(*ref->input());
    return NodeValue::view(ref->input()->kind == dsl::InputKind::Node, t.values.data(), t.cols);
  }
  if (const auto *g = dyn_cast<dsl::GraphValue>(&n))
    return graphQuantity(*g);
  if (const auto *saved = dyn_cast<dsl::Saved>(&n)) {
    if (saved->what() != dsl::SavedKind::Value)
      throwInternalError("a saved {} outside edge level", dsl::savedKindName(saved->what()));
    // The forward value itself (the forward pass's output buffer on a GPU).
    const NodeValue &forward = value(*saved->forward());
    return NodeValue::view(forward.perNode(), forward.row(0), forward.size());
  }
  if (isRowOp(n))
    return materializeRowOp(n);
  throwInternalError("cannot materialize a {} node at level {}", dsl::nodeKindName(n.kind()),
                     dsl::levelName(n.level()));
}

NodeValue Evaluator::materializeRowOp(const dsl::ExprNode &n) const {
  const bool perNode = n.level() != dsl::Level::Global;
  const int64_t rows = perNode ? graph_.numNodes() : 1;
  std::vector<const NodeValue *> operands;
  for (const dsl::ExprPtr &op : n.operands())
    operands.push_back(&value(*op));
  NodeValue out = NodeValue::zeros(perNode, rows, n.shape().size());
  std::vector<const double *> rowsIn(operands.size());
  for (int64_t v = 0; v < rows; ++v) {
    for (size_t k = 0; k < operands.size(); ++k)
      rowsIn[k] = operands[k]->row(v);
    computeRow(n, rowsIn.data(), out.mutableRow(v));
  }
  return out;
}

NodeValue Evaluator::graphQuantity(const dsl::GraphValue &g) const {
  const int64_t n = graph_.numNodes();
  NodeValue out = NodeValue::zeros(true, n, 1);
  const std::vector<float> &weights = graph_.incoming().weights();
  graph_.incoming().visit([&](const auto &a) {
    for (int64_t i = 0; i < n; ++i) {
      const auto begin = a.offsets[static_cast<size_t>(i)], end = a.offsets[static_cast<size_t>(i) + 1];
      switch (g.quantity()) {
      case dsl::GraphQuantity::InDegree:
        *out.mutableRow(i) = static_cast<double>(end - begin);
        break;
      case dsl::GraphQuantity::WeightedInDegree:
        if (weights.empty()) {
          *out.mutableRow(i) = static_cast<double>(end - begin);
          break;
        }
        for (auto p = begin; p < end; ++p)
          *out.mutableRow(i) += weights[static_cast<size_t>(p)];
        break;
      case dsl::GraphQuantity::OutDegree: // counted from the sources, no transpose needed
        for (auto p = begin; p < end; ++p)
          *out.mutableRow(static_cast<int64_t>(a.indices[static_cast<size_t>(p)])) += 1;
        break;
      case dsl::GraphQuantity::EdgeWeight:
      case dsl::GraphQuantity::AttentionDropout:
        throwInternalError("{} read at {}; it is per edge", dsl::graphQuantityName(g.quantity()),
                           dsl::levelName(g.level()));
      }
    }
  });
  return out;
}

} // namespace gnnjit::ref
