// The configs the autotuner would time for each aggregation stage of a
// pass: the rule's, and the rule's answers under forced lanes per row,
// heavy-row thresholds, segment lengths, SpMM backends (and cuSPARSE
// algorithms), reduction merges and the fused attention backward, each
// family's own space. A simple model of the degree statistics and the width
// prunes the hopeless ones (unless exhaustive); the planner's own checks
// drop the ones it refuses. No GPU is needed.
#pragma once

#include "exec/Tuning.h"
#include "lower/KernelPlan.h"

#include <string>
#include <vector>

namespace gnnjit::autotune {

struct Candidate {
  lower::StageConfig config;
  std::string label; ///< the config's print()
};

struct PrunedCandidate {
  Candidate candidate;
  std::string why;
};

/// One stage's space.
struct StageSpace {
  size_t stage = 0;
  std::string what; ///< "aggregate[sum, in_edges] [4, 32] (attention)"
  Candidate rule;
  std::vector<Candidate> kept; ///< the rule's first
  std::vector<PrunedCandidate> pruned;
};

/// The candidates of every tunable stage of `pass` (stages nothing tunes,
/// sums over all nodes or edges, are left out).
std::vector<StageSpace> candidateSpaces(const lower::LoweredLayer &lowered, lower::Pass pass,
                                        const exec::GraphFacts &facts, const exec::RuleOptions &options,
                                        bool exhaustive);

} // namespace gnnjit::autotune
