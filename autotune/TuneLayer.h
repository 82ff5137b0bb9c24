// Tuning a whole layer on one graph: for the forward and the backward pass,
// the rule's config and the candidate spaces; the kernels of both passes
// compile on the host's cores from the start (the rules' first, then each
// pass's candidates in the order the search meets them) while the search
// times the compiled ones on the GPU. One time budget covers it all, from
// the call to the last candidate timed (each pass's part by its need: its
// candidates by the seconds its rule's run says a timing takes, the forward
// at most half; one needing less gets its need): no candidate, rule or compile starts unless it is
// expected to end within it (a pass with no time left keeps the rule,
// untimed). A pass whose part ran out with candidates untimed (it waited
// for their compiles) resumes with the time the others left. What `gnnjit
// tune` and bench_autotune run; recording the winners is the caller's.
#pragma once

#include "autotune/Candidates.h"
#include "autotune/Precompiler.h"
#include "autotune/Records.h"
#include "autotune/Tuner.h"
#include "exec/DeviceGraph.h"

#include <vector>

namespace gnnjit::autotune {

struct LayerTuneOptions {
  double budgetSeconds = 3.0;
  bool exhaustive = false; ///< no pruning by the degree model
  int warmup = 2, reps = 5; ///< per timing: untimed runs, then the median of these
  runtime::KernelCache *cache = nullptr; ///< where kernels are compiled to and loaded from; null: the process's
  /// Where every config is planned, once (the caller's, to use the winners'
  /// programs after tuning); null: tuning's own.
  ProgramCache *programs = nullptr;
};

struct TunedLayerPass {
  lower::Pass pass = lower::Pass::Forward;
  lower::PassConfig rule;
  std::vector<StageSpace> spaces;
  TunedPass tuned;
  /// Seconds the pass's timer took to set up: its inputs, waiting for the
  /// rule's kernels, two runs of the rule's config (0 when not reached).
  double setupSeconds = 0;
  /// When the pass's setup began (the tuning's clock) and the seconds its
  /// searches took: timings (each candidate's began and seconds) and waits
  /// for compiles between them.
  double began = 0, searchSeconds = 0;
  /// Every check and timing the pass's searches ran, in order (what a
  /// resumed search answers from).
  SearchMemory memory;
  /// The pass's ms under the rule's config and under the tuned one (kUntimed
  /// when nothing was timed).
  double ruleMs() const;
  double tunedMs() const;
};

struct TunedLayer {
  std::vector<TunedLayerPass> passes; ///< forward, backward
  Precompiler::Report compiling;      ///< the modules compiled beside the search
  double seconds = 0;                 ///< wall time of the whole tuning
  double planSeconds = 0; ///< before the first pass's setup: the graph's statistics, the spaces, queueing compiles
  double stopSeconds = 0; ///< after the last search: waiting for the compiles under way
};

TunedLayer tuneLayer(const lower::LoweredLayer &lowered, exec::DeviceGraph &graph, const GraphFacts &facts,
                     const LayerTuneOptions &options = {});

/// Appends the winners of every pass to `store` as records of `base` (its
/// pass and stage filled in per record).
void recordTuned(const TunedLayer &tuned, TuneKey base, const RecordStore &store);

} // namespace gnnjit::autotune
