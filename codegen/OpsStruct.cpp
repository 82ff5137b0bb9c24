#include "codegen/OpsStruct.h"

#include "codegen/EmitExpr.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

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

void writeOutputRow(SourceWriter &w, ParamList &ops, const std::string &output, int aggregate) {
  const bool toOutput = !output.empty();
  const std::string ref = toOutput ? output : std::to_string(aggregate);
  const std::string data =
      ops.use(toOutput ? ParamKind::OutputData : ParamKind::AggregateData, ref,
              toOutput ? outputParamName(ref) : aggregateParamName(aggregate), "float* __restrict__");
  const std::string ld = ops.use(toOutput ? ParamKind::OutputStride : ParamKind::AggregateStride, ref,
                                 toOutput ? outputStrideName(ref) : aggregateStrideName(aggregate), "long long");
  w.line("GNNJIT_DEVICE float *outputRow(long long row) const {{ return {} + row * {}; }}", data, ld);
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
                 const dsl::ExprPtr &fused, const dsl::ExprNode &aggregate) {
  auto fn = w.scope("GNNJIT_DEVICE float finish(long long row, int f, float sum) const");
  w.line("(void)row;");
  w.line("const int h = f / DIM, d = f % DIM;");
  w.line("(void)h; (void)d;");
  w.line("const float a = sum * {};", productOf(w, ops, rowPlaces, factors, "h", "d"));
  std::string result = "a";
  if (fused) {
    LeafPlaces withAggregate = rowPlaces;
    withAggregate.inVariables[&aggregate] = "a";
    ExprEmitter emitter(w, kernelContext(ops, withAggregate));
    result = emitter.element(fused, "h", "d");
  }
  w.line("return {};", result);
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
                 {"heavy_threshold", std::to_string(t.heavyThreshold)},
                 {"segment_length", std::to_string(t.segmentLength)},
                 {"segment_group", std::to_string(t.segmentGroup)},
                 {"segment_chunks", std::to_string(t.segmentChunks)},
                 {"index", index == lower::IndexWidth::I32 ? "int32" : "int64"},
                 {"F", std::to_string(width)}};
  info.degreeBucket = t.heavyThreshold > 0 ? fmt::format("rows of <= {} edges; heavier rows in segments of {}",
                                                         t.heavyThreshold, t.segmentLength)
                                           : "all rows";
  return info;
}

} // namespace gnnjit::codegen
