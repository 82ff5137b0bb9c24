// The reduction family's planner: one step per aggregation over in- or
// out-edges of a max, min, or the sum or mean of a general message, by the
// tiled CSR kernel of codegen/device/reduction.cuh, fused with the
// element-wise epilogue of the one target that reads it. A max or min whose
// backward reads the arg match saves its arg positions for the backward.
#include "lower/Planners.h"

#include "dsl/IRVisitor.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <optional>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::cast;

namespace {

/// For aggregate[sum, out_edges](argmatch(A) x rest) with A a forward
/// max/min over in-edges of the same shape: A's saved buffer and rest (null
/// rest: the message is the arg match alone). Nothing when the stage is not
/// of that form.
struct ArgScatterForm {
  std::string savedArgs;
  ExprPtr rest;
};
std::optional<ArgScatterForm> argScatterForm(const PlanContext &c, const AggregationStage &s) {
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  if (agg->over() != Over::OutEdges || agg->reduce() != Reduce::Sum)
    return std::nullopt;
  std::optional<ArgScatterForm> form;
  std::vector<ExprPtr> rest;
  for (const ExprPtr &f : productFactors(agg->message())) {
    const auto *saved = llvm::dyn_cast<Saved>(f.get());
    if (!saved || saved->what() != SavedKind::ArgMatch) {
      rest.push_back(f);
      continue;
    }
    const auto *forward = cast<Aggregate>(saved->forward().get());
    const auto it = c.plan.savedArgsOf.find(saved->forward().get());
    if (form || it == c.plan.savedArgsOf.end() || forward->over() != Over::InEdges ||
        saved->forward()->shape() != s.aggregate->shape())
      return std::nullopt;
    form = ArgScatterForm{it->second, nullptr};
  }
  if (!form)
    return std::nullopt;
  for (const ExprPtr &f : rest)
    for (const ExprPtr &n : postOrder({f}))
      if (const auto *saved = llvm::dyn_cast<Saved>(n.get()); saved && saved->what() == SavedKind::ArgMatch)
        return std::nullopt; // a second arg match inside another factor
  form->rest = fold(BinaryOp::Mul, rest);
  return form;
}

void planArgScatter(PlanContext &c, size_t k, ArgScatterForm form) {
  const AggregationStage &s = c.stages[k];
  const int64_t width = s.aggregate->shape().size();
  ArgScatterStep step;
  step.stage = s;
  step.label = c.label(fmt::format("agg{}", k));
  step.savedArgs = std::move(form.savedArgs);
  step.rest = std::move(form.rest);
  const std::string base = c.entryBase(step.label);
  step.kernels.push_back({base + "_bound", KernelRole::Bound, LaunchRule{LaunchRule::Kind::ElementPartials, 256, 1, width, 0, 0}});
  step.kernels.push_back({base + "_scale", KernelRole::Scale, LaunchRule{LaunchRule::Kind::SingleBlock, 256, 1, width, 0, 0}});
  step.kernels.push_back({base + "_scatter", KernelRole::Scatter, LaunchRule{LaunchRule::Kind::RowElements, 256, 1, width, 0, 0}});
  step.kernels.push_back({base + "_convert", KernelRole::Convert, LaunchRule{LaunchRule::Kind::RowElements, 256, 1, width, 0, 0}});
  writeResult(c, k, step);
  c.plan.steps.push_back(std::move(step));
}

/// How a reduction's heavy-row segments are merged: per-segment partials
/// with their arg positions, folded in order by the combine kernel; or, for
/// a max or min with ReductionConfig::packedMerge, (value, position) slots
/// per heavy row merged by 64-bit atomics, whose positions (offsets in the
/// row) take 31 bits.
SegmentMerge heavyRowMerge(PlanContext &c, const Aggregate &agg, const ReductionConfig &config, int64_t width) {
  if (!config.packedMerge)
    return {SegmentMerge::Kind::PartialsWithArgs, width, 0};
  c.plan.rowEdgeLimit = int64_t{1} << 31;
  return agg.reduce() == Reduce::Max ? SegmentMerge{SegmentMerge::Kind::PackedMax, width, 0x00}
                                     : SegmentMerge{SegmentMerge::Kind::PackedMin, width, 0xff};
}

} // namespace

void planReductionStage(PlanContext &c, size_t k, const ReductionConfig &config, const std::string &savedArgs) {
  const AggregationStage &s = c.stages[k];
  if (config.argScatter)
    if (std::optional<ArgScatterForm> form = argScatterForm(c, s)) {
      planArgScatter(c, k, std::move(*form));
      return;
    }
  checkTiling(c.plan.layer, config);
  const auto *agg = cast<Aggregate>(s.aggregate.get());
  const int64_t width = s.aggregate->shape().size();
  if (config.vec > 1 && !(messageIsPlainGather(s) && width % config.vec == 0))
    throwInternalError("layer {}: vector width {} for a message that is not a plain gathered input of width "
                       "divisible by it",
                       c.plan.layer, config.vec);
  const bool arg = agg->reduce() == Reduce::Max || agg->reduce() == Reduce::Min;
  if (config.packedMerge && !arg)
    throwInternalError("layer {}: a packed merge for a {} aggregation (max and min only)", c.plan.layer,
                       reduceName(agg->reduce()));
  if (!savedArgs.empty() && !arg)
    throwInternalError("layer {}: arg positions saved for a {} aggregation", c.plan.layer, reduceName(agg->reduce()));
  ReductionStep step;
  step.stage = s;
  step.config = config;
  step.direction = directionOf(s);
  step.label = c.label(fmt::format("agg{}", k));
  step.savedArgs = savedArgs;
  step.kernels = tiledEntries(c.entryBase(step.label), config, width);
  if (config.heavyThreshold > 0)
    step.merge = heavyRowMerge(c, *agg, config, width);
  writeResult(c, k, step);
  if (!savedArgs.empty())
    c.plan.saved.push_back({savedArgs, width, false, true, {}});
  c.plan.steps.push_back(std::move(step));
}

} // namespace gnnjit::lower
