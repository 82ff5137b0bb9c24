// The configs a run takes from the tuning records (what `gnnjit tune`
// wrote) for its layer, graph, width and GPU: each pass planned with the
// recorded winner of every stage that has one, the rule's config for the
// rest. Optionally tunes first what has no record. Shared by `gnnjit run`
// and the Python package.
#pragma once

#include "exec/Tuning.h"
#include "graph/Graph.h"
#include "lower/Stages.h"

#include <optional>
#include <string>

namespace gnnjit::autotune {

/// What the records gave a run.
struct ConfigsFromRecords {
  std::optional<lower::PassConfig> forward, backward; ///< none: the rule's
  int stages = 0;          ///< stages planned with a record's config
  std::string note;        ///< records not used, or lines skipped, or empty
  double ms = 0;           ///< reading the records, fingerprinting the graph, matching and planning them
  double tuneSeconds = -1; ///< how long tuning took (-1: nothing tuned)
};

struct RecordLookup {
  std::string layerHash;        ///< the layer's structural hash as written (dsl::Layer::hashHex, before lowering)
  int64_t width = 0, heads = 1; ///< the layer's (its tuning key's) feature width and heads
  bool backward = true;         ///< the backward pass too
  bool tuneMissing = false;     ///< tune both passes first when any stage has no record
  exec::RuleOptions rule;       ///< what the rule is told
};

/// The configs of the passes from the records in the default cache folder
/// (none when the file does not exist and nothing is tuned). Tuning needs
/// a GPU.
ConfigsFromRecords configsFromRecords(const lower::LoweredLayer &lowered, const graph::Graph &graph,
                                      const RecordLookup &lookup);

} // namespace gnnjit::autotune
