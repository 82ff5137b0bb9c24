#include "codegen/Emit.h"

#include "codegen/AttentionKernel.h"
#include "codegen/EdgeKernel.h"
#include "codegen/NodeKernel.h"
#include "codegen/ReductionKernel.h"
#include "codegen/SpmmKernel.h"
#include "support/Error.h"

namespace gnnjit::codegen {

namespace {

struct EmitStep {
  const lower::PassPlan &plan;
  std::optional<GeneratedModule> operator()(const lower::SpmmStep &s) const {
    return s.cusparse() ? generateSpmmValuesKernel(plan, s) : generateSpmmKernel(plan, s);
  }
  std::optional<GeneratedModule> operator()(const lower::ReductionStep &s) const {
    return generateReductionKernel(plan, s);
  }
  std::optional<GeneratedModule> operator()(const lower::ArgScatterStep &s) const {
    return generateArgScatterKernel(plan, s);
  }
  std::optional<GeneratedModule> operator()(const lower::AttentionStep &s) const {
    return generateAttentionKernel(plan, s);
  }
  std::optional<GeneratedModule> operator()(const lower::EdgeSumStep &s) const { return generateEdgeSumKernel(plan, s); }
  std::optional<GeneratedModule> operator()(const lower::EdgeOutputsStep &s) const {
    return generateEdgeOutputsKernel(plan, s);
  }
  std::optional<GeneratedModule> operator()(const lower::NodeSumStep &s) const {
    return generateNodeSumKernel(plan, s);
  }
  std::optional<GeneratedModule> operator()(const lower::NodeOutputsStep &s) const {
    return generateNodeKernel(plan, s);
  }
  std::optional<GeneratedModule> operator()(const lower::ZeroStep &) const { return std::nullopt; }
};

} // namespace

void checkEntries(const GeneratedModule &module, const std::vector<lower::KernelEntry> &entries) {
  bool same = module.kernels.size() == entries.size();
  for (size_t k = 0; same && k < entries.size(); ++k)
    same = module.kernels[k].entry == entries[k].entry && module.kernels[k].blockThreads == entries[k].launch.block;
  if (!same)
    throwInternalError("module {} does not have the entry points its plan gave it", module.name);
}

PassModules emit(const lower::PassPlan &plan) {
  PassModules out;
  for (const lower::Step &step : plan.steps) {
    std::optional<GeneratedModule> module = std::visit(EmitStep{plan}, step);
    out.moduleOfStep.push_back(module ? static_cast<int>(out.modules.size()) : -1);
    if (module)
      out.modules.push_back(std::move(*module));
  }
  return out;
}

} // namespace gnnjit::codegen
