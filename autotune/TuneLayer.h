// Tuning a whole layer on one graph: for the forward and the backward pass,
// the rule's config, the candidate spaces, their kernels compiled in
// parallel on the host while the search times the compiled ones on the GPU, with one time budget for both passes (each pass's part by
// its count of stages and variants, its compiles included). What `gnnjit
// tune` and bench_autotune run; recording the winners is the caller's.
#pragma once

#include "autotune/Candidates.h"
#include "autotune/Records.h"
#include "autotune/Tuner.h"
#include "exec/DeviceGraph.h"

#include <vector>

namespace gnnjit::autotune {

struct LayerTuneOptions {
  double budgetSeconds = 3.0;
  bool exhaustive = false; ///< no pruning by the degree model
  int warmup = 2, reps = 5; ///< per timing: untimed runs, then the median of these
};

struct TunedLayerPass {
  lower::Pass pass = lower::Pass::Forward;
  lower::PassConfig rule;
  std::vector<StageSpace> spaces;
  TunedPass tuned;
  size_t compiled = 0;       ///< configs given to the compiles beside the search
  double compileSeconds = 0; ///< how long those ran (until done, or stopped with the search)
  /// The pass's ms under the rule's config and under the tuned one (kUntimed
  /// when nothing was timed).
  double ruleMs() const;
  double tunedMs() const;
};

struct TunedLayer {
  std::vector<TunedLayerPass> passes; ///< forward, backward
  double seconds = 0;                 ///< wall time of the whole tuning
};

TunedLayer tuneLayer(const lower::LoweredLayer &lowered, exec::DeviceGraph &graph, const exec::GraphFacts &facts,
                     const LayerTuneOptions &options = {});

/// Appends the winners of every pass to `store` as records of `base` (its
/// pass and stage filled in per record).
void recordTuned(const TunedLayer &tuned, TuneKey base, const RecordStore &store);

} // namespace gnnjit::autotune
