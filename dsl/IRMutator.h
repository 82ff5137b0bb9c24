// Rebuilds an expression DAG bottom-up, each node once. A subclass overrides
// rewrite() for the nodes it changes; everything else is rebuilt from its
// (possibly new) operands, or reused when no operand changed.
#pragma once

#include "dsl/Expr.h"

#include <unordered_map>

namespace gnnjit::dsl {

/// A copy of `node` with other operands (same kind and attributes), made
/// through its factory so shape, level and errors are computed afresh.
ExprPtr withOperands(const ExprPtr &node, std::vector<ExprPtr> operands);

class IRMutator {
public:
  virtual ~IRMutator() = default;
  ExprPtr mutate(const ExprPtr &root);

protected:
  /// `node` with its operands already mutated into `operands`. The default
  /// keeps the node (rebuilt only if an operand changed).
  virtual ExprPtr rewrite(const ExprPtr &node, std::vector<ExprPtr> operands);

private:
  /// source node -> (source kept alive so its address stays unique, result)
  std::unordered_map<const ExprNode *, std::pair<ExprPtr, ExprPtr>> done_;
};

} // namespace gnnjit::dsl
