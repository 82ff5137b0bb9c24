// Device memory a run takes, estimated from the planned programs before
// anything is allocated: the graph's arrays each step needs (CSRs, weights,
// degrees, heavy-row segments, cuSPARSE values and workspace), the outputs and
// gradients the runner owns, and its scratch (aggregates, partial sums). The
// caller's own tensors are counted by deviceTensorMemory.
#pragma once

#include "exec/LayerRunner.h"
#include "graph/Graph.h"
#include "lower/Stages.h"
#include "support/MemoryEstimate.h"

#include <string_view>
#include <vector>

namespace gnnjit::exec {

/// What a LayerRunner of `programs` on `graph` allocates for the forward
/// pass, and the backward pass too when `backward` (both stay allocated:
/// the runner keeps each pass's buffers). A kernel beyond CUDA's grid
/// limits, or a row beyond a plan's limit, is refused (checkLaunchable).
MemoryEstimate runnerMemory(const LayerPrograms &programs, const graph::Graph &graph, bool backward);

/// f32 device tensors binding `inputs` on `graph`, one item each.
MemoryEstimate deviceTensorMemory(const std::vector<dsl::InputPtr> &inputs, const graph::Graph &graph,
                                  std::string_view role);

} // namespace gnnjit::exec
