// The autotuner's timer on the GPU: one pass of a layer on a graph under a
// given config, with random inputs bound once, timed with CUDA events
// (warm-up, then the median of several runs; the backward after one forward
// under the rule's config; long passes by fewer runs, past 25 ms by its
// check's run alone; a clear loser by its first warm run; a pass of tens of
// microseconds by runs back to back). Its check runs the config once and compares the
// pass's results (outputs, or input gradients) with the rule config's,
// within 1e-4 relative, on the device (a copy of the rule's results stays
// there: the pass's outputs once more in device memory). Kernels come
// through the given kernel cache (the process's by default), where
// autotune/Precompiler.h compiles them ahead.
#pragma once

#include "autotune/ProgramCache.h"
#include "exec/DeviceGraph.h"
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "lower/Stages.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gnnjit::autotune {

class GpuPassTimer {
public:
  /// Programs come from `programs` (each config planned once); a backward
  /// pass is timed after a forward under `forward`. `cache` null: the
  /// process's kernel cache.
  GpuPassTimer(ProgramCache &programs, exec::DeviceGraph &graph, lower::Pass pass, const lower::PassConfig &rule,
               const lower::PassConfig &forward, int warmup = 2, int reps = 5, runtime::KernelCache *cache = nullptr);

  /// The pass's median ms under `config`; throws what compiling or running it throws.
  double time(const lower::PassConfig &config);
  /// Empty when `config`'s results agree with the rule config's, else the
  /// worst result and how far off it is.
  std::string check(const lower::PassConfig &config);
  /// Frees the device memory of the last config's runner (a later timing
  /// makes it anew); the inputs and the rule's results stay.
  void release() {
    lastRunner_.reset();
    lastCheckMs_.reset();
  }
  /// Seconds one candidate's check and timing are expected to take: what
  /// the search budgets before it has timed one.
  double expectedTimingSeconds() const;
  /// A pass of the rule's config longer than this is timed with at most
  /// one warm-up and three runs; past kVeryLongPassMs, by one run: the
  /// candidate's check (the rule's second run at setup). At tens of ms a run
  /// is steady, and more of them would eat the budget (a backward of 200 ms
  /// after its forward took half a second per timing).
  static constexpr double kLongPassMs = 5.0;
  static constexpr double kVeryLongPassMs = 25.0;
  /// A candidate whose first warm run took this many times the rule's pass
  /// is not timed further: that run is its time. One such candidate could
  /// otherwise spend seconds. Its check's run (cold) decides the same when
  /// over this many times and kColdMs more (its kernels' first launches).
  static constexpr double kLoserFactor = 2.0;
  /// A pass of the rule's config shorter than this is run back to back
  /// between each pair of events until they span about this long: one run
  /// of tens of microseconds is timed to a few percent only (tolokers' GCN
  /// forward at F = 32 came out 5 % off its exhaustive best, its twin).
  static constexpr double kShortSpanMs = 0.5;
  static constexpr double kColdMs = 20.0;

private:
  /// A runner of `config`'s program: the last one made when it was for the
  /// same config (the search checks a candidate, then times it).
  exec::LayerRunner &runnerFor(const lower::PassConfig &config);
  /// Runs the pass once on `runner` (a forward first for the backward),
  /// synchronised; the pass's own ms (not its forward's) in `passMs`.
  const exec::DeviceTensors &runOnce(exec::LayerRunner &runner, double *passMs);

  ProgramCache &programs_;
  exec::DeviceGraph &graph_;
  lower::Pass pass_;
  int warmup_, reps_;
  lower::PassConfig rule_, forward_;
  double ruleRunMs_ = 0;  ///< one run of the rule's config, wall (for the backward, with its forward)
  double rulePassMs_ = 0; ///< the pass alone in that run
  int runsPerEvent_ = 1;  ///< runs back to back between a timing's events
  runtime::KernelCache *cache_;
  exec::OwnedTensors tensors_;
  exec::DeviceTensors forwardInputs_, backwardInputs_;
  exec::OwnedTensors expected_; ///< the rule config's results, on the device
  lower::PassConfig lastConfig_;
  std::unique_ptr<exec::LayerRunner> lastRunner_;
  std::optional<double> lastCheckMs_; ///< the pass's ms in the check of the last runner's config, once checked
};

} // namespace gnnjit::autotune
