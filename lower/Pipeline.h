// Lowering and planning, each one named sequence of passes. With
// GNNJIT_DEBUG set ("lower", "plan" or "all"; a comma-separated list), the
// IR is printed to stderr after each pass of those pipelines.
//
// lowerLayer: a DSL layer to the aggregation stages of both passes.
//   1. canonicalize    one node per computation, constants folded
//   2. fuseStages      per-node prologue, one edge stage per aggregation, epilogue
//   3. classify        SpMM / reduction / attention for each aggregation
//   4. planBackward    differentiate, classify the backward aggregations
//
// planPass: a lowered layer's pass and a config per stage (the tuner's
// choice) to the plan codegen emits and exec launches (lower/KernelPlan.h).
//   1. startPlan       the pass's targets: outputs, or a gradient per input
//   2. savedValues     which forward values the backward reads
//   3. checkGenerated  refuse what has no generated kernels yet
//   4. headSums        (backward) per-head sums read at edges' far ends, once per node
//   5. stages          one step per aggregation, by its family's planner
//   6. fuseEdgeLoops   (backward) attention sums over the same edges in one loop
//   7. listSaved       (backward) the buffers the forward saves, as both passes list them
//   8. outputs         element-wise targets per edge, node or once; zeros
//   9. finishSteps     attention steps' per-head sums and every heavy-row merge
#pragma once

#include "lower/KernelPlan.h"
#include "lower/Stages.h"

namespace gnnjit::lower {

LoweredLayer lowerLayer(const dsl::Layer &layer);

/// Plans `pass` of `lowered` with one config per stage of the pass. A stage
/// of a family without generated kernels yet, or a backward plan that reads
/// saved forward values no kernel saves, is a UserError that says so.
PassPlan planPass(const LoweredLayer &lowered, Pass pass, const PassConfig &config);

} // namespace gnnjit::lower
