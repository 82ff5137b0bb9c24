// Readable, stable text for expressions and layers: one SSA line per node in
// post-order, e.g. `%3 = mul %1, %2 : [4, 32] f32 edge`. The same structure
// always prints the same text, so it also feeds the structural hash.
#pragma once

#include "dsl/Expr.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace gnnjit::dsl {

class Printer {
public:
  /// Numbers every node reachable from `roots` (post-order) and returns the
  /// lines that define them.
  std::vector<std::string> define(const std::vector<ExprPtr> &roots);
  /// "%N" for a defined node.
  std::string name(const ExprNode *node) const;
  /// The defining line of one node (without numbering others).
  std::string line(const ExprNode &node) const;

private:
  std::unordered_map<const ExprNode *, size_t> ids_;
};

/// A self-contained listing of `root` and everything it uses.
std::string printExpr(const ExprPtr &root);

} // namespace gnnjit::dsl
