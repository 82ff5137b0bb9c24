// Pass 2: splits the layer into the stages kernels run: per-node values the
// messages read (prologue), one edge stage per aggregation (its message is
// fused into the edge loop), and the outputs computed from aggregates and
// destination values (epilogue).
#pragma once

#include "lower/Stages.h"

namespace gnnjit::lower {

struct FusedLayer {
  std::vector<dsl::ExprPtr> aggregates; ///< in post-order
  NodeStages nodes;
};

FusedLayer fuseStages(const dsl::Layer &layer);

} // namespace gnnjit::lower
