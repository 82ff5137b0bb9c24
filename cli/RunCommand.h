// `gnnjit run [--layer NAME (gcn)] [--graph GRAPH] [--backend auto|cuda|cpu]
//             [--backend-variant auto|generated|cusparse] [--check] [--reps N]
//             [layer options] [--seed S] [--backward] [--json] [--inputs DIR]
//             [--dump DIR]`
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
// result is off by more than 1e-4 relative. Layers of families without
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
// Tensor files (--inputs, --dump): one tensor NAME is two files in a folder,
//   NAME.json  {"rows": R, "cols": C, "dtype": "float64", "byte_order": "little"}
//   NAME.bin   R * C float64 values, little-endian, row-major (exactly 8*R*C bytes)
// with the layout of ref::Tensor: a node tensor has one row per node, an
// edge tensor one row per edge in the graph's edge-id order (the input file's
// edge order; edges added by cleaning come after), a parameter one row;
// cols = heads * dim, head-major (PyG's .view(-1, H * C) order).
//   --inputs DIR reads every layer input NAME from DIR and, with --backward,
//     every output gradient d_<output> (missing files are an error).
//   --dump DIR (created if needed) writes every output as <output>, every
//     input gradient as grad_<input>, the inputs and output gradients it
//     generated randomly under their own names (so `--inputs DIR` repeats
//     the run), and manifest.json listing all of them.
#pragma once

#include "ref/Tensor.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>

namespace gnnjit::cli {

void addRunCommand(CLI::App &app);

/// Reads DIR/NAME.json and DIR/NAME.bin (format above); UserError naming the
/// file on any problem.
ref::Tensor readTensorFile(const std::filesystem::path &dir, const std::string &name);

/// Writes DIR/NAME.json and DIR/NAME.bin (format above).
void writeTensorFile(const std::filesystem::path &dir, const std::string &name, const ref::Tensor &tensor);

} // namespace gnnjit::cli
