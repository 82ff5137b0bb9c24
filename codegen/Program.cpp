#include "codegen/Program.h"

#include "codegen/Provenance.h"
#include "lower/Pipeline.h"

namespace gnnjit::codegen {

const GeneratedModule *Program::moduleOf(size_t step) const {
  const int m = code.moduleOfStep.at(step);
  return m < 0 ? nullptr : &code.modules[static_cast<size_t>(m)];
}

Program emitProgram(lower::PassPlan plan) {
  Program p;
  p.plan = std::move(plan);
  p.code = emit(p.plan);
  for (size_t k = 0; k < p.plan.steps.size(); ++k) {
    const auto *spmm = std::get_if<lower::SpmmStep>(&p.plan.steps[k]);
    const GeneratedModule *module = p.moduleOf(k);
    p.valuesKeys.push_back(spmm && spmm->cusparse() ? module->name + ":" + sha256Hex(module->source) : "");
  }
  return p;
}

Program planProgram(const lower::LoweredLayer &lowered, lower::Pass pass, const lower::PassConfig &config) {
  return emitProgram(lower::planPass(lowered, pass, config));
}

} // namespace gnnjit::codegen
