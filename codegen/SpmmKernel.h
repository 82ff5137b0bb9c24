// The SpMM-family kernel: for every row of a CSR (destinations for an
// aggregation over in-edges, sources over out-edges), sum or average
// weight(edge) * value(column node) over the row, then write either the
// aggregate or an output computed from it element-wise (a fused epilogue).
//
// Mapping: a group of `group` lanes owns a row; lane l holds features
// l * vec + k * group * vec (k < chunks) in registers, so one pass over the
// row's edges serves all features of a tile (blockIdx.y picks the tile).
// The group loads `group` column indices and edge weights at once, one per
// lane, and passes them round with shuffles: index loads are amortized over
// the features and several gathers are in flight per lane.
//
// Rows heavier than `heavyThreshold` edges are left to a second entry point
// that splits them into segments of `segmentLength` edges, each summed by a
// (usually wider) group: each segment writes a partial sum, and a third entry
// point adds a row's partials in segment order (deterministic: no float
// atomics) and applies the epilogue. So short rows get small groups (many
// rows per warp, many gathers in flight) and long rows full warps.
#pragma once

#include "codegen/KernelParams.h"
#include "lower/KernelPlan.h"

#include <string>

namespace gnnjit::codegen {

enum class IndexWidth : uint8_t { I32, I64 };

struct SpmmTuning {
  int group = 32;         ///< lanes per light row: 1, 2, 4, 8, 16 or 32
  int chunks = 1;         ///< vectors per lane per tile, light rows
  int vec = 4;            ///< floats per lane access: 1, 2 or 4 (vector loads need aligned rows)
  int blockThreads = 256; ///< a multiple of 32
  /// Rows with more edges than this are split into segments of
  /// segmentLength edges, each summed by a group of segmentGroup lanes;
  /// 0: no split.
  int64_t heavyThreshold = 0;
  int64_t segmentLength = 256;
  int segmentGroup = 32;
  int segmentChunks = 1;

  int tileWidth() const { return group * vec * chunks; }
  int segmentTileWidth() const { return segmentGroup * vec * segmentChunks; }
  std::string print() const;
};

struct SpmmKernelSpec {
  std::string layer;             ///< for names and provenance
  std::string label;             ///< e.g. "fwd_agg0"
  lower::AggregationStage stage; ///< family SpMM, over InEdges or OutEdges
  int aggregateIndex = 0;
  /// When set, the kernel writes this output (named outputName) instead of
  /// the aggregate; every path from it to the aggregate must be element-wise
  /// (see isElementwiseIn).
  dsl::ExprPtr fusedOutput;
  std::string outputName;
  IndexWidth index = IndexWidth::I32;
  bool weighted = false; ///< the graph has edge weights (else edgeWeight reads 1)
  SpmmTuning tuning;
};

/// Entry points: "<base>_rows" always; "<base>_segments" and
/// "<base>_combine" when tuning.heavyThreshold > 0.
GeneratedModule generateSpmmKernel(const SpmmKernelSpec &spec);

/// The weight of every CSR position of the stage's CSR as one float (the
/// whole structural weight, divided by the row's size for a mean): the
/// matrix values cuSPARSE multiplies with. Entry "<base>" with a group of 32
/// lanes per row. The weight must be one scalar per edge.
GeneratedModule generateSpmmValuesKernel(const SpmmKernelSpec &spec);

/// Whether `root` reads `aggregate` only element-wise: every node between
/// them has the aggregate's shape and is unary, binary or select (so element
/// (h, d) of root reads element (h, d) of the aggregate and nothing else).
bool isElementwiseIn(const dsl::ExprPtr &root, const dsl::ExprNode &aggregate);

} // namespace gnnjit::codegen
