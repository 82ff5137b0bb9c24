// Pass 3: which kernel family runs each aggregation (docs/dsl.md, Which kernel family):
//  - sum(edgeSoftmax(score) * value)            -> attention
//  - max / min                                   -> reduction
//  - sum / mean of structural weight x src value -> SpMM
//  - sum / mean of any other message             -> reduction
// A structural weight is built from graph values (degrees, edge weights)
// and constants only; the value is read at the source node.
#pragma once

#include "lower/Stages.h"

namespace gnnjit::lower {

/// Classifies one aggregation (forward or backward). Throws UserError naming
/// the node when it fits no family.
AggregationStage classifyAggregation(const dsl::ExprPtr &aggregate);

} // namespace gnnjit::lower
