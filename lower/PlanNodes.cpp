// Node-level work the aggregation kernels do not fuse: sums over all nodes
// (deterministic two-pass reductions), then every target no step wrote,
// computed per node or once (global), and zero targets.
#include "lower/Planners.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::cast;

void planNodeSum(PlanContext &c, size_t k) {
  const AggregationStage &s = c.stages[k];
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  if (agg->reduce() != Reduce::Sum)
    throwInternalError("layer {}: a {} over all nodes reached the node-sum planner", c.plan.layer,
                       reduceName(agg->reduce()));
  NodeSumStep step;
  step.stage = s;
  const int64_t width = s.aggregate->shape().size();
  step.aggregate = c.addScratch(*s.aggregate, width, true);
  step.label = c.label(fmt::format("sum{}", step.aggregate));
  const std::string base = c.entryBase(step.label);
  step.kernels.push_back({base + "_partial", LaunchRule{LaunchRule::Kind::NodeSumPartials, 256, 256, width, 0, 0}});
  step.kernels.push_back({base + "_finish", LaunchRule{LaunchRule::Kind::NodeSumFinish, 32, 1, width, 0, 0}});
  c.plan.steps.push_back(std::move(step));
}

void planNodeOutputs(PlanContext &c) {
  for (bool global : {false, true}) {
    NodeOutputsStep step;
    step.global = global;
    step.label = c.label(global ? "global" : "nodes");
    for (size_t t = 0; t < c.plan.targets.size(); ++t) {
      const Target &target = c.plan.targets[t];
      if (c.written[t] || target.global != global)
        continue;
      c.written[t] = true;
      if (!target.value) {
        c.plan.steps.push_back(ZeroStep{target.name});
        continue;
      }
      step.outputs.push_back({target.name, target.value});
      step.width = std::max(step.width, target.value->shape().size());
    }
    if (step.outputs.empty())
      continue;
    const LaunchRule::Kind kind = global ? LaunchRule::Kind::GlobalOutputs : LaunchRule::Kind::NodeOutputs;
    step.kernels.push_back({c.entryBase(step.label), LaunchRule{kind, 256, 1, step.width, 0, 0}});
    c.plan.steps.push_back(std::move(step));
  }
}

} // namespace gnnjit::lower
