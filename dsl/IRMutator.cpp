#include "dsl/IRMutator.h"

#include "dsl/IRVisitor.h"
#include "support/Error.h"

namespace gnnjit::dsl {

ExprPtr withOperands(const ExprPtr &node, std::vector<ExprPtr> ops) {
  using llvm::cast;
  const ExprNode *n = node.get();
  switch (n->kind()) {
  case NodeKind::InputRef:
  case NodeKind::GraphValue:
  case NodeKind::Constant:
  case NodeKind::Placeholder:
    return node;
  case NodeKind::Unary:
    return Unary::make(cast<Unary>(n)->op(), ops[0], cast<Unary>(n)->attribute());
  case NodeKind::Binary:
    return Binary::make(cast<Binary>(n)->op(), ops[0], ops[1]);
  case NodeKind::Select:
    return Select::make(ops[0], ops[1], ops[2]);
  case NodeKind::SumAxis:
    return SumAxis::make(ops[0], cast<SumAxis>(n)->axis());
  case NodeKind::BroadcastTo:
    return BroadcastTo::make(ops[0], n->shape());
  case NodeKind::Reshape:
    return Reshape::make(ops[0], n->shape());
  case NodeKind::EdgeSoftmax:
    return EdgeSoftmax::make(ops[0]);
  case NodeKind::Aggregate:
    return Aggregate::make(cast<Aggregate>(n)->reduce(), ops[0], cast<Aggregate>(n)->over());
  case NodeKind::Saved:
    return Saved::make(cast<Saved>(n)->what(), ops[0]);
  }
  throwInternalError("withOperands: unknown node kind {}", static_cast<int>(n->kind()));
}

ExprPtr IRMutator::rewrite(const ExprPtr &node, std::vector<ExprPtr> operands) {
  if (operands == node->operands())
    return node;
  return withOperands(node, std::move(operands));
}

ExprPtr IRMutator::mutate(const ExprPtr &root) {
  if (!root)
    return root;
  for (const ExprPtr &n : postOrder({root})) {
    if (done_.count(n.get()))
      continue;
    std::vector<ExprPtr> ops;
    ops.reserve(n->operands().size());
    for (const ExprPtr &op : n->operands())
      ops.push_back(op ? done_.at(op.get()).second : nullptr);
    ExprPtr result = rewrite(n, std::move(ops));
    done_.emplace(n.get(), std::make_pair(n, std::move(result)));
  }
  return done_.at(root.get()).second;
}

} // namespace gnnjit::dsl
