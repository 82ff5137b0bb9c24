#include "codegen/OpsStruct.h"

#include "codegen/EmitExpr.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

std::string_view indexTypeName(lower::IndexWidth index) { return index == lower::IndexWidth::I32 ? "int32" : "int64"; }

void writeMergeCheck(SourceWriter &out, const lower::SegmentMerge &merge, int64_t threshold,
                     const std::string &segmentFloats, const std::string &packedType) {
  if (threshold == 0)
    return;
  if (merge.packed()) {
    out.line("static_assert(F == {}LL && {}::kEmpty == 0x{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}ull, "
             "\"the plan's packed slots per heavy row and their fill (lower::SegmentMerge)\");",
             merge.perUnit, packedType, merge.fill, merge.fill, merge.fill, merge.fill, merge.fill, merge.fill,
             merge.fill, merge.fill);
    return;
  }
  out.line("static_assert({} == {}LL, \"the plan's partial floats per heavy-row segment (lower::SegmentMerge)\");",
           segmentFloats, merge.perUnit);
}

void writeModuleHead(SourceWriter &out, std::string_view skeleton, std::optional<lower::IndexWidth> index) {
  out.line("#include \"gnnjit/gnnjit_device.cuh\"");
  out.line("#include \"gnnjit/{}\"", skeleton);
  out.blank();
  if (index)
    out.line("typedef {} index_t;", *index == lower::IndexWidth::I32 ? "int" : "long long");
  out.line("namespace {{");
}

std::string kernelSignature(const std::string &entry, int blockThreads, const ParamList &params) {
  return fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({})", blockThreads, entry,
                     params.signature());
}

namespace {
constexpr const char *kIndexPointer = "const index_t* __restrict__";
} // namespace

std::string rowsParams(ParamList &params) {
  const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
  const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", kIndexPointer);
  const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", kIndexPointer);
  return fmt::format("{}, {}, {}", rows, offsets, cols);
}

std::string segmentParams(ParamList &params) {
  const std::string count = params.use(ParamKind::NumSegments, "", "num_segments", "long long");
  const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", kIndexPointer);
  const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", kIndexPointer);
  const std::string rows = params.use(ParamKind::SegmentRows, "", "segment_rows", kIndexPointer);
  const std::string begins =
      params.use(ParamKind::SegmentBegins, "", "segment_begins", "const long long* __restrict__");
  return fmt::format("{}, {}, {}, {}, {}", count, offsets, cols, rows, begins);
}

std::string heavyThresholdParam(ParamList &params, const lower::RowTiling &tiling) {
  return tiling.heavyThreshold > 0 ? params.use(ParamKind::HeavyThreshold, "", "heavy_threshold", "long long") : "0";
}

std::string segmentLengthParam(ParamList &params) {
  return params.use(ParamKind::SegmentLength, "", "segment_length", "long long");
}

std::string heavyRowParams(ParamList &params) {
  const std::string count = params.use(ParamKind::NumHeavyRows, "", "num_heavy_rows", "long long");
  const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", kIndexPointer);
  const std::string rows = params.use(ParamKind::HeavyRows, "", "heavy_rows", kIndexPointer);
  const std::string first =
      params.use(ParamKind::HeavyFirstSegment, "", "heavy_first_segment", "const long long* __restrict__");
  return fmt::format("{}, {}, {}, {}", count, offsets, rows, first);
}

LeafPlaces ownRowPlaces(bool weighted) {
  LeafPlaces p;
  p.srcNode = p.dstNode = "row";
  p.weighted = weighted;
  return p;
}

GeneratedKernel writeSumFinishKernel(SourceWriter &out, const std::string &base, int aggregate) {
  ParamList params;
  const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
  const std::string count = params.use(ParamKind::NumPartials, "", "num_partials", "long long");
  const std::string sum =
      params.useScratch(ParamKind::AggregateData, aggregate, aggregateParamName(aggregate), "float* __restrict__");
  GeneratedKernel kernel{base + "_finish", params.params(), 32};
  out.blank();
  auto fn = out.scope("{}", kernelSignature(kernel.entry, 32, params));
  out.line("gnnjit::device::nodeSumFinish<F>({}, {}, {});", partials, count, sum);
  return kernel;
}

