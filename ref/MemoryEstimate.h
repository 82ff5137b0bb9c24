// Host memory the reference executor allocates, estimated without running
// it: every Global and per-node value it materializes (in double), the
// softmax statistics and arg tables, the result tensors, and the transposed
// CSR when an aggregation walks out-edges. It mirrors Evaluator::prepare, so
// a preflight (ref::forward and ref::backward run one themselves; `gnnjit
// run` one for the whole run) can refuse a run that would not fit before
// its first allocation.
#pragma once

#include "dsl/Differentiate.h"
#include "dsl/Layer.h"
#include "graph/Graph.h"
#include "support/MemoryEstimate.h"

#include <string_view>
#include <vector>

namespace gnnjit::ref {

/// What ref::forward allocates beyond its input tensors.
MemoryEstimate forwardMemory(const dsl::Layer &layer, const graph::Graph &graph);

/// What ref::backward allocates beyond its input tensors.
MemoryEstimate backwardMemory(const dsl::Layer &layer, const dsl::BackwardPlan &plan, const graph::Graph &graph);

/// The fp64 tensors that bind `inputs` on `graph` (one item each, named
/// "ROLE 'NAME' (fp64)").
MemoryEstimate tensorMemory(const std::vector<dsl::InputPtr> &inputs, const graph::Graph &graph,
                            std::string_view role);

} // namespace gnnjit::ref
