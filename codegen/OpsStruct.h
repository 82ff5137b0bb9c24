// What every generated module shares around its device skeleton: the `Ops`
// struct that carries the layer's part (the kernel parameters its members
// read, then the members), and the members several families define alike.
#pragma once

#include "codegen/KernelContext.h"
#include "codegen/KernelParams.h"
#include "codegen/Provenance.h"
#include "codegen/SourceWriter.h"
#include "dsl/Expr.h"
#include "lower/TuneConfig.h"

#include <string>

namespace gnnjit::codegen {

/// "struct Ops { <ops members> <members> };", then closes the anonymous
/// namespace the module's preamble opened. `what` says what the layer's part is.
void writeOpsStruct(SourceWriter &out, const std::string &layer, const std::string &what, const ParamList &ops,
                    const SourceWriter &members);

/// float *outputRow(long long row): the row of `output` (a target), or of
/// scratch buffer `aggregate` when `output` is empty.
void writeOutputRow(SourceWriter &w, ParamList &ops, const std::string &output, int aggregate);

/// float finish(long long row, int f, float sum): element f of the result
/// from the (scaled) aggregate: `sum` times the per-element row factors
/// (`factors`, may be empty), through `fused` (a target element-wise in
/// `aggregate`; null: the aggregate itself).
void writeFinish(SourceWriter &w, ParamList &ops, const LeafPlaces &rowPlaces, const std::vector<dsl::ExprPtr> &factors,
                 const dsl::ExprPtr &fused, const dsl::ExprNode &aggregate);

/// The product of `factors` at element (h, d) as a C expression ("1.0f" when none).
std::string productOf(SourceWriter &w, ParamList &ops, const LeafPlaces &places, const std::vector<dsl::ExprPtr> &factors,
                      const std::string &h, const std::string &d);

/// The provenance of a tiled CSR kernel (SpMM, reduction): its tiling, index
/// type, width and which rows it takes.
ProvenanceInfo tiledProvenance(const std::string &layer, const std::string &family, const std::string &kernel,
                               const lower::RowTiling &t, lower::IndexWidth index, int64_t width);

} // namespace gnnjit::codegen
