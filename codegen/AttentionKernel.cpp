#include "codegen/AttentionKernel.h"

#include "codegen/Emit.h"
#include "codegen/EmitExpr.h"
#include "codegen/OpsStruct.h"
#include "codegen/Provenance.h"
#include "codegen/ReductionKernel.h"
#include "dsl/IRVisitor.h"
#include "lower/Stages.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <memory>
#include <set>

namespace gnnjit::codegen {

using namespace gnnjit::dsl;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using Mode = lower::AttentionStep::Mode;

namespace {

/// Writes one attention module: the Ops struct, then an entry per skeleton.
class AttentionWriter {
public:
  AttentionWriter(const lower::PassPlan &plan, const lower::AttentionStep &step)
      : plan_(plan), step_(step), t_(step.config), shape_(step.lanes), laneDim_(step.config.laneDim(step.lanes.dim)),
        base_(fmt::format("gnnjit_{}_{}", plan.layer, step.label)),
        places_(edgeLoopPlaces(plan, step.direction)) {
    places_.savedLse = plan.savedLseOf;
    places_.savedValues = plan.savedValueOf;
    if (step.mode == Mode::HeadSums) {
      for (const auto &[sum, scratch] : step.headSums)
        places_.inBuffers.erase(sum.get()); // computed here
      return;
    }
    for (const lower::AttentionOutput &o : step.outputs)
      messages_.push_back(step.mode == Mode::Softmax ? o.stage.value : cast<Aggregate>(o.stage.aggregate.get())->message());
    if (messages_.empty() || !messages_.front())
      throwInternalError("attention step {} without a message", step.label);
  }

  GeneratedModule write() {
    ParamList ops;
    SourceWriter members;
    members.line("static constexpr int kHeadDim = RDIM; // the skeleton's stores map lanes to columns by it");
    terms(members, ops, false, step_.rowSums);
    if (step_.mode == Mode::HeadSums) {
      sumRows(members, ops);
    } else {
      terms(members, ops, true, step_.edgeSums);
      if (step_.mode == Mode::Softmax)
        score(members, ops);
      message(members, ops);
    }
    if (step_.mode == Mode::Softmax || step_.mode == Mode::Sum)
      results(members, ops);
    savedRow(members, ops, "lseRow", step_.savedLse);
    savedRow(members, ops, "valueRow", step_.savedValue);

    SourceWriter out;
    writeModuleHead(out, "attention.cuh", plan_.index);
    out.line("constexpr int V = {};", t_.vec);
    // F and LDIM: the lanes' [heads, dim] (LDIM > RDIM: each head padded,
    // its lanes past RDIM read and store nothing); NO: the outputs the edge
    // loop sums per row, NE: after them, its sums over all edges; bit o of
    // PER_HEAD set where output o is one value per head.
    out.line("constexpr int F = {}, LDIM = {}, RDIM = {};", shape_.heads * laneDim_, laneDim_, shape_.dim);
    out.line("constexpr int NO = {}, NE = {}, PER_HEAD = {};", std::max<size_t>(1, step_.rowOutputs()), edgeSumOutputs(),
             perHeadMask());
    out.line("constexpr int NT = {}, NR = {}; // per-head sums per edge, per row (at least 1)",
             std::max<size_t>(1, step_.edgeSums.size()), std::max<size_t>(1, step_.rowSums.size()));
    out.line("constexpr bool SOFTMAX = {}, SAVE_VALUE = {};", step_.mode == Mode::Softmax ? "true" : "false",
             step_.savedValue.empty() ? "false" : "true");
    if (step_.mode == Mode::Softmax || step_.mode == Mode::Sum)
      writeMergeCheck(out, step_.merge, t_.heavyThreshold,
                      "gnnjit::device::attendSegmentFloats<F, LDIM, NO, SOFTMAX>()");
    writeTile(out, "RowTile", t_.group, t_.chunks);
    if (t_.heavyThreshold > 0 && step_.mode != Mode::EdgeSum)
      writeTile(out, "SegmentTile", t_.segmentGroup, t_.segmentChunks);
    writeOpsStruct(out, plan_.layer, what(), ops, members);
    GeneratedModule module;
    module.name = fmt::format("{}_{}", plan_.layer, step_.label);
    for (const lower::KernelEntry &e : step_.kernels) {
      if (e.role == lower::KernelRole::Finish) {
        module.kernels.push_back(writeFinishEntry(out, e));
        continue;
      }
      out.blank();
      module.kernels.push_back(writeEntry(out, ops, e));
    }
    ProvenanceInfo info = tiledProvenance(plan_.layer, "attention", base_, t_, plan_.index, shape_.size());
    info.tuning["mode"] = step_.mode == Mode::Softmax   ? "online softmax"
                          : step_.mode == Mode::Sum     ? "sum (alpha from the saved log-sum-exp)"
                          : step_.mode == Mode::EdgeSum ? "sum over edge ranges"
                                                        : "per-head sums at nodes";
    info.tuning["head_sums"] = fmt::format("{} per row, {} per edge", step_.rowSums.size(), step_.edgeSums.size());
    if (step_.mode == Mode::EdgeSum)
      info.degreeBucket = fmt::format("every edge, in ranges of {} consecutive CSR positions", t_.rangeEdges);
    module.source = withProvenance(info, out.str());
    checkEntries(module, step_.kernels);
    return module;
  }

private:
  /// The named constants an entry point of attention.cuh takes (its K):
  /// the tiling of rows or of segments, and the module's counts.
  static void writeTile(SourceWriter &out, const char *name, int group, int chunks) {
    auto tile = out.scopeClosedBy("};", "struct {}", name);
    out.line("static constexpr int kGroup = {}, kVec = V, kChunks = {}, kWidth = F, kHeadDim = LDIM;", group, chunks);
    out.line("static constexpr int kRowOutputs = NO, kEdgeSumOutputs = NE, kPerHead = PER_HEAD, kEdgeSums = NT, "
             "kRowSums = NR;");
    out.line("static constexpr bool kSoftmax = SOFTMAX, kSaveValue = SAVE_VALUE;");
  }

