// The autotuner's search, apart from how a config is timed: stage by stage
// (coordinate descent from the rule's config), every candidate of the stage
// is checked against the rule's results and timed with the other stages at
// their best so far; the fastest wins, the rule's config unless another is
// faster, so tuning is never slower than the rule. Within a stage, only
// candidates whose modules are compiled are timed while others compile
// (the search waits when none is); of those, one of each distinct set of
// kernel modules first (the kernels' shape), then the others (the same
// kernels under other launch parameters), those of the fastest modules
// first. A candidate that throws
// (fails to compile or launch) or disagrees with the rule scores infinity
// with the reason, and the search goes on. The time budget is shared: each
// stage (and the pass variants, as one more) may start candidates for an
// equal part of what is left when it begins, and starts one only when it
// would end within that part (by the longest a timing took so far, or the
// timer's estimate before one has); the rest are reported untimed. A
// config timed once in the pass (a stage's starting point is the previous
// stage's winner) is not timed again. Each stage's rule config is timed first
// whenever it ends within the whole budget: it is what tuning must beat (a
// stage whose rule is not timed keeps it, and nothing is recorded). The
// timer and the check are given: on the GPU, CUDA events and a comparison
// of outputs; in tests, fakes.
#pragma once

#include "autotune/Candidates.h"
#include "autotune/Records.h"

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace gnnjit::autotune {

/// The median ms of one pass under `config`; throws when it cannot run.
using PassTimer = std::function<double(const lower::PassConfig &config)>;
/// Empty when `config`'s results agree with the rule's, else why not.
using PassCheck = std::function<std::string(const lower::PassConfig &config)>;
/// Seconds since the search began (a clock, or a fake one in tests).
using Elapsed = std::function<double()>;

inline constexpr double kUntimed = std::numeric_limits<double>::infinity();
/// The failure of a candidate the search had no time for.
inline constexpr const char *kBudgetSpent = "not timed: the tuning budget was spent";

struct TimedCandidate {
  Candidate candidate;
  double ms = kUntimed;
  std::string failure; ///< why it scored infinity (failed, disagreed, or the budget was spent), else empty
  /// When its check and timing began (the search's clock) and the wall
  /// seconds they took, and of them its check's (making its runner, one
  /// cold run, the comparison); 0 for one not timed or answered from memory.
  double began = 0, seconds = 0, checkSeconds = 0;
};

struct TunedStage {
  size_t stage = 0;
  std::vector<size_t> tied; ///< the stages that took its config too (StageSpace::tied)
  std::string what;
  std::vector<TimedCandidate> timed; ///< in the space's order, the rule's first
  size_t best = 0;                   ///< index into timed
  double ruleMs = kUntimed;
};

struct TunedPass {
  lower::PassConfig config; ///< every stage at its best
  std::vector<TunedStage> stages;
  /// The pass variants applied to the stages' winners, and their times
  /// beside the winners' (adopted when faster).
  std::vector<TimedCandidate> variants;
  double stagesMs = kUntimed; ///< the per-stage winners together, when variants were timed
};

/// What a pass's searches have timed: a later search of the pass given it
/// (one resumed with time left over) answers those configs from it.
struct SearchMemory {
  std::vector<std::pair<lower::PassConfig, TimedCandidate>> timed; ///< every config timed, in order
  double longestSeconds = 0; ///< the longest one check and timing took
};

struct SearchOptions {
  double budgetSeconds = 3.0; ///< no candidate starts after this; shared by the stages
  /// Seconds one check and timing are expected to take, until one has been
  /// timed (the timer's estimate from a run of the rule's config); 0: unknown.
  double expectedTimingSeconds = 0;
  /// The kernel modules (cache keys) a candidate needs; candidates needing
  /// the same modules differ only in launch parameters (heavy-row
  /// threshold, segment length). Unset: every candidate its own modules.
  std::function<std::vector<std::string>(const Candidate &)> modulesOf;
  /// Whether all of those modules are compiled (timing would not compile).
  /// Unset: always.
  std::function<bool(const std::vector<std::string> &)> compiled;
  /// Waits at most the given seconds for one more module to compile; false
  /// when none is being compiled. Unset: never waits.
  std::function<bool(double seconds)> waitForProgress;
  /// Has the kernels of `config` (a pass variant of the stages' winners,
  /// which nothing compiled ahead) compiled by `deadline` (the search's
  /// clock); false when they are not, and the variant stays untimed (its
  /// check would compile in line: a second and more at F = 488). Unset:
  /// timing compiles them.
  std::function<bool(const lower::PassConfig &config, double deadline)> compileBy;
  /// The pass's earlier timings, kept up to date by the search. Unset:
  /// the search's own.
  SearchMemory *memory = nullptr;
};

/// Whether a stage or variant of `tuned` was left untimed for want of time.
bool leftUntimed(const TunedPass &tuned);
/// How many candidates and variants of `tuned` were left untimed for want of time.
size_t untimedCount(const TunedPass &tuned);

/// The seconds of `left` each pass gets, given the seconds each would need
/// to time all its candidates: a pass needing less than an equal part of
/// what the others have not taken gets its need, and the pass needing most
/// gets the rest (so a pass with few candidates is searched whole and one
/// with many gets what the others leave; by counts of stages alone, a
/// forward of one stage got a fifth of the budget beside a backward of three
/// stages and a variant, and timed 3 of its 8 candidates).
std::vector<double> shareByNeed(const std::vector<double> &needs, double left);

TunedPass searchPass(const std::vector<StageSpace> &spaces, const lower::PassConfig &rule, const PassTimer &time,
                     const PassCheck &check, const Elapsed &elapsed, const SearchOptions &options = {},
                     const std::vector<PassVariant> &variants = {});

/// One record per tuned stage and per stage tied to it: `base` with the
/// stage's index, its winner and times.
std::vector<TuneRecord> recordsOf(const TunedPass &tuned, const TuneKey &base);

/// The rule's config with each stage a record of `records` has for `base`
/// (its stage index filled in per stage) replaced by the record's, and how
/// many were.
struct Replayed {
  lower::PassConfig config;
  int fromRecords = 0;
};
Replayed replay(const lower::PassConfig &rule, const LoadedRecords &records, const TuneKey &base);

/// What `run` plans a pass with: the rule's config with the stages the
/// records hold for `base` (its pass filled in) replaced, and its program
/// (planned in `programs`), when there are any and the planner accepts the
/// result; nothing otherwise (the rule's), with why when the planner refused.
struct RecordedConfig {
  std::optional<lower::PassConfig> config;
  codegen::ProgramPtr program; ///< config's, when there is one
  int stages = 0;      ///< taken from records
  std::string refused; ///< why recorded configs were not used, or empty
};
RecordedConfig recordedConfig(ProgramCache &programs, lower::Pass pass, const lower::PassConfig &rule,
                              const LoadedRecords &records, TuneKey base);

} // namespace gnnjit::autotune
