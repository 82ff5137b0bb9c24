// What the family planners share while a pass is planned (lower/PlanPass.cpp
// drives them): the plan being built, which targets are written, and the
// names of modules and entry points. Internal to lower/.
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

/// PlanNodes.cpp: stage `k`, a sum over all edges.
void planEdgeSum(PlanContext &context, size_t k);

/// PlanNodes.cpp: stage `k`, a sum over all nodes.
void planNodeSum(PlanContext &context, size_t k);
/// PlanNodes.cpp: every target no step wrote, per node, per edge, then global, and zeros.
void planNodeOutputs(PlanContext &context);

} // namespace gnnjit::lower
