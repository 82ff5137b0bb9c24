// A pass as the runner holds it: the plan lowering made (lower/KernelPlan.h)
// and the CUDA modules codegen emitted for it, planned and generated without
// a GPU or a graph (only the configs the tuning rule made from one): `export`
// prints a program's kernels, the runner launches them.
#pragma once

#include "codegen/Emit.h"
#include "lower/KernelPlan.h"

#include <string>
#include <vector>

namespace gnnjit::exec {

using lower::Direction;
using lower::Pass;
using lower::passName;

struct Program {
  lower::PassPlan plan;
  codegen::PassModules code;
  /// Per step: the key its cuSPARSE matrix values are cached under on the
  /// device graph (the values module's name and source hash, computed once
  /// here rather than at every launch); empty for other steps.
  std::vector<std::string> valuesKeys;

  const codegen::GeneratedModule *moduleOf(size_t step) const;
  std::string describe() const { return plan.describe(); }
};

/// Plans `pass` with `config` and emits its modules.
Program planProgram(const lower::LoweredLayer &lowered, Pass pass, const lower::PassConfig &config);

} // namespace gnnjit::exec
