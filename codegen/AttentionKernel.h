// The attention family's modules: the layer's score, value or message and
// their per-head sums as an `Ops` struct for codegen/device/attention.cuh,
// and the entries the plan's AttentionStep names ("<base>_rows", and
// "<base>_segments" and "<base>_combine" when heavy rows are split; or
// "<base>_ranges" and "<base>_finish" for a sum over all edges).
#pragma once

#include "codegen/KernelParams.h"
#include "lower/KernelPlan.h"

namespace gnnjit::codegen {

GeneratedModule generateAttentionKernel(const lower::PassPlan &plan, const lower::AttentionStep &step);

} // namespace gnnjit::codegen