  size_t edgeSumOutputs() const { return step_.outputs.size() - step_.rowOutputs(); }
  bool padded() const { return laneDim_ != shape_.dim; }

  unsigned perHeadMask() const {
    unsigned mask = 0;
    for (size_t k = 0; k < step_.outputs.size(); ++k)
      mask |= step_.perHead(k) ? 1u << k : 0u;
    return mask;
  }

  /// finish{k} and outputRow{k} of each output, and finish(o, ...) and
  /// outputRow(o, row) choosing among them (o is a constant where called).
  void results(SourceWriter &w, ParamList &ops) const {
    const size_t n = step_.rowOutputs();
    for (size_t k = 0; k < n; ++k) {
      const lower::AttentionOutput &o = step_.outputs[k];
      writeFinish(w, ops, ownRowPlaces(plan_.weighted), {}, o.fusedOutput, *o.stage.aggregate,
                  fmt::format("finish{}", k), std::to_string(step_.perHead(k) ? 1 : shape_.dim));
      writeOutputRow(w, ops, o.target, o.aggregate, fmt::format("outputRow{}", k));
    }
    {
      auto fn = w.scope("GNNJIT_DEVICE float finish(int o, long long row, int f, float sum) const");
      for (size_t k = 1; k < n; ++k)
        w.line("if (o == {0}) return finish{0}(row, f, sum);", k);
      w.line("return finish0(row, f, sum);");
    }
    auto fn = w.scope("GNNJIT_DEVICE float *outputRow(int o, long long row) const");
    for (size_t k = 1; k < n; ++k)
      w.line("if (o == {0}) return outputRow{0}(row);", k);
    w.line("return outputRow0(row);");
  }

  std::string what() const {
    switch (step_.mode) {
    case Mode::Softmax:
      return "the score and value of an edge-softmax aggregation, its per-head sums and epilogue";
    case Mode::Sum:
      return fmt::format("the {} of aggregate[sum, {}] (alpha recomputed from the saved log-sum-exp), their "
                         "per-head sums and epilogues",
                         step_.outputs.size() > 1 ? fmt::format("messages of {}", step_.outputs.size()) : "message",
                         step_.direction == lower::Direction::In ? "in_edges" : "out_edges");
    case Mode::EdgeSum:
      return "the per-edge value summed over all edges and its per-head sums";
    case Mode::HeadSums:
      return "per-head sums at nodes that later kernels read at each edge's far end";
    }
    return "?";
  }

