// The reduction family's planner: one step per aggregation over in- or
// out-edges of a max, min, or the sum or mean of a general message, by the
// tiled CSR kernel of codegen/device/reduction.cuh, fused with the
// element-wise epilogue of the one target that reads it. A max or min whose
// backward reads the arg match saves its arg positions for the backward.
#include "lower/Planners.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::cast;

void planReductionStage(PlanContext &c, size_t k, const ReductionConfig &config, const std::string &savedArgs) {
  const AggregationStage &s = c.stages[k];
  checkTiling(c.plan.layer, config);
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  const int64_t width = s.aggregate->shape().size();
  if (config.vec > 1 && !(messageIsPlainGather(s) && width % config.vec == 0))
    throwInternalError("layer {}: vector width {} for a message that is not a plain gathered input of width "
                       "divisible by it",
                       c.plan.layer, config.vec);
  const bool arg = agg->reduce() == Reduce::Max || agg->reduce() == Reduce::Min;
  if (!savedArgs.empty() && !arg)
    throwInternalError("layer {}: arg positions saved for a {} aggregation", c.plan.layer, reduceName(agg->reduce()));
  ReductionStep step;
  step.stage = s;
  step.config = config;
  step.direction = directionOf(s);
  step.label = c.label(fmt::format("agg{}", k));
  step.savedArgs = savedArgs;
  step.kernels = tiledEntries(c.entryBase(step.label), config, width);
  const StageFusion fusion = fusionOf(c.lowered, c.plan.pass, k);
  if (fusion.fusable) {
    step.target = c.plan.targets[static_cast<size_t>(fusion.target)].name;
    step.fusedOutput = c.plan.targets[static_cast<size_t>(fusion.target)].value;
    c.written[static_cast<size_t>(fusion.target)] = true;
  } else {
    step.aggregate = c.addScratch(*s.aggregate, width, false);
  }
  if (!savedArgs.empty())
    c.plan.saved.push_back({savedArgs, width, false, true});
  c.plan.steps.push_back(std::move(step));
}

} // namespace gnnjit::lower
