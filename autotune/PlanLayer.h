// The programs a run takes for its layer, graph, width and GPU: each pass
// planned with the tuning records' winner of every stage that has one (what
// `gnnjit tune` wrote), the rule's config for the rest; optionally tuning
// first what has no record. Every config is planned once (ProgramCache),
// tuning's included, and handed to the runner as planned. Shared by `gnnjit
// run`, the Python package, the benchmarks and the tests.
#pragma once

#include "autotune/ProgramCache.h"
#include "autotune/Rule.h"
#include "exec/LayerRunner.h"
#include "graph/Graph.h"
#include "lower/Stages.h"

#include <string>

namespace gnnjit::autotune {

/// What a run asks for.
struct PlanRequest {
  std::string layerHash;        ///< the layer's structural hash as written (dsl::Layer::hashHex, before lowering)
  int64_t width = 0, heads = 1; ///< the layer's (its tuning key's) feature width and heads
  bool backward = true;         ///< the backward pass too
  bool useRecords = true;       ///< false: the rule alone
  bool tuneMissing = false;     ///< tune both passes first when any stage has no record (needs a GPU)
  RuleOptions rule;             ///< what the rule is told
};

/// What planning gave a run.
struct PlannedLayer {
  exec::LayerPrograms programs; ///< the forward's, and the backward's when asked for
  int stages = 0;          ///< stages planned with a record's config
  std::string note;        ///< records not used, or lines skipped, or empty
  double ms = 0;           ///< reading the records, fingerprinting the graph, matching and planning
  double tuneSeconds = -1; ///< how long tuning took (-1: nothing tuned)
};

/// The programs of `lowered`'s passes on `graph`, from the records in the
/// default cache folder where `request` uses them, planned in `programs`
/// (null: a cache of this call's own).
PlannedLayer planLayer(const lower::LoweredLayer &lowered, const graph::Graph &graph, const PlanRequest &request,
                       ProgramCache *programs = nullptr);

/// The rule's programs for a graph with `facts` (no records), planned in
/// `programs`: what a test, a benchmark or a preflight runs.
exec::LayerPrograms rulePrograms(ProgramCache &programs, const GraphFacts &facts, const RuleOptions &options = {},
                                 bool backward = true);
/// The same for `graph`, measured, planned here.
exec::LayerPrograms rulePrograms(const lower::LoweredLayer &lowered, const graph::Graph &graph,
                                 const RuleOptions &options = {}, bool backward = true);

} // namespace gnnjit::autotune