  /// An emit context whose node inputs read at element f + v of a full
  /// [heads, dim] row come from one vector load per (input, end), and (with
  /// sumsInVariables) whose per-head sums are the variables r[k] and e[k].
  struct Emitting {
    ExprEmitContext context;
    LeafPlaces places;
    std::map<std::pair<std::string, Level>, std::string> vectors;
  };
  std::unique_ptr<Emitting> emitting(SourceWriter &w, ParamList &ops, bool sumsInVariables) {
    auto em = std::make_unique<Emitting>();
    em->places = places_;
    if (sumsInVariables) {
      for (size_t k = 0; k < step_.rowSums.size(); ++k)
        em->places.inVariables[step_.rowSums[k].get()] = fmt::format("r[{}]", k);
      for (size_t k = 0; k < step_.edgeSums.size(); ++k)
        em->places.inVariables[step_.edgeSums[k].get()] = fmt::format("e[{}]", k);
    }
    em->context = kernelContext(ops, em->places);
    em->context.doubleSums = true;
    em->context.flatInputViews = t_.fuseBackward;
    if (t_.vec > 1) {
      auto scalar = em->context.readInput;
      Emitting *self = em.get();
      em->context.readInput = [this, self, scalar, &w, &ops](const InputDecl &in, Level at,
                                                             const ElementIndex &element) -> std::string {
        // (A node input of the lanes' width read at the lanes' element: its
        // own [heads, dim] or a flat row viewed as them, d_out.)
        if ((at == Level::Src || at == Level::Dst) && in.shape.size() == shape_.size() && element.lane >= 0 &&
            element.dim == shape_.dim)
          return fmt::format("{}[{}]", vectorOf(*self, w, ops, in, at), element.lane);
        return scalar(in, at, element);
      };
    }
    return em;
  }

  /// The V floats of `in` at elements f .. f + V - 1 of the node at `at`,
  /// loaded once per function.
  std::string vectorOf(Emitting &em, SourceWriter &w, ParamList &ops, const InputDecl &in, Level at) const {
    const auto key = std::make_pair(in.name, at);
    if (auto it = em.vectors.find(key); it != em.vectors.end())
      return it->second;
    const std::string data = ops.use(ParamKind::InputData, in.name, inputParamName(in.name), "const float* __restrict__");
    const std::string ld = ops.use(ParamKind::InputStride, in.name, inputStrideName(in.name), "long long");
    const std::string node = at == Level::Src ? em.places.srcNode : em.places.dstNode;
    const std::string name = w.fresh(fmt::format("{}_{}", in.name, at == Level::Src ? "src" : "dst"));
    w.line("float {}[V];", name);
    // A plain load (not __ldg's inline asm), which the compiler may share
    // between the score and the message and hoist out of the edge loop for a
    // row's own features; it still reads through the read-only path, the
    // inputs being const __restrict__.
    w.line("gnnjit::device::loadVecAligned<float, V>({} + (long long)({}) * {} + (h * RDIM + d0), {});", data, node, ld,
           name);
    em.vectors.emplace(key, name);
    return name;
  }

  /// rowTerms / edgeTerms: each sum's operand at elements f .. f + V - 1
  /// added into its slot.
  void terms(SourceWriter &w, ParamList &ops, bool perEdge, const std::vector<ExprPtr> &sums) {
    const char *array = perEdge ? "e" : "r";
    auto fn = w.scope("{}", perEdge ? "GNNJIT_DEVICE void edgeTerms(double (&e)[NT], long long row, index_t col, "
                                      "long long p, int f) const"
                                    : "GNNJIT_DEVICE void rowTerms(double (&r)[NR], long long row, int f) const");
    w.line("(void){};", array);
    w.line("{}", perEdge ? "(void)row; (void)col; (void)p;" : "(void)row;");
    if (sums.empty())
      return;
    w.line("const int h = f / LDIM, d0 = f % LDIM;");
    if (padded())
      w.line("if (d0 >= RDIM) return; // a padding lane adds nothing to its head's sums");
    auto em = emitting(w, ops, false);
    ExprEmitter emitter(w, em->context);
    // The lane's V elements are added in float and the result once into the
    // head's double sum: one conversion per sum instead of V (conversions to
    // double issue at an eighth of the float rate on sm_90).
    std::vector<std::string> lane(sums.size());
    for (int v = 0; v < t_.vec; ++v)
      for (size_t k = 0; k < sums.size(); ++k) {
        const std::string term = emitter.element(sums[k]->operands()[0], "h", fmt::format("d0 + {}", v), v);
        if (v == 0) {
          lane[k] = w.fresh("lane");
          w.line("float {} = {};", lane[k], term);
        } else {
          w.line("{} += {};", lane[k], term);
        }
      }
    for (size_t k = 0; k < sums.size(); ++k)
      w.line("{}[{}] += {};", array, k, lane[k]);
  }

