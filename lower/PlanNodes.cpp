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

namespace {

/// A sum over all nodes or all edges: partial sums per block, then the
/// partials added in block order (deterministic, no float atomics).
template <typename StepT>
void planWholeSum(PlanContext &c, size_t k, const char *what, LaunchRule::Kind partialKind) {
  const AggregationStage &s = c.stages[k];
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  if (agg->reduce() != Reduce::Sum)
    throwInternalError("layer {}: a {} over {} reached the {} planner", c.plan.layer, reduceName(agg->reduce()),
                       overName(agg->over()), what);
  StepT step;
  step.stage = s;
  const int64_t width = s.aggregate->shape().size();
  step.aggregate = c.addScratch(*s.aggregate, width, true);
  step.label = c.label(fmt::format("{}{}", what, step.aggregate));
  const std::string base = c.entryBase(step.label);
  step.kernels.push_back({base + "_partial", KernelRole::Partials, LaunchRule{partialKind, 256, 256, width, 0, 0}});
  step.kernels.push_back({base + "_finish", KernelRole::Finish, LaunchRule{LaunchRule::Kind::NodeSumFinish, 32, 1, width, 0, 0}});
  c.plan.steps.push_back(std::move(step));
}

} // namespace

void planNodeSum(PlanContext &c, size_t k) {
  planWholeSum<NodeSumStep>(c, k, "sum", LaunchRule::Kind::NodeSumPartials);
}

void planEdgeSum(PlanContext &c, size_t k) {
  planWholeSum<EdgeSumStep>(c, k, "edgesum", LaunchRule::Kind::EdgeSumPartials);
}

namespace {

/// Per-edge targets, all in one kernel over the incoming CSR.
void planEdgeOutputs(PlanContext &c) {
  EdgeOutputsStep step;
  step.label = c.label("edges");
  for (size_t t = 0; t < c.plan.targets.size(); ++t) {
    const Target &target = c.plan.targets[t];
    if (c.written[t] || !target.perEdge || !target.value)
      continue;
    c.written[t] = true;
    step.outputs.emplace_back(target.name, target.value);
    step.width = std::max(step.width, target.value->shape().size());
  }
  if (step.outputs.empty())
    return;
  step.kernels.push_back(
      {c.entryBase(step.label), KernelRole::Outputs, LaunchRule{LaunchRule::Kind::EdgeRows, 256, 32, step.width, 0, 0}});
  c.plan.steps.push_back(std::move(step));
}

} // namespace

void planNodeOutputs(PlanContext &c) {
  planEdgeOutputs(c);
  for (bool global : {false, true}) {
    NodeOutputsStep step;
    step.global = global;
    step.label = c.label(global ? "global" : "nodes");
    for (size_t t = 0; t < c.plan.targets.size(); ++t) {
      const Target &target = c.plan.targets[t];
      if (c.written[t] || target.global != global || (target.perEdge && target.value))
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
    step.kernels.push_back({c.entryBase(step.label), KernelRole::Outputs, LaunchRule{kind, 256, 1, step.width, 0, 0}});
    c.plan.steps.push_back(std::move(step));
  }
}

} // namespace gnnjit::lower
