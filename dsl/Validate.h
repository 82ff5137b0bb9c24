// The structural rules a forward layer must satisfy, checked by build().
#pragma once

#include "dsl/Layer.h"

namespace gnnjit::dsl {

/// Throws UserError naming the layer, the offending node (printed with its
/// operands) and the fix: a malformed node, a nested aggregation, a softmax
/// outside `aggregate(Sum, edgeSoftmax(s) * v)`, a per-edge value used after
/// aggregation, an output that is not one aggregated value per node, an
/// input no output uses, or a backward-only node.
void validateLayer(const Layer &layer);

} // namespace gnnjit::dsl
