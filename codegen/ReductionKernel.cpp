#include "codegen/ReductionKernel.h"

#include "codegen/Emit.h"
#include "codegen/EmitExpr.h"
#include "codegen/OpsStruct.h"
#include "codegen/Provenance.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

using namespace gnnjit::dsl;
using llvm::cast;

LeafPlaces edgeLoopPlaces(const lower::PassPlan &plan, lower::Direction direction) {
  LeafPlaces p;
  const bool in = direction == lower::Direction::In;
  (in ? p.dstNode : p.srcNode) = "row";
  (in ? p.srcNode : p.dstNode) = "col";
  p.position = "p";
  p.weighted = plan.weighted;
  p.transposed = !in;
  p.savedArgs = plan.savedArgsOf;
  p.savedLse = plan.savedLseOf;
  p.savedValues = plan.savedValueOf;
  p.inBuffers = plan.scratchOf;
  p.bufferRow = "row";
  return p;
}

namespace {

const char *reduceKind(Reduce r) {
  switch (r) {
  case Reduce::Sum:
    return "gnnjit::device::kReduceSum";
  case Reduce::Mean:
    return "gnnjit::device::kReduceMean";
  case Reduce::Max:
    return "gnnjit::device::kReduceMax";
  case Reduce::Min:
    return "gnnjit::device::kReduceMin";
  }
  return "?";
}

/// Writes one reduction module: the Ops struct, then an entry per skeleton.
class ReductionWriter {
public:
  ReductionWriter(const lower::PassPlan &plan, const lower::ReductionStep &step)
      : plan_(plan), step_(step), t_(step.config), agg_(*cast<Aggregate>(step.stage.aggregate.get())),
        shape_(step.stage.aggregate->shape()), base_(fmt::format("gnnjit_{}_{}", plan.layer, step.label)) {
    if (agg_.over() != Over::InEdges && agg_.over() != Over::OutEdges)
      throwInternalError("reduction kernel for an aggregation over {}", overName(agg_.over()));
  }

  GeneratedModule write() {
    ParamList ops;
    SourceWriter members;
    message(members, ops);
    if (step_.merge.packed())
      messageElement(members, ops);
    writeFinish(members, ops, ownRowPlaces(plan_.weighted), {}, step_.fusedOutput, *step_.stage.aggregate);
    writeOutputRow(members, ops, step_.target, step_.aggregate);
    if (!step_.savedArgs.empty()) {
      const std::string data = ops.use(ParamKind::SavedData, step_.savedArgs, savedParamName(step_.savedArgs),
                                       "index_t* __restrict__");
      const std::string ld =
          ops.use(ParamKind::SavedStride, step_.savedArgs, savedStrideName(step_.savedArgs), "long long");
      members.line("GNNJIT_DEVICE index_t *argRow(long long row) const {{ return {} + row * {}; }}", data, ld);
    }

    SourceWriter out;
    writeModuleHead(out, "reduction.cuh", plan_.index);
    out.line("constexpr int V = {};", t_.vec);
    out.line("constexpr int F = {}, DIM = {};", shape_.size(), shape_.dim);
    out.line("constexpr int REDUCE = {};", reduceKind(agg_.reduce()));
    out.line("constexpr bool SAVE_ARGS = {};", step_.savedArgs.empty() ? "false" : "true");
    writeMergeCheck(out, step_.merge, t_.heavyThreshold, "gnnjit::device::reduceSegmentFloats<F>()",
                    "gnnjit::device::PackedOf<REDUCE>");
    writeOpsStruct(out, plan_.layer,
                   fmt::format("the message of aggregate[{}, {}] and its epilogue", reduceName(agg_.reduce()),
                               overName(agg_.over())),
                   ops, members);
    GeneratedModule module;
    module.name = fmt::format("{}_{}", plan_.layer, step_.label);
    for (const lower::KernelEntry &e : step_.kernels) {
      out.blank();
      module.kernels.push_back(writeEntry(out, ops, e));
    }
    ProvenanceInfo info = tiledProvenance(plan_.layer, "reduction", base_, t_, plan_.index, shape_.size());
    info.tuning["reduce"] = std::string(reduceName(agg_.reduce()));
    if (t_.heavyThreshold > 0)
      info.tuning["heavy_merge"] = step_.merge.packed() ? "packed atomics" : "second pass";
    module.source = withProvenance(info, out.str());
    checkEntries(module, step_.kernels);
    return module;
  }

private:
  /// The data and row-stride parameters of a plain-gather message's input.
  std::pair<std::string, std::string> gatheredInput(ParamList &ops) const {
    const std::string &name = cast<InputRef>(agg_.message().get())->input()->name;
    return {ops.use(ParamKind::InputData, name, inputParamName(name), "const float* __restrict__"),
            ops.use(ParamKind::InputStride, name, inputStrideName(name), "long long")};
  }

