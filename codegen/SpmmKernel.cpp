#include "codegen/SpmmKernel.h"

#include "codegen/Emit.h"
#include "codegen/KernelContext.h"
#include "codegen/OpsStruct.h"
#include "codegen/Provenance.h"
#include "dsl/IRVisitor.h"
#include "support/Error.h"

#include <fmt/format.h>


namespace gnnjit::codegen {

using namespace gnnjit::dsl;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

using lower::IndexWidth;

/// The weight's factors by where they can be computed.
struct WeightFactors {
  std::vector<ExprPtr> edgeScalar, edgeElement; ///< per edge: one number, or per feature element
  std::vector<ExprPtr> rowScalar, rowElement;   ///< per row (and global): applied once after the sum
};

/// Writes an SpMM module: the layer's part as an `Ops` struct of device
/// members (codegen/device/spmm.cuh says what each does), and one small
/// entry point per skeleton the plan launches.
class SpmmWriter {
public:
  SpmmWriter(const lower::PassPlan &plan, const lower::SpmmStep &step) : plan_(plan), step_(step), t_(step.config) {
    const auto *agg = cast<Aggregate>(step.stage.aggregate.get());
    overIn_ = agg->over() == Over::InEdges;
    if (!overIn_ && agg->over() != Over::OutEdges)
      throwInternalError("SpMM kernel for an aggregation over {}", overName(agg->over()));
    if (agg->reduce() != Reduce::Sum && agg->reduce() != Reduce::Mean)
      throwInternalError("SpMM kernel for a {} aggregation", reduceName(agg->reduce()));
    mean_ = agg->reduce() == Reduce::Mean;
    shape_ = step.stage.aggregate->shape();
    F_ = shape_.size();
    base_ = fmt::format("gnnjit_{}_{}", plan.layer, step.label);
    if (step.stage.weight)
      splitWeight(step.stage.weight);
    fastValue_ = lower::isPlainGather(step.stage);
  }

  GeneratedModule writeValues() {
    if (!step_.stage.scalarWeight)
      throwInternalError("edge values for a weight of shape {}", shapeText(step_.stage.weight->shape()));
    ParamList ops;
    SourceWriter members;
    {
      auto fn = members.scope("GNNJIT_DEVICE float edgeValue(long long row, index_t col, long long p, long long begin, "
                              "long long end) const");
      members.line("(void)row; (void)col; (void)p; (void)begin; (void)end;");
      const std::string weight =
          step_.stage.weight ? productOf(members, ops, edgePlaces(), {step_.stage.weight}, "0", "0") : "1.0f";
      members.line("return {};", mean_ ? fmt::format("{} / (float)(end - begin)", weight) : weight);
    }
    ParamList params;
    const std::string rows = rowsParams(params);
    const std::string values = params.use(ParamKind::EdgeValues, "", "edge_values", "float* __restrict__");
    params.append(ops);
    GeneratedKernel kernel{base_ + "_values", params.params(), 256};

    SourceWriter out;
    preamble(out, false);
    writeOpsStruct(out, plan_.layer, "the weight of each CSR position, one float (cuSPARSE's matrix values)", ops,
                   members);
    out.blank();
    {
      auto fn = out.scope("{}", kernelSignature(kernel.entry, 256, params));
      out.line("gnnjit::device::spmmValues(Ops{{{}}}, {}, {});", ops.names(), rows, values);
    }
    ProvenanceInfo info;
    info.layer = plan_.layer;
    info.family = "spmm";
    info.kernel = kernel.entry;
    info.tuning = {{"index", std::string(indexTypeName(plan_.index))}};
    info.degreeBucket = "all rows (cuSPARSE matrix values)";
    GeneratedModule module;
    module.name = fmt::format("{}_{}_values", plan_.layer, step_.label);
    module.source = withProvenance(info, out.str());
    module.kernels.push_back(std::move(kernel));
    return module;
  }

