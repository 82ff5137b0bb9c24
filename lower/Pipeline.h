// The lowering pipeline: every pass, in order. With GNNJIT_DEBUG set (to
// "lower" or "all"), the IR is printed to stderr after each pass.
//
//   1. canonicalize   one node per computation, constants folded
//   2. fuseStages     per-node prologue, one edge stage per aggregation, epilogue
//   3. classify       SpMM / reduction / attention for each aggregation
//   4. planBackward   differentiate, classify the backward aggregations
#pragma once

#include "lower/Stages.h"

namespace gnnjit::lower {

LoweredLayer lowerLayer(const dsl::Layer &layer);

} // namespace gnnjit::lower
