// `gnnjit run [--layer NAME (gcn)] [--graph GRAPH] [--backend auto|cuda|cpu]
//             [--backend-variant auto|generated|cusparse] [--unfused-attention-backward]
//             [--tune] [--check] [--reps N] [layer options] [--seed S] [--backward]
//             [--json] [--inputs DIR] [--dump DIR]`
//
// Builds a library layer, binds its inputs (seeded random values in [-1, 1],
// or tensors read from --inputs DIR), runs it forward with the backend and,
// with --backward, differentiates it and runs the backward plan with a
// seeded random gradient d_<output> for every output (the loss is
// sum over outputs of <d_out, out>). Prints per-output checksums (sum, sum
// of squares, max |x|), per-input gradient checksums and timings in ms.
//
// Backends: "cuda" lowers the layer, generates and compiles its kernels and
// runs them on the GPU (exec::LayerRunner), timing the median of --reps runs
// after a warm-up; --check also runs the reference and fails (exit 3) when a
// result is off by more than 1e-4 relative. Stages with a tuning record for
// this layer, graph, width and GPU (`gnnjit tune`) take its config; --tune
// tunes the layer first when a stage has none. Layers of families without
// generated kernels yet are refused. "cpu" is the double-precision reference
// executor (ref/). "auto" (the default) is cuda when a GPU is present;
// otherwise it compiles the kernels (NVRTC needs no GPU), runs the reference
// and says so.
//
// Graph: --graph takes what `gnnjit info`'s GRAPH takes (file, dataset
// folder or name, generator spec), default cli::kDefaultGraph
// (rmat:scale=16,ef=16,seed=0), with the same cleaning options
// (--symmetrize, --self-loops, --dedupe, --index). Layers whose PyG class
// adds self loops (gcn, gat, gatv2, agnn) want --self-loops add to match PyG.
//
// Layer options: --dim, --heads, --aggr, --slope, --eps (GIN: fixed eps, no
// eps parameter), --weighted, --edge-features, --mean-heads (PyG
// concat=False); see layers::LayerOptions.
//
// Tensor files (--inputs, --dump): the format of cli/TensorFiles.h.
#pragma once

#include <CLI/CLI.hpp>

namespace gnnjit::cli {

void addRunCommand(CLI::App &app);

} // namespace gnnjit::cli
