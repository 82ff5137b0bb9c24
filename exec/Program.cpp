#include "exec/Program.h"

#include "codegen/Provenance.h"

namespace gnnjit::exec {

const codegen::GeneratedModule *Program::moduleOf(size_t step) const {
  const int m = code.moduleOfStep.at(step);
  return m < 0 ? nullptr : &code.modules[static_cast<size_t>(m)];
}

Program planProgram(const lower::LoweredLayer &lowered, Pass pass, const lower::PassConfig &config) {
  Program p;
  p.plan = lower::planPass(lowered, pass, config);
  p.code = codegen::emit(p.plan);
  for (size_t k = 0; k < p.plan.steps.size(); ++k) {
    const auto *spmm = std::get_if<lower::SpmmStep>(&p.plan.steps[k]);
    const codegen::GeneratedModule *module = p.moduleOf(k);
    p.valuesKeys.push_back(spmm && spmm->cusparse() ? module->name + ":" + codegen::sha256Hex(module->source) : "");
  }
  return p;
}

} // namespace gnnjit::exec
