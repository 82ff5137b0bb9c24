// A planned pass and the CUDA modules emitted for it: what the runner
// launches, `export` writes and the autotuner times. Planned and emitted
// without a GPU or a graph (only the configs a tuning policy made from
// one), once per config: every user shares the same object.
#pragma once

#include "codegen/Emit.h"
#include "lower/KernelPlan.h"

#include <memory>
#include <string>
#include <vector>

namespace gnnjit::codegen {

struct Program {
  lower::PassPlan plan;
  PassModules code;
  /// Per step: the key its cuSPARSE matrix values are cached under on the
  /// device graph (the values module's name and source hash); empty for
  /// other steps.
  std::vector<std::string> valuesKeys;

  const GeneratedModule *moduleOf(size_t step) const;
  std::string describe() const { return plan.describe(); }
};
using ProgramPtr = std::shared_ptr<const Program>;

/// The modules of `plan`.
Program emitProgram(lower::PassPlan plan);

/// Plans `pass` of `lowered` with `config` (lower::planPass) and emits it.
Program planProgram(const lower::LoweredLayer &lowered, lower::Pass pass, const lower::PassConfig &config);

} // namespace gnnjit::codegen
