// From a planned pass to CUDA: one module per step that launches kernels,
// each with exactly the entry points (names and block sizes) the plan gave
// its step, so the launcher and `export` can read launch rules off the plan.
#pragma once

#include "codegen/KernelParams.h"
#include "lower/KernelPlan.h"

#include <vector>

namespace gnnjit::codegen {

struct PassModules {
  std::vector<GeneratedModule> modules;
  std::vector<int> moduleOfStep; ///< per step of the plan: its module, or -1 (a zero step)
};

PassModules emit(const lower::PassPlan &plan);

/// InternalError unless `module` has exactly `entries`, in order, with
/// their block sizes: a generator and its planner must agree.
void checkEntries(const GeneratedModule &module, const std::vector<lower::KernelEntry> &entries);

} // namespace gnnjit::codegen
