// Modules of per-edge work over the incoming CSR (codegen/device/edge.cuh):
// per-edge targets (an edge input's gradient, written at each edge's id) and
// sums over all edges (a parameter's gradient, deterministic in two passes).
#pragma once

#include "codegen/KernelParams.h"
#include "lower/KernelPlan.h"

namespace gnnjit::codegen {

/// Entry "<base>": a warp per row.
GeneratedModule generateEdgeOutputsKernel(const lower::PassPlan &plan, const lower::EdgeOutputsStep &step);

/// Entries "<base>_partial" (one block per partial) and "<base>_finish".
GeneratedModule generateEdgeSumKernel(const lower::PassPlan &plan, const lower::EdgeSumStep &step);

} // namespace gnnjit::codegen
