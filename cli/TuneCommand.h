// `gnnjit tune --layer NAME [layer options] --graph GRAPH --list [--exhaustive] [--json]`
//
// The autotuner's candidates for every tunable aggregation stage of both
// passes on the graph given: the tuning rule's config, the candidates kept
// (the configs the rule gives under forced lanes per row, heavy-row
// thresholds, segment lengths, SpMM backends and cuSPARSE algorithms,
// reduction merges and the fused attention backward, with the planner's
// checks applied), and those a model of the degree statistics and the width
// prunes, each with why (--exhaustive keeps them). Also the graph's
// fingerprint and the records file tuning keys its records by. Needs no
// GPU; timing the candidates on one is the autotuner's next part, so --list
// is required for now.
#pragma once

#include <CLI/CLI.hpp>

namespace gnnjit::cli {

void addTuneCommand(CLI::App &app);

} // namespace gnnjit::cli