void writeOpsStruct(SourceWriter &out, const std::string &layer, const std::string &what, const ParamList &ops,
                    const SourceWriter &members) {
  out.blank();
  out.comment(fmt::format("Layer {}: {}.", layer, what));
  {
    auto st = out.scopeClosedBy("};", "struct Ops");
    out.text(ops.members());
    out.text(withoutTrailingNewlines(members.str()));
  }
  out.line("}} // namespace");
}

void writeOutputRow(SourceWriter &w, ParamList &ops, const std::string &output, int aggregate,
                    const std::string &name) {
  const bool toOutput = !output.empty();
  const std::string data =
      toOutput ? ops.use(ParamKind::OutputData, output, outputParamName(output), "float* __restrict__")
               : ops.useScratch(ParamKind::AggregateData, aggregate, aggregateParamName(aggregate), "float* __restrict__");
  const std::string ld =
      toOutput ? ops.use(ParamKind::OutputStride, output, outputStrideName(output), "long long")
               : ops.useScratch(ParamKind::AggregateStride, aggregate, aggregateStrideName(aggregate), "long long");
  w.line("GNNJIT_DEVICE float *{}(long long row) const {{ return {} + row * {}; }}", name, data, ld);
}

std::string productOf(SourceWriter &w, ParamList &ops, const LeafPlaces &places, const std::vector<dsl::ExprPtr> &factors,
                      const std::string &h, const std::string &d) {
  std::string p;
  ExprEmitter emitter(w, kernelContext(ops, places));
  for (const dsl::ExprPtr &f : factors) {
    const std::string v = emitter.element(f, h, d);
    p = p.empty() ? v : fmt::format("{} * {}", p, v);
  }
  return p.empty() ? "1.0f" : p;
}

void writeFinish(SourceWriter &w, ParamList &ops, const LeafPlaces &rowPlaces, const std::vector<dsl::ExprPtr> &factors,
                 const dsl::ExprPtr &fused, const dsl::ExprNode &aggregate, const std::string &name,
                 const std::string &dim) {
  auto fn = w.scope("GNNJIT_DEVICE float {}(long long row, int f, float sum) const", name);
  w.line("(void)row;");
  w.line("const int h = f / {0}, d = f % {0};", dim);
  w.line("(void)h; (void)d;");
  w.line("const float a = sum * {};", productOf(w, ops, rowPlaces, factors, "h", "d"));
  if (!fused) {
    w.line("return a;");
    return;
  }
  LeafPlaces withAggregate = rowPlaces;
  withAggregate.inVariables.insert_or_assign(&aggregate, std::string("a"));
  ExprEmitter emitter(w, kernelContext(ops, withAggregate));
  if (fused->shape() == aggregate.shape()) {
    w.line("return {};", emitter.element(fused, "h", "d"));
    return;
  }
  // A reshaped target (heads concatenated): element f by its own shape.
  w.line("const int th = f / {0}, td = f % {0};", fused->shape().dim);
  w.line("return {};", emitter.element(fused, "th", "td"));
}

ProvenanceInfo tiledProvenance(const std::string &layer, const std::string &family, const std::string &kernel,
                               const lower::RowTiling &t, lower::IndexWidth index, int64_t width) {
  ProvenanceInfo info;
  info.layer = layer;
  info.family = family;
  info.kernel = kernel;
  info.tuning = {{"group", std::to_string(t.group)},
                 {"vec", std::to_string(t.vec)},
                 {"chunks", std::to_string(t.chunks)},
                 {"block", std::to_string(t.blockThreads)},
                 {"segment_group", std::to_string(t.segmentGroup)},
                 {"segment_chunks", std::to_string(t.segmentChunks)},
                 {"index", std::string(indexTypeName(index))},
                 {"F", std::to_string(width)}};
  // The heavy-row threshold and segment length are launch parameters (the
  // same module serves every value; plan.json records the ones planned).
  info.degreeBucket = t.heavyThreshold > 0 ? "rows of <= heavy_threshold edges; heavier rows in segments of "
                                             "segment_length (both kernel parameters)"
                                           : "all rows";
  return info;
}

} // namespace gnnjit::codegen
