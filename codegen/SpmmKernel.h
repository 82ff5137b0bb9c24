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

namespace gnnjit::codegen {

/// The module of a generated SpMM step: its entries, named and shaped as
/// the step's KernelEntry list says ("<base>_rows", and "<base>_segments",
/// "<base>_combine" when step.config.heavyThreshold > 0).
GeneratedModule generateSpmmKernel(const lower::PassPlan &plan, const lower::SpmmStep &step);

/// The weight of every CSR position of a cuSPARSE step's CSR as one float
/// (the whole structural weight, divided by the row's size for a mean): the
/// matrix values cuSPARSE multiplies with. Entry "<base>_values", a warp per
/// row. The weight must be one scalar per edge.
GeneratedModule generateSpmmValuesKernel(const lower::PassPlan &plan, const lower::SpmmStep &step);

} // namespace gnnjit::codegen
