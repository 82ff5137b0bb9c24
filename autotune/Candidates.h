// The configs the autotuner would time for each aggregation stage of a
// pass: the rule's, and the rule's answers under forced lanes per row,
// heavy-row thresholds, segment lengths, SpMM backends (and cuSPARSE
// algorithms) and reduction merges, each family's own space; and knobs of a
// whole pass (the fused attention backward), tried on the stages' winners. A simple model of the degree statistics and the width
// prunes the hopeless ones (unless exhaustive); the planner's own checks
// drop the ones it refuses. No GPU is needed.
#pragma once

#include "autotune/ProgramCache.h"
#include "autotune/Rule.h"
#include "codegen/KernelParams.h"
#include "lower/KernelPlan.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gnnjit::autotune {

struct Candidate {
  Candidate() = default;
  Candidate(lower::StageConfig c, std::string l) : config(std::move(c)), label(std::move(l)) {}
  lower::StageConfig config;
  std::string label; ///< configLabel(config)
  /// The pass with this config in its stage and the rule's in the others,
  /// as planned when the space was made (once, in the space's ProgramCache);
  /// null for pruned ones.
  codegen::ProgramPtr program;
  /// Its kernel modules (candidates with the same module share one object):
  /// what to compile ahead of the search, and which candidates share
  /// kernels. Empty for pruned ones.
  std::vector<std::shared_ptr<const codegen::GeneratedModule>> modules;
};

/// A config as the candidate lists print it: its print(), and what that
/// leaves out (a reduction's merge and arg scatter).
std::string configLabel(const lower::StageConfig &config);

struct PrunedCandidate {
  Candidate candidate;
  std::string why;
};

/// One stage's space. Stages the rule's plan runs in one edge loop with it
/// (the fused attention backward's sums sharing a loop: GATv2's over
/// in-edges and over all edges, GAT's and the Transformer's two over out-edges)
/// are tied to it: each candidate sets them all, as they fuse only while
/// their configs agree (a search of each alone never saw a change pay).
struct StageSpace {
  size_t stage = 0;
  std::vector<size_t> tied; ///< later stages that take this stage's config
  std::string what; ///< "aggregate[sum, in_edges] [4, 32] (attention)"
  Candidate rule;
  std::vector<Candidate> kept; ///< the rule's first
  std::vector<PrunedCandidate> pruned;
  /// `config` with this stage and those tied to it set to `c`.
  lower::PassConfig with(lower::PassConfig config, const lower::StageConfig &c) const;
};

/// The candidates of every tunable stage of `pass` of the layer `programs`
/// plans (stages nothing tunes, sums over all nodes or edges, are left
/// out), each planned once in `programs`.
std::vector<StageSpace> candidateSpaces(ProgramCache &programs, lower::Pass pass, const GraphFacts &facts,
                                        const RuleOptions &options, bool exhaustive);
/// The same, planned in a cache of this call's own (listing spaces alone).
std::vector<StageSpace> candidateSpaces(const lower::LoweredLayer &lowered, lower::Pass pass, const GraphFacts &facts,
                                        const RuleOptions &options, bool exhaustive);

/// Every config the search may time, one per kept candidate: the rule's
/// with that candidate's stage replaced (what to compile ahead of timing).
std::vector<lower::PassConfig> trialConfigs(const std::vector<StageSpace> &spaces, const lower::PassConfig &rule);

/// The distinct kernel modules the kept candidates of `spaces` need, in
/// the order the search meets them (the kernel cache compiles each source
/// once): what the tuner's compile time grows with.
std::vector<std::shared_ptr<const codegen::GeneratedModule>> distinctModules(const std::vector<StageSpace> &spaces);

/// A knob of a whole pass, not of one stage: the fused attention backward
/// shares loops between stages only when all of them have it, so a
/// per-stage search would never see it pay. Applied to the per-stage
/// winners and timed as one more candidate.
struct PassVariant {
  std::string label;
  std::function<lower::PassConfig(lower::PassConfig)> apply;
};
std::vector<PassVariant> passVariants(lower::Pass pass, const lower::PassConfig &rule);

} // namespace gnnjit::autotune
