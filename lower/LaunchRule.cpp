#include "lower/LaunchRule.h"

#include <fmt/format.h>

#include <algorithm>

namespace gnnjit::lower {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

int64_t edgeRanges(int64_t edges, int64_t rangeEdges) { return std::max<int64_t>(1, ceilDiv(edges, rangeEdges)); }

int64_t nodeSumPartials(int64_t rows) { return std::clamp<int64_t>(ceilDiv(rows, 256), 1, kMaxPartialBlocks); }

Grid LaunchRule::grid(const GridCounts &c) const {
  switch (kind) {
  case Kind::SpmmRows:
    return {ceilDiv(c.rows * lanes, block), ceilDiv(width, tile)};
  case Kind::SpmmSegments:
    return {ceilDiv(c.segments * lanes, block), ceilDiv(width, tile)};
  case Kind::SpmmCombine:
    return {ceilDiv(c.heavyRows * lanes, block), ceilDiv(width, tile)};
  case Kind::CusparseValues:
    return {ceilDiv(c.rows * 32, block), 1};
  case Kind::NodeSumPartials:
    return {nodeSumPartials(c.rows), 1};
  case Kind::NodeSumFinish:
    return {ceilDiv(width, block), 1};
  case Kind::NodeOutputs:
    return {ceilDiv(c.rows * width, block), 1};
  case Kind::GlobalOutputs:
    return {ceilDiv(width, block), 1};
  case Kind::EdgeRows:
    return {ceilDiv(c.rows * 32, block), 1};
  case Kind::EdgeSumPartials:
    return {nodeSumPartials(c.rows), 1};
  case Kind::ElementPartials:
    return {std::clamp<int64_t>(ceilDiv(c.rows * width, block), 1, kMaxPartialBlocks), 1};
  case Kind::RowElements:
    return {ceilDiv(c.rows * width, block), 1};
  case Kind::SingleBlock:
    return {1, 1};
  case Kind::EdgeRanges:
    return {ceilDiv(edgeRanges(c.edges, heavyThreshold) * lanes, block), ceilDiv(width, tile)};
  case Kind::ElementBlocks:
    return {width, 1};
  case Kind::StridedRows:
    return {ceilDiv(std::min(c.rows, kMaxStridedGroups) * lanes, block), ceilDiv(width, tile)};
  case Kind::StridedSegments:
    return {ceilDiv(std::min(c.segments, kMaxStridedGroups) * lanes, block), ceilDiv(width, tile)};
  }
  return {};
}

std::string LaunchRule::describe() const {
  switch (kind) {
  case Kind::SpmmRows:
    return fmt::format("x: ceil(num_rows * group / block), y: ceil(F / tile_width) = {} (group={}, block={}, F={}, "
                       "tile_width={})",
                       ceilDiv(width, tile), lanes, block, width, tile);
  case Kind::SpmmSegments:
  case Kind::SpmmCombine:
    return fmt::format("x: ceil({} * segment_group / block), y: ceil(F / segment_tile_width) = {} (segment_group={}, "
                       "block={}, F={}, segment_tile_width={}; only when some row has more than heavy_threshold={} "
                       "edges)",
                       kind == Kind::SpmmSegments ? "num_segments" : "num_heavy_rows", ceilDiv(width, tile), lanes,
                       block, width, tile, heavyThreshold);
  case Kind::CusparseValues:
    return fmt::format("x: ceil(num_rows * 32 / {}) (one warp per row; the values are built once per graph, then "
                       "cuSPARSE multiplies)",
                       block);
  case Kind::NodeSumPartials:
    return fmt::format("x: num_partials = min({}, max(1, ceil(num_rows / 256))) (block={})", kMaxPartialBlocks, block);
  case Kind::NodeSumFinish:
    return fmt::format("x: ceil(F / {}) = {} (F={}, block={})", block, ceilDiv(width, block), width, block);
  case Kind::NodeOutputs:
    return fmt::format("x: ceil(num_rows * width / block) (width={}, block={})", width, block);
  case Kind::GlobalOutputs:
    return fmt::format("x: ceil(num_rows * width / block) = {} (num_rows=1, width={}, block={})", ceilDiv(width, block),
                       width, block);
  case Kind::EdgeRows:
    return fmt::format("x: ceil(num_rows * 32 / {}) (a warp per row, lanes over the width={})", block, width);
  case Kind::ElementPartials:
    return fmt::format("x: min({}, ceil(num_rows * F / {})) (F={}; blocks stride over every element)", kMaxPartialBlocks,
                       block, width);
  case Kind::RowElements:
    return fmt::format("x: ceil(num_rows * F / {}) (F={}; a thread per element)", block, width);
  case Kind::SingleBlock:
    return fmt::format("x: 1 (one block of {} threads)", block);
  case Kind::EdgeRanges:
    return fmt::format("x: ceil(num_ranges * group / block), num_ranges = max(1, ceil(num_edges / {})); y: ceil(F / "
                       "tile_width) = {} (group={}, block={}, F={}, tile_width={}; each group sums a range of "
                       "consecutive CSR positions)",
                       heavyThreshold, ceilDiv(width, tile), lanes, block, width, tile);
  case Kind::ElementBlocks:
    return fmt::format("x: F = {} (a block of {} threads per element)", width, block);
  case Kind::StridedRows:
  case Kind::StridedSegments:
    return fmt::format("x: ceil(min({}, {}) * group / block), y: ceil(F / tile_width) = {} (group={}, block={}, F={}, "
                       "tile_width={}{}; each group strides over the {} and writes one partial of its sums over all "
                       "edges)",
                       kind == Kind::StridedRows ? "num_rows" : "num_segments", kMaxStridedGroups, ceilDiv(width, tile),
                       lanes, block, width, tile,
                       kind == Kind::StridedRows
                           ? ""
                           : fmt::format("; only when some row has more than heavy_threshold={} edges", heavyThreshold),
                       kind == Kind::StridedRows ? "rows" : "segments");
  case Kind::EdgeSumPartials:
    return fmt::format("x: num_partials = min({}, max(1, ceil(num_rows / 256))) (block={}; each row's edges summed "
                       "by one thread)",
                       kMaxPartialBlocks, block);
  }
  return "?";
}

} // namespace gnnjit::lower