  /// The message at elements f .. f + V - 1: a vector gather of a plain
  /// input, or element by element (V = 1).
  void message(SourceWriter &w, ParamList &ops) {
    auto fn = w.scope("GNNJIT_DEVICE void message(float (&m)[V], long long row, index_t col, long long p, int f) "
                      "const");
    w.line("(void)row; (void)col; (void)p;");
    if (lower::messageIsPlainGather(step_.stage)) {
      const auto [data, ld] = gatheredInput(ops);
      w.line("gnnjit::device::ldgVecAligned<float, V>({} + (long long)col * {} + f, m);", data, ld);
      return;
    }
    if (t_.vec != 1)
      throwInternalError("a reduction message gathered {} floats at a time but not a plain input", t_.vec);
    w.line("const int h = f / DIM, d = f % DIM;");
    w.line("(void)h; (void)d;");
    const LeafPlaces places = edgeLoopPlaces(plan_, step_.direction); // outlives the emitter
    ExprEmitter emitter(w, kernelContext(ops, places));
    w.line("m[0] = {};", emitter.element(agg_.message(), "h", "d"));
  }

  /// Element f of the message alone, for the packed merge's decoding (the
  /// exact sign of a zero result, the payload of a NaN).
  void messageElement(SourceWriter &w, ParamList &ops) {
    auto fn = w.scope("GNNJIT_DEVICE float messageElement(long long row, index_t col, long long p, int f) const");
    if (lower::messageIsPlainGather(step_.stage)) {
      const auto [data, ld] = gatheredInput(ops);
      w.line("(void)row; (void)p;");
      w.line("return {}[(long long)col * {} + f];", data, ld);
      return;
    }
    w.line("float m[V];"); // V is 1: the message is computed element by element
    w.line("message(m, row, col, p, f);");
    w.line("return m[0];");
  }