  void score(SourceWriter &w, ParamList &ops) {
    auto fn = w.scope("GNNJIT_DEVICE float score(const double (&e)[NT], const double (&r)[NR], long long row, "
                      "index_t col, long long p, int h) const");
    w.line("(void)e; (void)r; (void)row; (void)col; (void)p;");
    auto em = emitting(w, ops, true);
    ExprEmitter emitter(w, em->context);
    w.line("return {};", emitter.element(step_.outputs[0].stage.score, "h", "0"));
  }

  void message(SourceWriter &w, ParamList &ops) {
    auto fn = w.scope("GNNJIT_DEVICE void message(float (&m)[NO + NE][V], const double (&e)[NT], const double (&r)[NR], "
                      "long long row, index_t col, long long p, int f) const");
    w.line("(void)e; (void)r; (void)row; (void)col; (void)p;");
    w.line("const int h = f / LDIM, d0 = f % LDIM;");
    w.line("(void)h; (void)d0;");
    if (padded()) {
      auto pad = w.scope("if (d0 >= RDIM)"); // a padding lane's messages are never stored
      w.line("for (int k = 0; k < NO + NE; ++k) for (int v = 0; v < V; ++v) m[k][v] = 0.0f;");
      w.line("return;");
    }
    auto em = emitting(w, ops, true);
    ExprEmitter emitter(w, em->context); // one emitter: what the messages share is computed once
    for (size_t k = 0; k < messages_.size(); ++k) {
      if (step_.perHead(k)) { // the head's one value
        w.line("m[{}][0] = {};", k, emitter.element(messages_[k], "h", "0"));
        for (int v = 1; v < t_.vec; ++v)
          w.line("m[{}][{}] = 0.0f;", k, v);
        continue;
      }
      for (int v = 0; v < t_.vec; ++v)
        w.line("m[{}][{}] = {};", k, v, emitter.element(messages_[k], "h", fmt::format("d0 + {}", v), v));
    }
  }

  /// float *sumRow(int k, long long row): the row of the scratch buffer sum k goes to.
  void sumRows(SourceWriter &w, ParamList &ops) const {
    auto fn = w.scope("GNNJIT_DEVICE float *sumRow(int k, long long row) const");
    for (size_t k = 0; k < step_.headSums.size(); ++k) {
      const int scratch = step_.headSums[k].second;
      const std::string data =
          ops.useScratch(ParamKind::AggregateData, scratch, aggregateParamName(scratch), "float* __restrict__");
      const std::string ld =
          ops.useScratch(ParamKind::AggregateStride, scratch, aggregateStrideName(scratch), "long long");
      w.line("if (k == {}) return {} + row * {};", k, data, ld);
    }
    w.line("return nullptr;");
  }

  void savedRow(SourceWriter &w, ParamList &ops, const char *name, const std::string &saved) const {
    if (saved.empty())
      return;
    const std::string data = ops.use(ParamKind::SavedData, saved, savedParamName(saved), "float* __restrict__");
    const std::string ld = ops.use(ParamKind::SavedStride, saved, savedStrideName(saved), "long long");
    w.line("GNNJIT_DEVICE float *{}(long long row) const {{ return {} + row * {}; }}", name, data, ld);
  }

  /// The ranges' partials added in order into the global scratch buffer;
  /// in a Sum step, the groups' partials of the sum over all edges the
  /// entry names (after the elements of the sums before it).
  GeneratedKernel writeFinishEntry(SourceWriter &out, const lower::KernelEntry &e) const {
    ParamList params;
    const bool fused = step_.mode == Mode::Sum;
    const std::string partials =
        fused ? params.use(ParamKind::SumPartials, "", "sum_partials", "const float* __restrict__")
              : params.use(ParamKind::Partials, "", "partials", "const float* __restrict__");
    const std::string count = fused ? params.use(ParamKind::NumSumPartials, "", "num_sum_partials", "long long")
                                    : params.use(ParamKind::NumPartials, "", "num_partials", "long long");
    const size_t k = fused ? e.output : 0;
    const int64_t before = fused ? step_.edgeSumWidth(k) : 0; // elements of the sums before this one
    const int aggregate = step_.outputs[k].aggregate;
    const std::string sum =
        params.useScratch(ParamKind::AggregateData, aggregate, aggregateParamName(aggregate), "float* __restrict__");
    out.blank();
    auto fn = out.scope("{}", kernelSignature(e.entry, e.launch.block, params));
    const std::string from = before == 0 ? partials : fmt::format("{} + {}LL * {}", partials, before, count);
    out.line("gnnjit::device::attendFinish<{}, {}>({}, {}, {});", e.launch.width, e.launch.block, from, count, sum);
    return GeneratedKernel{e.entry, params.params(), e.launch.block};
  }

