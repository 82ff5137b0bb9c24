// How each kernel is shaped: one plain config struct per kernel family, one
// per aggregation stage of a pass. Lowering decides what runs; a config
// decides how (and, for SpMM, whether cuSPARSE or the generated kernel runs
// it). The tuner's rule (autotune/Rule.h) makes these from a graph's degree
// statistics; its search times others and records the winners as data.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace gnnjit::lower {

/// The graph's CSR index type, as kernels declare index_t.
enum class IndexWidth : uint8_t { I32, I64 };

/// How a generated CSR kernel maps rows to lanes (codegen/device/spmm.cuh
/// and reduction.cuh say what each number does); SpMM and reduction kernels
/// share it.
struct RowTiling {
  int group = 32;         ///< lanes per light row: 1, 2, 4, 8, 16 or 32
  int chunks = 1;         ///< vectors per lane per tile, light rows
  int vec = 4;            ///< floats per lane access: 1, 2 or 4 (vector loads need aligned rows)
  int blockThreads = 256; ///< a multiple of 32
  /// Rows with more edges than this are split into segments of
  /// segmentLength edges, each summed by a group of segmentGroup lanes and
  /// folded in segment order by a second kernel; 0: no split.
  int64_t heavyThreshold = 0;
  int64_t segmentLength = 256;
  int segmentGroup = 32;
  int segmentChunks = 1;

  int tileWidth() const { return group * vec * chunks; }
  int segmentTileWidth() const { return segmentGroup * vec * segmentChunks; }
  std::string print() const;
  bool operator==(const RowTiling &) const = default;
};

/// An SpMM-family aggregation: cuSPARSE, or the generated CSR kernel.
struct SpmmConfig : RowTiling {
  enum class Backend : uint8_t { Generated, Cusparse };
  Backend backend = Backend::Generated;
  /// cuSPARSE's CSR algorithm (1, 2 or 3); 0: the fastest, timed on first use.
  int cusparseAlgorithm = 0;

  std::string print() const;
  bool operator==(const SpmmConfig &) const = default;
};

/// A reduction-family aggregation (max, min, or the sum or mean of a general
/// message): codegen/device/reduction.cuh's kernels. vec > 1 only when the
/// message is a plain gathered input.
struct ReductionConfig : RowTiling {
  /// A backward sum over out-edges of (a max/min's arg match) x (rest): scatter
  /// each result's gradient to its arg edge's source (N x F work, integer
  /// fixed-point atomics whose sum does not depend on order) instead of
  /// walking the transpose and testing every edge (E x F).
  bool argScatter = true;
  /// Heavy rows of a max or min: merge the segments with packed (value,
  /// position) 64-bit atomics and a decoding pass instead of the second
  /// pass over per-segment partials. Rows must be shorter than 2^31 edges.
  bool packedMerge = false;
  bool operator==(const ReductionConfig &) const = default;
};

/// An attention-family aggregation (codegen/device/attention.cuh): the
/// forward's online softmax, a backward sum that recomputes alpha, or a
/// parameter gradient's sum over all edges. A tile holds whole heads: the
/// per-head sums of a score are reduced across the lanes of one head, so vec
/// divides the head dim and dim / vec lanes per head divide the group (or
/// the other way round); tileWidth() is a multiple of the head dim.
struct AttentionConfig : RowTiling {
  /// Parameter gradients (sums over all edges): edges are cut into ranges of
  /// about this many consecutive CSR positions, a group each, whose partial
  /// sums the finish kernel adds in a fixed order.
  int64_t rangeEdges = 256;
  /// The backward's sums share edge loops: sums over the same CSR and lanes
  /// in one loop (their gathers, per-head sums and alpha computed once per
  /// edge), sums over all edges in the loop over in-edges (each group's
  /// partial added in a fixed order), flat rows viewed as heads (d_out)
  /// gathered as vectors. The rule turns it on (RuleOptions::
  /// fuseAttentionBackward); a config made without it runs a loop per sum.
  bool fuseBackward = false;
  /// The head dim the lanes are laid out for, when above the real one (0:
  /// the real one): a head whose dim / vec lanes are a prime such as 61
  /// (GATv2 4 x 122) could only be tiled by one lane per row; padded to 64
  /// lanes it takes a group, whose lanes past the real dim read and store
  /// nothing (attention.cuh). A multiple of vec.
  int64_t paddedDim = 0;
  /// The lanes' head dim for a real head dim of `dim`.
  int64_t laneDim(int64_t dim) const { return paddedDim > 0 ? paddedDim : dim; }
  std::string print() const;
  bool operator==(const AttentionConfig &) const = default;
};

/// The config of one aggregation stage, by family; monostate for a stage
/// nothing tunes (a sum over all nodes or all edges).
using StageConfig = std::variant<std::monostate, SpmmConfig, ReductionConfig, AttentionConfig>;

/// `c` with what its kernels do not read reset: the segment fields when
/// no row is split. Configs that give the same kernels compare equal so.
template <class Config>
  requires std::is_base_of_v<RowTiling, Config>
Config normalized(Config c) {
  if (c.heavyThreshold == 0) {
    c.segmentLength = RowTiling{}.segmentLength;
    c.segmentGroup = c.group;
    c.segmentChunks = c.chunks;
  }
  return c;
}
StageConfig normalized(StageConfig config);

/// What planning a pass is handed: the graph facts kernels are compiled
/// for, and one config per aggregation stage (in the pass's stage order).
struct PassConfig {
  IndexWidth index = IndexWidth::I32;
  bool weighted = false; ///< the graph has edge weights (else edgeWeight reads 1)
  std::vector<StageConfig> stages;
  bool operator==(const PassConfig &) const = default;
};

/// `config` for inputs whose rows do not allow 16-byte loads: every
/// generated kernel gathers one float at a time (an attention tile keeps
/// its heads whole: vec times the chunks).
PassConfig unalignedConfig(PassConfig config);

} // namespace gnnjit::lower
