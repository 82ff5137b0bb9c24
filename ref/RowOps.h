// The element-wise and shape nodes evaluated on one row (one value of shape
// [heads, dim]) at a time; the same code serves Global, per-node and
// per-edge evaluation.
#pragma once

#include "dsl/Expr.h"

namespace gnnjit::ref {

/// Whether computeRow() evaluates nodes of this kind.
bool isRowOp(const dsl::ExprNode &node);

/// Writes node.shape().size() values to `out` from one row per operand
/// (operands[k] holds node.operands()[k]->shape().size() values), with the
/// broadcast rule of dsl/Type.h: element (h, d) is at h * dim + d, and an
/// operand axis of size 1 repeats. `out` must not alias an operand.
void computeRow(const dsl::ExprNode &node, const double *const *operands, double *out);

} // namespace gnnjit::ref