  GeneratedKernel writeEntry(SourceWriter &out, const ParamList &ops, const lower::KernelEntry &e) {
    ParamList params;
    std::string call;
    switch (e.launch.kind) {
    case lower::LaunchRule::Kind::SpmmRows: {
      if (step_.mode == Mode::HeadSums) {
        const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
        call = fmt::format("gnnjit::device::attendHeadSums<RowTile>(ops, {});", rows);
        break;
      }
      const std::string rows = rowsParams(params);
      call = fmt::format("gnnjit::device::attendRows<RowTile>(ops, {}, {});", rows, heavyThresholdParam(params, t_));
      break;
    }
    case lower::LaunchRule::Kind::SpmmSegments: {
      const std::string segments = segmentParams(params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      call = fmt::format("gnnjit::device::attendSegments<SegmentTile>(ops, {}, {}, {});", segments, partials,
                         segmentLengthParam(params));
      break;
    }
    case lower::LaunchRule::Kind::SpmmCombine: {
      const std::string count = params.use(ParamKind::NumSegments, "", "num_segments", "long long");
      const std::string heavy = heavyRowParams(params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "const float* __restrict__");
      call = fmt::format("gnnjit::device::attendCombine<SegmentTile>(ops, {}, {}, {});", count, heavy, partials);
      break;
    }
    case lower::LaunchRule::Kind::StridedRows: {
      const std::string rows = rowsParams(params);
      const std::string sums = sumPartialParams(params);
      call = fmt::format("gnnjit::device::attendRowsAndSums<RowTile>(ops, {}, {}, {});", rows, sums,
                         heavyThresholdParam(params, t_));
      break;
    }
    case lower::LaunchRule::Kind::StridedSegments: {
      const std::string segments = segmentParams(params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      const std::string sums = sumPartialParams(params);
      const std::string base = params.use(ParamKind::SumPartialBase, "", "sum_partial_base", "long long");
      call = fmt::format("gnnjit::device::attendSegmentsAndSums<SegmentTile>(ops, {}, {}, {}, {}, {});", segments,
                         partials, sums, base, segmentLengthParam(params));
      break;
    }
    case lower::LaunchRule::Kind::EdgeRanges: {
      const std::string rows = rowsParams(params);
      const std::string ranges = params.use(ParamKind::NumPartials, "", "num_ranges", "long long");
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      call = fmt::format("gnnjit::device::attendRanges<RowTile>(ops, {}, {}, {});", rows, ranges, partials);
      break;
    }
    default:
      throwInternalError("an attention step with a {} entry", e.entry);
    }
    params.append(ops);
    GeneratedKernel kernel{e.entry, params.params(), e.launch.block};
    auto fn = out.scope("{}", kernelSignature(e.entry, e.launch.block, params));
    out.line("const Ops ops{{{}}};", ops.names());
    out.line("{}", call);
    return kernel;
  }

  /// "sum_partials, num_sum_partials": where a strided kernel's groups write their sums over all edges.
  static std::string sumPartialParams(ParamList &params) {
    const std::string partials = params.use(ParamKind::SumPartials, "", "sum_partials", "float* __restrict__");
    const std::string count = params.use(ParamKind::NumSumPartials, "", "num_sum_partials", "long long");
    return fmt::format("{}, {}", partials, count);
  }

  const lower::PassPlan &plan_;
  const lower::AttentionStep &step_;
  const lower::AttentionConfig &t_;
  Shape shape_;
  int64_t laneDim_; ///< the lanes' head dim: shape_.dim, or its padding
  std::string base_;
  LeafPlaces places_;
  std::vector<ExprPtr> messages_; ///< per output: the value (forward) or message
};

} // namespace

GeneratedModule generateAttentionKernel(const lower::PassPlan &plan, const lower::AttentionStep &step) {
  return AttentionWriter(plan, step).write();
}

} // namespace gnnjit::codegen
