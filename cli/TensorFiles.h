// Tensors as files, for `run --inputs/--dump` and for other tools (PyG
// scripts) to exchange exact values with gnnjit.
//
// One tensor NAME is two files in a folder,
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

#include <filesystem>
#include <string>

namespace gnnjit::cli {

/// Reads DIR/NAME.json and DIR/NAME.bin (format above); UserError naming the
/// file on any problem.
ref::Tensor readTensorFile(const std::filesystem::path &dir, const std::string &name);

/// Writes DIR/NAME.json and DIR/NAME.bin (format above).
void writeTensorFile(const std::filesystem::path &dir, const std::string &name, const ref::Tensor &tensor);

} // namespace gnnjit::cli