  GeneratedKernel writeEntry(SourceWriter &out, const ParamList &ops, const lower::KernelEntry &e) {
    ParamList params;
    std::string call;
    switch (e.launch.kind) {
    case lower::LaunchRule::Kind::SpmmRows: {
      const std::string rows = rowsParams(params);
      call = fmt::format("gnnjit::device::reduceRows<{}, V, {}, F, REDUCE, SAVE_ARGS>(ops, {}, {});", t_.group,
                         t_.chunks, rows, heavyThresholdParam(params, t_));
      break;
    }
    case lower::LaunchRule::Kind::SpmmSegments: {
      if (step_.merge.packed()) {
        call = packedSegmentsCall(params);
        break;
      }
      const std::string segments = segmentParams(params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      const std::string args = params.use(ParamKind::PartialArgs, "", "partial_args", "long long* __restrict__");
      call = fmt::format("gnnjit::device::reduceSegments<{}, V, {}, F, REDUCE>(ops, {}, {}, {}, {});",
                         t_.segmentGroup, t_.segmentChunks, segments, partials, args, segmentLengthParam(params));
      break;
    }
    case lower::LaunchRule::Kind::SpmmCombine: {
      if (step_.merge.packed()) {
        call = packedCombineCall(params);
        break;
      }
      const std::string heavy = heavyRowParams(params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "const float* __restrict__");
      const std::string args =
          params.use(ParamKind::PartialArgs, "", "partial_args", "const long long* __restrict__");
      call = fmt::format("gnnjit::device::reduceCombine<{}, V, {}, F, REDUCE, SAVE_ARGS>(ops, {}, {}, {});",
                         t_.segmentGroup, t_.segmentChunks, heavy, partials, args);
      break;
    }
    default:
      throwInternalError("a reduction step with a {} entry", e.entry);
    }
    params.append(ops);
    GeneratedKernel kernel{e.entry, params.params(), e.launch.block};
    auto fn = out.scope("{}", kernelSignature(e.entry, e.launch.block, params));
    out.line("const Ops ops{{{}}};", ops.names());
    out.line("{}", call);
    return kernel;
  }

  /// A heavy max/min row's segments merged by packed atomics, and decoded.
  std::string packedSegmentsCall(ParamList &params) const {
    const std::string segments = segmentParams(params);
    const std::string heavy = params.use(ParamKind::SegmentHeavy, "", "segment_heavy", "const long long* __restrict__");
    const std::string packed =
        params.use(ParamKind::PackedResults, "", "packed_results", "unsigned long long* __restrict__");
    return fmt::format("gnnjit::device::reduceSegmentsPacked<{}, V, {}, F, REDUCE>(ops, {}, {}, {}, {});",
                       t_.segmentGroup, t_.segmentChunks, segments, heavy, packed, segmentLengthParam(params));
  }
  std::string packedCombineCall(ParamList &params) const {
    const char *index = "const index_t* __restrict__";
    const std::string count = params.use(ParamKind::NumHeavyRows, "", "num_heavy_rows", "long long");
    const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", index);
    const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", index);
    const std::string rows = params.use(ParamKind::HeavyRows, "", "heavy_rows", index);
    const std::string packed =
        params.use(ParamKind::PackedResults, "", "packed_results", "const unsigned long long* __restrict__");
    return fmt::format("gnnjit::device::reduceCombinePacked<{}, V, {}, F, REDUCE, SAVE_ARGS>(ops, {}, {}, {}, {}, {});",
                       t_.segmentGroup, t_.segmentChunks, count, offsets, cols, rows, packed);
  }

  const lower::PassPlan &plan_;
  const lower::ReductionStep &step_;
  const lower::ReductionConfig &t_;
  const Aggregate &agg_;
  Shape shape_;
  std::string base_;
};

} // namespace

GeneratedModule generateReductionKernel(const lower::PassPlan &plan, const lower::ReductionStep &step) {
  return ReductionWriter(plan, step).write();
}

GeneratedModule generateArgScatterKernel(const lower::PassPlan &plan, const lower::ArgScatterStep &step) {
  const Shape shape = step.stage.aggregate->shape();
  const std::string base = fmt::format("gnnjit_{}_{}", plan.layer, step.label);
  ParamList ops;
  SourceWriter members;
  {
    // Read at the arg edge p (col -> row) in the incoming CSR.
    auto fn = members.scope("GNNJIT_DEVICE float contribution(long long row, index_t col, long long p, int f) const");
    members.line("(void)row; (void)col; (void)p;");
    members.line("const int h = f / DIM, d = f % DIM;");
    members.line("(void)h; (void)d;");
    if (step.rest) {
      const LeafPlaces places = edgeLoopPlaces(plan, lower::Direction::In); // outlives the emitter
      ExprEmitter emitter(members, kernelContext(ops, places));
      members.line("return {};", emitter.element(step.rest, "h", "d"));
    } else {
      members.line("return 1.0f;");
    }
  }
  writeFinish(members, ops, ownRowPlaces(plan.weighted), {}, step.fusedOutput, *step.stage.aggregate);
  writeOutputRow(members, ops, step.target, step.aggregate);

  SourceWriter out;
  writeModuleHead(out, "argscatter.cuh", plan.index);
  out.line("constexpr int F = {}, DIM = {};", shape.size(), shape.dim);
  writeOpsStruct(out, plan.layer, "the gradient each arg edge carries to its source, and the epilogue", ops,
                 members);
  GeneratedModule module;
  module.name = fmt::format("{}_{}", plan.layer, step.label);
  // The step's kernels in launch order, as planArgScatter lists them.
  enum : size_t { kBound, kScale, kScatter, kConvert };
  for (size_t k = 0; k < step.kernels.size(); ++k) {
    const lower::KernelEntry &e = step.kernels[k];
    ParamList params;
    if (k == kScale) {
      // The scale from the bound's partials: reads no layer data.
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "const float* __restrict__");
      const std::string blocks = params.use(ParamKind::NumPartials, "", "num_partials", "long long");
      const std::string terms = params.use(ParamKind::FixedPointTerms, "", "max_terms", "long long");
      const std::string scale = params.use(ParamKind::FixedPointScale, "", "scale", "double* __restrict__");
      out.blank();
      auto fn = out.scope("{}", kernelSignature(e.entry, e.launch.block, params));
      out.line("gnnjit::device::argScatterScale({}, {}, {}, {});", partials, blocks, terms, scale);
      fn.close();
      module.kernels.push_back(GeneratedKernel{e.entry, params.params(), e.launch.block});
      continue;
    }
    const char *index = "const index_t* __restrict__";
    const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
    std::string call;
    if (k == kConvert) {
      const std::string scale = params.use(ParamKind::FixedPointScale, "", "scale", "const double* __restrict__");
      const std::string sums =
          params.use(ParamKind::FixedPointSums, "", "fixed_point_sums", "const long long* __restrict__");
      call = fmt::format("gnnjit::device::argScatterConvert<F>(ops, {}, {}, {});", rows, scale, sums);
    } else {
      // The bound and the scatter read each result's arg edge.
      const std::string args =
          params.use(ParamKind::SavedData, step.savedArgs, savedParamName(step.savedArgs), index);
      const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", index);
      if (k == kBound) {
        const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
        call = fmt::format("gnnjit::device::argScatterBound<F>(ops, {}, {}, {}, {});", rows, args, cols, partials);
      } else {
        const std::string scale = params.use(ParamKind::FixedPointScale, "", "scale", "const double* __restrict__");
        const std::string sums =
            params.use(ParamKind::FixedPointSums, "", "fixed_point_sums", "long long* __restrict__");
        call = fmt::format("gnnjit::device::argScatterAdd<F>(ops, {}, {}, {}, {}, {});", rows, args, cols, scale, sums);
      }
    }
    params.append(ops);
    out.blank();
    auto fn = out.scope("{}", kernelSignature(e.entry, e.launch.block, params));
    out.line("const Ops ops{{{}}};", ops.names());
    out.line("{}", call);
    fn.close();
    module.kernels.push_back(GeneratedKernel{e.entry, params.params(), e.launch.block});
  }
  ProvenanceInfo info;
  info.layer = plan.layer;
  info.family = "reduction";
  info.kernel = base;
  info.tuning = {{"index", std::string(indexTypeName(plan.index))},
                 {"F", std::to_string(shape.size())},
                 {"arg_scatter", "fixed-point"}};
  info.degreeBucket = "every (row, element) with an arg edge";
  module.source = withProvenance(info, out.str());
  checkEntries(module, step.kernels);
  return module;
}

} // namespace gnnjit::codegen
