// How each kernel's grid follows the graph: one rule per kernel, decided
// when the pass is planned, read by the launcher (exec/StepLauncher) to size
// its grids and by `export` to write them into plan.json. Nothing else
// computes a grid.
#pragma once

#include <cstdint>
#include <string>

namespace gnnjit::lower {

/// What a grid counts, from the graph the kernels run on.
struct GridCounts {
  int64_t rows = 0;      ///< rows of the CSR the kernel walks: the graph's nodes
  int64_t segments = 0;  ///< heavy-row segments of the step's CSR and threshold
  int64_t heavyRows = 0; ///< rows split into segments
  int64_t edges = 0;     ///< edges of the graph
};

/// The ranges of consecutive CSR positions an attention sum over all edges
/// cuts `edges` into, about `rangeEdges` each (at least one range).
int64_t edgeRanges(int64_t edges, int64_t rangeEdges);

struct Grid {
  int64_t x = 0, y = 1;
};

/// CUDA's limits on a grid: beyond them a launch is refused before anything runs.
inline constexpr int64_t kMaxGridX = 0x7fffffff, kMaxGridY = 65535;

/// The most blocks of a kernel that writes one partial result per block
/// (node and edge sums, the arg scatter's bound): few enough that their
/// partials are added in order in no time.
inline constexpr int64_t kMaxPartialBlocks = 1024;

/// The most groups of a strided kernel, each writing one partial result of
/// its sums over all edges: enough to fill the GPU, few enough that the
/// partials are added in order quickly.
inline constexpr int64_t kMaxStridedGroups = 8192;

/// The partial sums a node-sum kernel reduces `rows` rows into, one block each.
int64_t nodeSumPartials(int64_t rows);

struct LaunchRule {
  enum class Kind : uint8_t {
    SpmmRows,        ///< a group of `lanes` per row; y: tiles of `tile` floats
    SpmmSegments,    ///< a group of `lanes` per heavy-row segment
    SpmmCombine,     ///< a group of `lanes` per heavy row
    CusparseValues,  ///< a warp per row
    NodeSumPartials, ///< one block per partial
    NodeSumFinish,   ///< a thread per element
    NodeOutputs,     ///< a thread per (row, element)
    GlobalOutputs,   ///< a thread per element of the one row
    EdgeRows,        ///< a warp per row of the incoming CSR (per-edge targets)
    EdgeSumPartials, ///< one block per partial, rows strided over blocks
    ElementPartials, ///< up to kMaxPartialBlocks blocks striding over every (row, element)
    RowElements,     ///< a thread per (row, element), rows the graph's nodes
    SingleBlock,     ///< one block (a final reduction of another kernel's partials)
    ElementBlocks,   ///< a block per element of the width (a deterministic sum of many partials)
    EdgeRanges,      ///< a group of `lanes` per range of about `heavyThreshold` CSR positions; y: tiles
    StridedRows,     ///< as SpmmRows, at most kMaxStridedGroups groups striding over the rows
    StridedSegments, ///< as SpmmSegments, at most kMaxStridedGroups groups striding over the segments
  };
  Kind kind = Kind::SpmmRows;
  int block = 256;
  int64_t lanes = 1;          ///< threads per counted unit (SpMM kinds)
  int64_t width = 0;          ///< floats per row (F)
  int64_t tile = 0;           ///< floats per grid row (SpMM kinds)
  int64_t heavyThreshold = 0; ///< SpmmSegments, SpmmCombine: launched only when a row is longer; EdgeRanges: edges per range

  Grid grid(const GridCounts &counts) const;
  /// The groups of `lanes` threads across the grid (a strided kernel's
  /// count of partial results).
  int64_t groups(const GridCounts &counts) const { return grid(counts).x * block / lanes; }
  /// The rule with its constants filled in, e.g. "x: ceil(num_rows * group /
  /// block), y: ceil(F / tile_width) = 8 (group=4, block=256, F=130, tile_width=32)".
  std::string describe() const;
};

} // namespace gnnjit::lower
