// The SpMM family's planner: one step per aggregation, by the generated CSR
// kernel (fused with the element-wise epilogue of the one target that reads
// it) or by cuSPARSE (whose matrix values a small generated kernel computes
// once per graph), with the entry points and launch rules of each.
#include "lower/Planners.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::cast;

void planSpmmStage(PlanContext &c, size_t k, const SpmmConfig &config) {
  const AggregationStage &s = c.stages[k];
  checkTiling(c.plan.layer, config);
  if (config.cusparseAlgorithm < 0 || config.cusparseAlgorithm > 2)
    throwInternalError("layer {}: cuSPARSE algorithm {}", c.plan.layer, config.cusparseAlgorithm);
  const StageFusion fusion = fusionOf(c.stages, c.plan.targets, k);
  SpmmStep step;
  step.stage = s;
  step.config = config;
  step.direction = directionOf(s);
  step.label = c.label(fmt::format("agg{}", k));
  const int64_t width = s.aggregate->shape().size();
  const std::string base = c.entryBase(step.label);
  if (step.cusparse()) {
    if (!cusparseCanRun(s))
      throwInternalError("layer {}: cuSPARSE chosen for a stage it cannot run", c.plan.layer);
    step.gathered = cast<InputRef>(s.value.get())->input()->name;
    step.kernels.push_back({base + "_values", KernelRole::Values, LaunchRule{LaunchRule::Kind::CusparseValues, 256, 32, 1, 1, 0}});
  } else {
    if (config.vec > 1 && !(isPlainGather(s) && width % config.vec == 0))
      throwInternalError("layer {}: vector width {} for a value that is not a plain gathered input of width divisible "
                         "by it",
                         c.plan.layer, config.vec);
    step.kernels = tiledEntries(base, config, width);
    if (config.heavyThreshold > 0)
      step.merge = {SegmentMerge::Kind::Partials, width, 0};
    if (fusion.fusable)
      step.fusedOutput = c.plan.targets[static_cast<size_t>(fusion.target)].value;
  }
  // cuSPARSE writes a target only when it is the aggregate itself; the
  // generated kernel also when the epilogue is element-wise in it.
  const bool toTarget = step.cusparse() ? fusion.direct : fusion.fusable;
  if (toTarget) {
    step.target = c.plan.targets[static_cast<size_t>(fusion.target)].name;
    c.written[static_cast<size_t>(fusion.target)] = true;
  } else {
    step.fusedOutput = nullptr;
    step.aggregate = c.addScratch(*s.aggregate, width, false);
  }
  c.plan.steps.push_back(std::move(step));
}

} // namespace gnnjit::lower