  GeneratedModule write() {
    if (t_.vec > 1 && !(fastValue_ && F_ % t_.vec == 0 && factors_.edgeElement.empty()))
      throwInternalError("vector width {} for a value that is not a plain gathered input of width divisible by it",
                         t_.vec);
    ParamList ops;
    SourceWriter members;
    rowScale(members, ops);
    edgeWeight(members, ops);
    gather(members, ops);
    finish(members, ops);
    outputRow(members, ops);

    SourceWriter out;
    preamble(out, true);
    writeOpsStruct(out, plan_.layer, "the layer's part of the aggregation: weights, the gathered value, the epilogue",
                   ops, members);
    GeneratedModule module;
    module.name = fmt::format("{}_{}", plan_.layer, step_.label);
    for (Entry entry : {Entry::Rows, Entry::Segments, Entry::Combine}) {
      if (entry != Entry::Rows && t_.heavyThreshold == 0)
        continue;
      out.blank();
      module.kernels.push_back(writeEntry(out, ops, entry));
    }
    const ProvenanceInfo info = tiledProvenance(plan_.layer, "spmm", base_, t_, plan_.index, F_);
    module.source = withProvenance(info, out.str());
    return module;
  }

private:
  enum class Entry { Rows, Segments, Combine };

  Level rowLevel() const { return overIn_ ? Level::Dst : Level::Src; }

  void splitWeight(const ExprPtr &weight) {
    for (const ExprPtr &f : lower::productFactors(weight)) {
      const bool perRow = f->level() == rowLevel() || f->level() == Level::Global;
      const bool scalar = f->shape().isScalar();
      (perRow ? (scalar ? factors_.rowScalar : factors_.rowElement)
              : (scalar ? factors_.edgeScalar : factors_.edgeElement))
          .push_back(f);
    }
  }

  /// Where leaves live inside the edge loop.
  LeafPlaces edgePlaces() const {
    LeafPlaces p;
    (overIn_ ? p.dstNode : p.srcNode) = "row";
    (overIn_ ? p.srcNode : p.dstNode) = "col";
    p.position = "p";
    p.weighted = plan_.weighted;
    return p;
  }

  void preamble(SourceWriter &out, bool constants) {
    writeModuleHead(out, "spmm.cuh", plan_.index);
    if (constants) {
      out.line("constexpr int V = {};", t_.vec);
      out.line("constexpr int F = {}, DIM = {};", F_, shape_.dim);
      writeMergeCheck(out, step_.merge, t_.heavyThreshold, "gnnjit::device::spmmSegmentFloats<F>()");
    }
  }

  /// The row's scalar factor (and 1 / size for a mean), which the skeleton
  /// computes before the edge loop so its loads overlap the gathers.
  void rowScale(SourceWriter &w, ParamList &params) {
    auto fn = w.scope("GNNJIT_DEVICE float rowScale(long long row, long long begin, long long end) const");
    w.line("(void)row; (void)begin; (void)end;");
    w.line("float scale = {};", productOf(w, params, ownRowPlaces(plan_.weighted), factors_.rowScalar, "0", "0"));
    if (mean_)
      w.line("scale = end > begin ? scale / (float)(end - begin) : 0.0f;");
    w.line("return scale;");
  }

  void edgeWeight(SourceWriter &w, ParamList &params) {
    auto fn = w.scope("GNNJIT_DEVICE float edgeWeight(long long row, index_t col, long long p) const");
    w.line("(void)row; (void)col; (void)p;");
    w.line("return {};", productOf(w, params, edgePlaces(), factors_.edgeScalar, "0", "0"));
  }

