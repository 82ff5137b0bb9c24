// The passes of planning (lower/Pipeline.cpp's planPass runs them in order)
// and what the family planners share while a pass is planned: the plan
// being built, which targets are written, and the names of modules and
// entry points. Internal to lower/.
#pragma once

#include "lower/KernelPlan.h"

#include <string>
#include <vector>

namespace gnnjit::lower {

struct PlanContext {
  const LoweredLayer &lowered;
  const std::vector<AggregationStage> &stages;
  PassPlan &plan;
  std::vector<bool> written; ///< per target: a step writes it

  /// "fwd_agg0": module labels name the pass and the work.
  std::string label(const std::string &what) const;
  /// "gnnjit_<layer>_<label>": the base of a step's entry points.
  std::string entryBase(const std::string &label) const;
  /// A new scratch buffer holding `aggregate`.
  int addScratch(const dsl::ExprNode &aggregate, int64_t width, bool global);
};

// ---- the planning passes, in the order planPass runs them ----

/// PlanPass.cpp: a plan of `pass` with `config`: its header and targets
/// (the layer's outputs, or a gradient per input).
PassPlan startPlan(const LoweredLayer &lowered, Pass pass, const PassConfig &config);
/// PlanPass.cpp: the forward values the backward reads: log-sum-exps and
/// aggregates of attention stages, arg positions of max/min stages
/// (PassPlan::savedLseOf, savedValueOf, savedValueAliases, savedArgsOf).
void planSavedValues(const LoweredLayer &lowered, PassPlan &plan);
/// PlanPass.cpp: a UserError for what has no generated kernels yet (a
/// family or a saved value no kernel computes), before any step is planned.
void checkGenerated(const LoweredLayer &lowered, Pass pass, const PassPlan &plan);
/// PlanPass.cpp: one step per aggregation stage, by its family's planner
/// and the stage's config.
void planStages(PlanContext &context);
/// PlanPass.cpp: the backward's list of what the forward saves (the runner
/// keeps it across both passes, so both plans list it).
void listSavedForBackward(PlanContext &context);

// ---- shared by the family planners ----

/// Where stage `k`'s step writes: straight into the one target that reads
/// the aggregate element-wise (its epilogue fused), else a scratch buffer.
template <class Step> void writeResult(PlanContext &c, size_t k, Step &step) {
  const StageFusion fusion = fusionOf(c.stages, c.plan.targets, k);
  if (fusion.fusable) {
    step.target = c.plan.targets[static_cast<size_t>(fusion.target)].name;
    step.fusedOutput = c.plan.targets[static_cast<size_t>(fusion.target)].value;
    c.written[static_cast<size_t>(fusion.target)] = true;
  } else {
    step.aggregate = c.addScratch(*c.stages[k].aggregate, c.stages[k].aggregate->shape().size(), false);
  }
}

/// InternalError unless `tiling` is a shape the kernels take.
void checkTiling(const std::string &layer, const RowTiling &tiling);

/// The entries of a tiled CSR kernel ("<base>_rows", and "<base>_segments"
/// and "<base>_combine" when heavy rows are split) with their launch rules.
std::vector<KernelEntry> tiledEntries(const std::string &base, const RowTiling &tiling, int64_t width);

/// PlanSpmm.cpp: stage `k`, an SpMM-family aggregation over in- or out-edges.
void planSpmmStage(PlanContext &context, size_t k, const SpmmConfig &config);

/// PlanReduction.cpp: stage `k`, a reduction-family aggregation over in- or
/// out-edges; `savedArgs` names the saved buffer of its arg positions (max
/// or min whose backward reads them), or is empty.
void planReductionStage(PlanContext &context, size_t k, const ReductionConfig &config, const std::string &savedArgs);

/// PlanAttention.cpp: stage `k`, an attention-family aggregation: the
/// forward's softmax-weighted sum (saving its log-sum-exps, and the
/// aggregate when the backward reads it), a backward sum over in- or
/// out-edges, or a sum over all edges.
void planAttentionStage(PlanContext &context, size_t k, const AttentionConfig &config);
/// PlanAttention.cpp: before the backward's stages, the per-head sums at
/// destinations that kernels over out-edges read (computed per node into
/// scratch buffers).
void planAttentionPrologue(PlanContext &context, const PassConfig &config);
/// PlanAttention.cpp: with AttentionConfig::fuseBackward, the backward's
/// attention sums over the same CSR, lanes and tiling merged into one step (one edge loop computing several
/// outputs: their gathers, per-head sums and alpha shared), where no output
/// of one reads another's result.
void fuseAttentionSums(PlanContext &context);
/// PlanAttention.cpp: once every step is planned, each attention step's
/// per-head sums (AttentionStep::rowSums, edgeSums) and its heavy-row merge.
void finishAttentionSteps(PlanContext &context);
/// PlanAttention.cpp: the backward's list of the buffers the forward's
/// attention stages save (the runner keeps them across both passes).
void listAttentionSaved(PlanContext &context);

/// PlanNodes.cpp: stage `k`, a sum over all edges.
void planEdgeSum(PlanContext &context, size_t k);

/// PlanNodes.cpp: stage `k`, a sum over all nodes.
void planNodeSum(PlanContext &context, size_t k);
/// PlanNodes.cpp: every target no step wrote, per node, per edge, then global, and zeros.
void planNodeOutputs(PlanContext &context);

} // namespace gnnjit::lower
