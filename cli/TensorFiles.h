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
// "dtype" and "byte_order" may be left out (they default to the values
// above); any other key is refused, so a misspelt one does not pass unseen.
//   --inputs DIR reads every layer input NAME from DIR and, with --backward,
//     every output gradient d_<output> (missing files are an error).
//   --dump DIR (created if needed) writes every output as <output>, every
//     input gradient as grad_<input>, the inputs and output gradients it
//     generated randomly under their own names (so `--inputs DIR` repeats
//     the run), and manifest.json listing all of them.
// Both stream the values in blocks: a tensor never needs a second copy in
// host memory on its way between a file and the GPU.
#pragma once

#include "ref/Tensor.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace gnnjit::cli {

struct TensorHeader {
  int64_t rows = 0, cols = 0;
};

/// Parses the text of a NAME.json header (format above); UserError naming
/// `file` on any problem: not JSON, not an object, a key of the wrong type,
/// an unknown key, a negative size or one whose bytes overflow.
TensorHeader parseTensorHeader(std::string_view text, std::string_view file);

/// Reads one tensor's values from DIR/NAME.bin in order, block by block,
/// after checking the header and that the .bin holds exactly rows x cols
/// values. Every failure is a UserError naming the file.
class TensorFileReader {
public:
  TensorFileReader(const std::filesystem::path &dir, const std::string &name);
  int64_t rows() const { return header_.rows; }
  int64_t cols() const { return header_.cols; }
  const std::filesystem::path &headerPath() const { return headerPath_; }

  /// The next `count` values (row-major), converted to host byte order.
  void read(double *out, size_t count);

private:
  std::filesystem::path headerPath_, dataPath_;
  TensorHeader header_;
  std::ifstream in_;
  uint64_t remaining_ = 0;
};

/// Writes DIR/NAME.json at once and DIR/NAME.bin as values come; finish()
/// checks that exactly rows x cols were written and the disk took them.
class TensorFileWriter {
public:
  TensorFileWriter(const std::filesystem::path &dir, const std::string &name, int64_t rows, int64_t cols);
  void write(const double *values, size_t count);
  void finish();

private:
  std::filesystem::path dataPath_;
  std::ofstream out_;
  uint64_t remaining_ = 0;
};

/// The whole tensor DIR/NAME in host memory (the CPU reference's inputs).
ref::Tensor readTensorFile(const std::filesystem::path &dir, const std::string &name);

/// Writes a host tensor as DIR/NAME.json and DIR/NAME.bin.
void writeTensorFile(const std::filesystem::path &dir, const std::string &name, const ref::Tensor &tensor);

} // namespace gnnjit::cli
