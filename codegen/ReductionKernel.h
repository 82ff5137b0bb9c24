// The reduction family's modules: the layer's message, epilogue and saved
// arg positions as an `Ops` struct for codegen/device/reduction.cuh, and the
// entries the plan's ReductionStep names ("<base>_rows", and "<base>_segments"
// and "<base>_combine" when heavy rows are split).
#pragma once

#include "codegen/KernelContext.h"
#include "codegen/KernelParams.h"
#include "lower/KernelPlan.h"

namespace gnnjit::codegen {

GeneratedModule generateReductionKernel(const lower::PassPlan &plan, const lower::ReductionStep &step);

/// The arg scatter of a max/min's backward (codegen/device/argscatter.cuh):
/// entries "<base>_bound", "<base>_scatter", "<base>_convert".
GeneratedModule generateArgScatterKernel(const lower::PassPlan &plan, const lower::ArgScatterStep &step);

/// Where DSL leaves live inside an edge loop over `direction`'s CSR at
/// position "p" (rows "row", the other end "col"): node values, edge inputs
/// and weights, and the saved arg positions of the plan's max/min aggregations.
LeafPlaces edgeLoopPlaces(const lower::PassPlan &plan, lower::Direction direction);

} // namespace gnnjit::codegen
