#include "lower/Pipeline.h"

#include "lower/Canonicalize.h"
#include "lower/Classify.h"
#include "lower/FuseStages.h"
#include "lower/PlanBackward.h"
#include "lower/Planners.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace gnnjit::lower {

namespace {

/// Whether GNNJIT_DEBUG asks for the IR after each pass of `pipeline`.
bool debugging(std::string_view pipeline) {
  const char *v = std::getenv("GNNJIT_DEBUG");
  if (!v)
    return false;
  const std::string_view s = v;
  return s == "1" || s.find("all") != std::string_view::npos || s.find(pipeline) != std::string_view::npos;
}

void dump(std::string_view pass, const std::string &text) {
  if (debugging("lower"))
    fmt::print(stderr, "---- after {} ----\n{}\n", pass, text);
}

/// The plan so far: its steps, scratch and saved buffers.
void dumpPlan(std::string_view pass, const PassPlan &plan) {
  if (!debugging("plan"))
    return;
  std::string saved;
  for (const SavedBuffer &b : plan.saved)
    saved += fmt::format(" {}[{}]{}", b.name, b.width, b.aliasOf.empty() ? "" : " = " + b.aliasOf);
  fmt::print(stderr, "---- {} {}: after {} ----\n{}scratch buffers: {}; saved:{}\n", plan.layer, passName(plan.pass),
             pass, plan.describe(), plan.scratch.size(), saved.empty() ? " none" : saved);
}

} // namespace

LoweredLayer lowerLayer(const dsl::Layer &input) {
  LoweredLayer lowered{canonicalize(input), {}, {}, {}};
  dump("canonicalize", lowered.layer.print());

  FusedLayer fused = fuseStages(lowered.layer);
  lowered.nodes = std::move(fused.nodes);
  dump("fuseStages", fmt::format("{} aggregations, {} prologue values", fused.aggregates.size(),
                                 lowered.nodes.prologue.size()));

  for (const dsl::ExprPtr &agg : fused.aggregates)
    lowered.forward.push_back(classifyAggregation(agg));
  dump("classify", lowered.print());

  lowered.backward = planBackward(lowered.layer);
  dump("planBackward", lowered.backward.plan.print());
  return lowered;
}

PassPlan planPass(const LoweredLayer &lowered, Pass pass, const PassConfig &config) {
  PassPlan plan = startPlan(lowered, pass, config);
  dumpPlan("startPlan", plan);
  planSavedValues(lowered, plan);
  checkGenerated(lowered, pass, plan);
  PlanContext context{lowered, stagesOf(lowered, pass), plan, std::vector<bool>(plan.targets.size(), false)};
  if (pass == Pass::Backward) {
    planAttentionPrologue(context, config);
    dumpPlan("headSums", plan);
  }
  planStages(context);
  dumpPlan("stages", plan);
  if (pass == Pass::Backward) {
    fuseAttentionSums(context);
    dumpPlan("fuseEdgeLoops", plan);
    listSavedForBackward(context);
    dumpPlan("listSaved", plan);
  }
  planNodeOutputs(context);
  dumpPlan("outputs", plan);
  finishAttentionSteps(context);
  dumpPlan("finishSteps", plan);
  return plan;
}

} // namespace gnnjit::lower