  /// acc[v] += w * value: a 16-byte gather of a plain input, or element by
  /// element (V = 1) with the per-element weights.
  void gather(SourceWriter &w, ParamList &params) {
    auto fn = w.scope(
        "GNNJIT_DEVICE void gather(float (&acc)[V], float w, long long row, index_t col, long long p, int f) const");
    w.line("(void)row; (void)col; (void)p;");
    if (fastValue_) {
      const auto *ref = cast<InputRef>(step_.stage.value.get());
      const std::string &name = ref->input()->name;
      const std::string data =
          params.use(ParamKind::InputData, name, inputParamName(name), "const float* __restrict__");
      const std::string ld = params.use(ParamKind::InputStride, name, inputStrideName(name), "long long");
      w.line("float x[V];");
      w.line("gnnjit::device::ldgVecAligned<float, V>({} + (long long)col * {} + f, x);", data, ld);
      w.line("#pragma unroll");
      w.line("for (int v = 0; v < V; ++v) acc[v] += w * x[v];");
      return;
    }
    w.line("const int h = f / DIM, d = f % DIM;");
    w.line("(void)h; (void)d;");
    std::vector<ExprPtr> perElement = factors_.edgeElement;
    if (step_.stage.value)
      perElement.push_back(step_.stage.value);
    w.line("acc[0] += w * {};", productOf(w, params, edgePlaces(), perElement, "h", "d"));
  }

  void finish(SourceWriter &w, ParamList &params) {
    writeFinish(w, params, ownRowPlaces(plan_.weighted), factors_.rowElement, step_.fusedOutput, *step_.stage.aggregate);
  }

  void outputRow(SourceWriter &w, ParamList &params) {
    writeOutputRow(w, params, step_.fusedOutput ? step_.target : std::string(), step_.aggregate);
  }

  /// One entry point: the skeleton's own parameters, then the Ops members.
  GeneratedKernel writeEntry(SourceWriter &out, const ParamList &ops, Entry entry) {
    static constexpr const char *suffix[] = {"rows", "segments", "combine"};
    GeneratedKernel kernel;
    kernel.entry = fmt::format("{}_{}", base_, suffix[static_cast<int>(entry)]);
    kernel.blockThreads = t_.blockThreads;
    ParamList params;
    std::string call;
    if (entry == Entry::Rows) {
      const std::string rows = rowsParams(params);
      call = fmt::format("gnnjit::device::spmmRows<{}, V, {}, F>(ops, {}, {});", t_.group, t_.chunks, rows,
                         heavyThresholdParam(params, t_));
    } else if (entry == Entry::Segments) {
      const std::string segments = segmentParams(params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      call = fmt::format("gnnjit::device::spmmSegments<{}, V, {}, F>(ops, {}, {}, {});", t_.segmentGroup,
                         t_.segmentChunks, segments, partials, segmentLengthParam(params));
    } else {
      const std::string heavy = heavyRowParams(params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      call = fmt::format("gnnjit::device::spmmCombine<{}, V, {}, F>(ops, {}, {});", t_.segmentGroup, t_.segmentChunks,
                         heavy, partials);
    }
    params.append(ops);
    kernel.params = params.params();
    auto fn = out.scope("{}", kernelSignature(kernel.entry, t_.blockThreads, params));
    out.line("const Ops ops{{{}}};", ops.names());
    out.line("{}", call);
    return kernel;
  }

  const lower::PassPlan &plan_;
  const lower::SpmmStep &step_;
  const lower::SpmmConfig &t_;
  bool overIn_ = true, mean_ = false, fastValue_ = false;
  Shape shape_;
  int64_t F_ = 0;
  std::string base_;
  WeightFactors factors_;
};

} // namespace

GeneratedModule generateSpmmKernel(const lower::PassPlan &plan, const lower::SpmmStep &step) {
  GeneratedModule module = SpmmWriter(plan, step).write();
  checkEntries(module, step.kernels);
  return module;
}

GeneratedModule generateSpmmValuesKernel(const lower::PassPlan &plan, const lower::SpmmStep &step) {
  GeneratedModule module = SpmmWriter(plan, step).writeValues();
  checkEntries(module, step.kernels);
  return module;
}

} // namespace gnnjit::codegen
