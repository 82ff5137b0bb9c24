// `gnnjit tune --layer NAME [layer options] --graph GRAPH [--list] [--exhaustive] [--budget-s S]
//             [--records FILE] [--json]`
//
// The autotuner on one layer and graph. For every tunable aggregation stage
// of both passes, its candidates: the tuning rule's config first, then the
// configs the rule gives under forced lanes per row, heavy-row thresholds,
// segment lengths, SpMM backends and cuSPARSE algorithms and reduction
// merges (the planner's checks applied, configs planning to the same
// kernels once), less those a model of the degree statistics and the width
// prunes (--exhaustive keeps them); then the pass variants (the fused
// attention backward on every attention stage) on the stages' winners.
//
// --list prints them, with the graph's fingerprint and the records file,
// and needs no GPU. Otherwise each is checked against the rule config's
// results and timed on the GPU (autotune/Tuner.h, autotune/GpuTimer.h),
// stage by stage, until --budget-s; the winners (never slower than the
// rule) are appended to the records file, one JSON line per stage.
#pragma once

#include <CLI/CLI.hpp>

namespace gnnjit::cli {

void addTuneCommand(CLI::App &app);

} // namespace gnnjit::cli
