// Walks an expression DAG once per node, operands before users (post-order),
// in a deterministic order: outputs as given, operands left to right.
#pragma once

#include "dsl/Expr.h"

#include <unordered_set>

namespace gnnjit::dsl {

class IRGraphVisitor {
public:
  virtual ~IRGraphVisitor() = default;
  /// Visits `root` and everything it depends on that was not visited yet.
  void include(const ExprPtr &root);

protected:
  /// Called once per node after its operands. Does nothing by default.
#define GNNJIT_IR_NODE(Name) virtual void visit(const Name &) {}
#include "dsl/IRNodes.def"

  /// Whether to descend into a node's operands; Saved nodes may say no.
  virtual bool descend(const ExprNode &) { return true; }

private:
  void dispatch(const ExprNode &node);
  std::unordered_set<const ExprNode *> seen_;
};

/// Every node reachable from `roots`, operands before users.
std::vector<ExprPtr> postOrder(const std::vector<ExprPtr> &roots);

} // namespace gnnjit::dsl
