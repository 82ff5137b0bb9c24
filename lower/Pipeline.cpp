#include "lower/Pipeline.h"

#include "lower/Canonicalize.h"
#include "lower/Classify.h"
#include "lower/FuseStages.h"
#include "lower/PlanBackward.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace gnnjit::lower {

namespace {

bool debugLowering() {
  const char *v = std::getenv("GNNJIT_DEBUG");
  if (!v)
    return false;
  const std::string_view s = v;
  return s == "1" || s == "all" || s.find("lower") != std::string_view::npos;
}

void dump(std::string_view pass, const std::string &text) {
  if (debugLowering())
    fmt::print(stderr, "---- after {} ----\n{}\n", pass, text);
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

} // namespace gnnjit::lower
