// What every generated module shares around its device skeleton: its head
// (includes, index type, the anonymous namespace), the `Ops` struct that
// carries the layer's part (the kernel parameters its members read, then
// the members), the members several families define alike, entry-point
// signatures, and the finish kernel of the two-pass sums.
#pragma once

#include "codegen/KernelContext.h"
#include "codegen/KernelParams.h"
#include "codegen/Provenance.h"
#include "codegen/SourceWriter.h"
#include "dsl/Expr.h"
#include "lower/KernelPlan.h"
#include "lower/TuneConfig.h"

#include <optional>
#include <string>
#include <string_view>

namespace gnnjit::codegen {

/// A compile-time check that the plan's merge of heavy-row segments
/// (what the launcher allocates and fills) is what the device skeleton
/// writes: `segmentFloats` is the skeleton's own count per segment (e.g.
/// "gnnjit::device::spmmSegmentFloats<F>()"); a packed merge checks the
/// slots per heavy row (F) and the empty state of `packedType`. Nothing
/// when the step splits no row.
void writeMergeCheck(SourceWriter &out, const lower::SegmentMerge &merge, int64_t threshold,
                     const std::string &segmentFloats, const std::string &packedType = "");

/// "int32" or "int64", as provenance and plan.json name the index type.
std::string_view indexTypeName(lower::IndexWidth index);

/// The first lines of a module: the device headers (gnnjit_device.cuh and
/// the family's `skeleton`, e.g. "spmm.cuh"), `typedef ... index_t;` when
/// the module walks a CSR of `index`, and the opening of the anonymous
/// namespace that writeOpsStruct closes.
void writeModuleHead(SourceWriter &out, std::string_view skeleton, std::optional<lower::IndexWidth> index);

/// `extern "C" __global__ void __launch_bounds__(B) ENTRY(PARAMS)`.
std::string kernelSignature(const std::string &entry, int blockThreads, const ParamList &params);

/// The leading parameters of the tiled CSR skeletons (gnnjit/spmm.cuh and
/// reduction.cuh), asked for in `params` and returned as call arguments:
/// "num_rows, row_offsets, col_indices" (rows), "num_segments, row_offsets,
/// col_indices, segment_rows, segment_begins" (segments), "num_heavy_rows,
/// row_offsets, heavy_rows, heavy_first_segment" (combine).
std::string rowsParams(ParamList &params);
std::string segmentParams(ParamList &params);
std::string heavyRowParams(ParamList &params);
/// The trailing parameter of a rows skeleton: "heavy_threshold" (rows longer
/// go to segments), or "0" when the tiling splits no rows. Its value and the
/// segments' length ("segment_length") are launch parameters, not constants
/// of the source, so configs that differ only in them share one compiled
/// module (the autotuner times 9 such pairs per tiling).
std::string heavyThresholdParam(ParamList &params, const lower::RowTiling &tiling);
std::string segmentLengthParam(ParamList &params);

/// Where leaves live once an edge loop is done: every node-level read is of
/// the row's own node.
LeafPlaces ownRowPlaces(bool weighted);

/// The second kernel of a sum over all nodes or all edges, `<base>_finish`:
/// a thread per element adds the per-block partials in block order into
/// scratch buffer `aggregate`. Returns its record for the module.
GeneratedKernel writeSumFinishKernel(SourceWriter &out, const std::string &base, int aggregate);

/// "struct Ops { <ops members> <members> };", then closes the anonymous
/// namespace the module's preamble opened. `what` says what the layer's part is.
void writeOpsStruct(SourceWriter &out, const std::string &layer, const std::string &what, const ParamList &ops,
                    const SourceWriter &members);

/// float *outputRow(long long row): the row of `output` (a target), or of
/// scratch buffer `aggregate` when `output` is empty (`name`: the
/// function's name, for modules with several results).
void writeOutputRow(SourceWriter &w, ParamList &ops, const std::string &output, int aggregate,
                    const std::string &name = "outputRow");

/// float finish(long long row, int f, float sum): element f of the result
/// from the (scaled) aggregate: `sum` times the per-element row factors
/// (`factors`, may be empty), through `fused` (a target element-wise in
/// `aggregate`; null: the aggregate itself). `name` and `dim` (the floats
/// per head of f, a C expression) for modules with several results.
void writeFinish(SourceWriter &w, ParamList &ops, const LeafPlaces &rowPlaces, const std::vector<dsl::ExprPtr> &factors,
                 const dsl::ExprPtr &fused, const dsl::ExprNode &aggregate, const std::string &name = "finish",
                 const std::string &dim = "DIM");

/// The product of `factors` at element (h, d) as a C expression ("1.0f" when none).
std::string productOf(SourceWriter &w, ParamList &ops, const LeafPlaces &places, const std::vector<dsl::ExprPtr> &factors,
                      const std::string &h, const std::string &d);

/// The provenance of a tiled CSR kernel (SpMM, reduction): its tiling, index
/// type, width and which rows it takes.
ProvenanceInfo tiledProvenance(const std::string &layer, const std::string &family, const std::string &kernel,
                               const lower::RowTiling &t, lower::IndexWidth index, int64_t width);

} // namespace gnnjit::codegen
