#include "codegen/SpmmKernel.h"

#include "codegen/Emit.h"
#include "codegen/KernelContext.h"
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
using SpmmTuning = lower::SpmmConfig;

/// What one SpMM module is generated from.
struct SpmmKernelSpec {
  std::string layer;             ///< for names and provenance
  std::string label;             ///< e.g. "fwd_agg0"
  lower::AggregationStage stage; ///< family SpMM, over InEdges or OutEdges
  int aggregateIndex = 0;
  /// When set, the kernel writes this output (named outputName) instead of
  /// the aggregate; every path from it to the aggregate is element-wise.
  dsl::ExprPtr fusedOutput;
  std::string outputName;
  IndexWidth index = IndexWidth::I32;
  bool weighted = false; ///< the graph has edge weights (else edgeWeight reads 1)
  SpmmTuning tuning;
};

SpmmKernelSpec specOf(const lower::PassPlan &plan, const lower::SpmmStep &step) {
  SpmmKernelSpec spec;
  spec.layer = plan.layer;
  spec.label = step.label;
  spec.stage = step.stage;
  spec.aggregateIndex = step.aggregate;
  spec.fusedOutput = step.fusedOutput;
  spec.outputName = step.fusedOutput ? step.target : std::string();
  spec.index = plan.index;
  spec.weighted = plan.weighted;
  spec.tuning = step.config;
  return spec;
}

/// The weight's factors by where they can be computed.
struct WeightFactors {
  std::vector<ExprPtr> edgeScalar, edgeElement; ///< per edge: one number, or per feature element
  std::vector<ExprPtr> rowScalar, rowElement;   ///< per row (and global): applied once after the sum
};

class SpmmWriter {
public:
  explicit SpmmWriter(const SpmmKernelSpec &spec) : spec_(spec), t_(spec.tuning) {
    const auto *agg = cast<Aggregate>(spec.stage.aggregate.get());
    overIn_ = agg->over() == Over::InEdges;
    if (!overIn_ && agg->over() != Over::OutEdges)
      throwInternalError("SpMM kernel for an aggregation over {}", overName(agg->over()));
    if (agg->reduce() != Reduce::Sum && agg->reduce() != Reduce::Mean)
      throwInternalError("SpMM kernel for a {} aggregation", reduceName(agg->reduce()));
    mean_ = agg->reduce() == Reduce::Mean;
    shape_ = spec.stage.aggregate->shape();
    F_ = shape_.size();
    base_ = fmt::format("gnnjit_{}_{}", spec.layer, spec.label);
    if (spec.stage.weight)
      splitWeight(spec.stage.weight);
    fastValue_ = lower::isPlainGather(spec.stage);
  }

  GeneratedModule writeValues() {
    if (!spec_.stage.scalarWeight)
      throwInternalError("edge values for a weight of shape {}", shapeText(spec_.stage.weight->shape()));
    GeneratedModule module;
    module.name = fmt::format("{}_{}_values", spec_.layer, spec_.label);
    GeneratedKernel kernel;
    kernel.entry = base_ + "_values";
    kernel.blockThreads = 256;
    ParamList params;
    SourceWriter w;
    const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
    const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", "const index_t* __restrict__");
    const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", "const index_t* __restrict__");
    const std::string values = params.use(ParamKind::EdgeValues, "", "edge_values", "float* __restrict__");
    w.line("const long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;");
    w.line("if (row >= {}) return;", rows);
    w.line("const int lane = threadIdx.x % 32;");
    w.line("const long long begin = {0}[row], end = {0}[row + 1];", offsets);
    {
      auto loop = w.scope("for (long long p = begin + lane; p < end; p += 32)");
      w.line("const index_t col = {}[p];", cols);
      w.line("(void)col;");
      const std::string weight =
          spec_.stage.weight ? product(w, params, edgePlaces(), {spec_.stage.weight}, "0", "0") : "1.0f";
      w.line("{}[p] = {};", values, mean_ ? fmt::format("{} / (float)(end - begin)", weight) : weight);
    }
    kernel.params = params.params();
    SourceWriter out;
    out.line("#include \"gnnjit/gnnjit_device.cuh\"");
    out.blank();
    out.line("typedef {} index_t;", spec_.index == IndexWidth::I32 ? "int" : "long long");
    {
      auto fn =
          out.scope("extern \"C\" __global__ void __launch_bounds__(256) {}({})", kernel.entry, params.signature());
      out.text(w.str());
    }
    ProvenanceInfo info;
    info.layer = spec_.layer;
    info.family = "spmm";
    info.kernel = kernel.entry;
    info.tuning = {{"index", spec_.index == IndexWidth::I32 ? "int32" : "int64"}};
    info.degreeBucket = "all rows (cuSPARSE matrix values)";
    module.source = withProvenance(info, out.str());
    module.kernels.push_back(std::move(kernel));
    return module;
  }

  GeneratedModule write() {
    if (t_.vec > 1 && !(fastValue_ && F_ % t_.vec == 0 && factors_.edgeElement.empty()))
      throwInternalError("vector width {} for a value that is not a plain gathered input of width divisible by it",
                         t_.vec);
    auto groupOk = [](int g) { return g >= 1 && g <= 32 && (g & (g - 1)) == 0; };
    if (!groupOk(t_.group) || !groupOk(t_.segmentGroup) || (t_.vec != 1 && t_.vec != 2 && t_.vec != 4) ||
        t_.chunks < 1 || t_.segmentChunks < 1 || t_.blockThreads % 32 != 0 || t_.blockThreads < 32 ||
        t_.blockThreads > 1024 || t_.heavyThreshold < 0 || t_.segmentLength < 1)
      throwInternalError("bad SpMM tuning {}", t_.print());

    GeneratedModule module;
    module.name = fmt::format("{}_{}", spec_.layer, spec_.label);
    SourceWriter w;
    w.line("#include \"gnnjit/gnnjit_device.cuh\"");
    w.blank();
    w.line("typedef {} index_t;", spec_.index == IndexWidth::I32 ? "int" : "long long");
    w.line("namespace {{");
    w.line("constexpr int V = {};", t_.vec);
    w.line("constexpr int F = {}, DIM = {};", F_, shape_.dim);
    if (t_.heavyThreshold > 0)
      w.line("constexpr long long HEAVY = {}, SEGMENT = {};", t_.heavyThreshold, t_.segmentLength);
    w.line("}} // namespace");
    for (Entry entry : {Entry::Rows, Entry::Segments, Entry::Combine}) {
      if (entry != Entry::Rows && t_.heavyThreshold == 0)
        continue;
      w.blank();
      module.kernels.push_back(writeEntry(w, entry));
    }
    ProvenanceInfo info;
    info.layer = spec_.layer;
    info.family = "spmm";
    info.kernel = base_;
    info.tuning = {{"group", std::to_string(t_.group)},
                   {"vec", std::to_string(t_.vec)},
                   {"chunks", std::to_string(t_.chunks)},
                   {"block", std::to_string(t_.blockThreads)},
                   {"heavy_threshold", std::to_string(t_.heavyThreshold)},
                   {"segment_length", std::to_string(t_.segmentLength)},
                   {"segment_group", std::to_string(t_.segmentGroup)},
                   {"segment_chunks", std::to_string(t_.segmentChunks)},
                   {"index", spec_.index == IndexWidth::I32 ? "int32" : "int64"},
                   {"F", std::to_string(F_)}};
    info.degreeBucket = t_.heavyThreshold > 0 ? fmt::format("rows of <= {} edges; heavier rows in segments of {}",
                                                            t_.heavyThreshold, t_.segmentLength)
                                              : "all rows";
    module.source = withProvenance(info, w.str());
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
    p.weighted = spec_.weighted;
    return p;
  }
  /// After the loop every node-level read is of the row's own node.
  LeafPlaces rowPlaces() const {
    LeafPlaces p;
    p.srcNode = p.dstNode = "row";
    p.weighted = spec_.weighted;
    return p;
  }

  /// Product of `factors` at element (h, d) as a C expression ("1.0f" when none).
  std::string product(SourceWriter &w, ParamList &params, const LeafPlaces &places, const std::vector<ExprPtr> &factors,
                      const std::string &h, const std::string &d) {
    std::string p;
    ExprEmitter emitter(w, kernelContext(params, places));
    for (const ExprPtr &f : factors) {
      const std::string v = emitter.element(f, h, d);
      p = p.empty() ? v : fmt::format("{} * {}", p, v);
    }
    return p.empty() ? "1.0f" : p;
  }

  void zeroAccumulators(SourceWriter &w) {
    w.line("float acc[CH][V];");
    w.line("#pragma unroll");
    w.line("for (int c = 0; c < CH; ++c)");
    w.line("  #pragma unroll");
    w.line("  for (int v = 0; v < V; ++v) acc[c][v] = 0.0f;");
  }

  /// acc += weight * value over CSR positions [begin, end) of `row`.
  void accumulate(SourceWriter &w, ParamList &params) {
    const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", "const index_t* __restrict__");
    const LeafPlaces places = edgePlaces();
    auto batch = w.scope("for (long long base = begin; base < end; base += G)");
    w.line("index_t my_col = 0;");
    w.line("float my_w = 0.0f;");
    {
      auto load = w.scope("if (base + lane < end)");
      w.line("const long long p = base + lane;");
      w.line("const index_t col = {}[p];", cols);
      w.line("my_col = col;");
      w.line("my_w = {};", product(w, params, places, factors_.edgeScalar, "0", "0"));
    }
    w.line("const int n = (int)min((long long)G, end - base);");
    w.line("#pragma unroll 8");
    auto edges = w.scope("for (int k = 0; k < n; ++k)");
    w.line("const index_t col = __shfl_sync(mask, my_col, k, G);");
    w.line("const float w = __shfl_sync(mask, my_w, k, G);");
    w.line("const long long p = base + k;");
    w.line("(void)p;");
    w.line("#pragma unroll");
    auto chunks = w.scope("for (int c = 0; c < CH; ++c)");
    w.line("const int f = tile0 + (c * G + lane) * V;");
    auto inside = w.scope("if (F % TILE == 0 || f < F)"); // constant when tiles cover F exactly
    if (fastValue_) {
      const auto *ref = cast<InputRef>(spec_.stage.value.get());
      const std::string &name = ref->input()->name;
      const std::string data =
          params.use(ParamKind::InputData, name, inputParamName(name), "const float* __restrict__");
      const std::string ld = params.use(ParamKind::InputStride, name, inputStrideName(name), "long long");
      w.line("float x[V];");
      w.line("gnnjit::device::ldgVecAligned<float, V>({} + (long long)col * {} + f, x);", data, ld);
      w.line("#pragma unroll");
      w.line("for (int v = 0; v < V; ++v) acc[c][v] += w * x[v];");
      return;
    }
    w.line("const int h = f / DIM, d = f % DIM;");
    w.line("(void)h; (void)d;");
    std::vector<ExprPtr> perElement = factors_.edgeElement;
    if (spec_.stage.value)
      perElement.push_back(spec_.stage.value);
    w.line("acc[c][0] += w * {};", product(w, params, places, perElement, "h", "d"));
  }

  /// The row's scalar factor (and 1 / size for a mean), emitted before the
  /// edge loop so its loads overlap the gathers.
  void rowScale(SourceWriter &w, ParamList &params) {
    w.line("float scale = {};", product(w, params, rowPlaces(), factors_.rowScalar, "0", "0"));
    if (mean_)
      w.line("scale = end > begin ? scale / (float)(end - begin) : 0.0f;");
  }

  /// Applies the epilogue to the sums and writes the row's tile: one vector
  /// store per chunk when V > 1 (then F % V == 0 and the runner's buffers
  /// have rows of F floats, so every vector is aligned).
  void epilogue(SourceWriter &w, ParamList &params) {
    const LeafPlaces places = rowPlaces();
    const bool toOutput = static_cast<bool>(spec_.fusedOutput);
    const std::string ref = toOutput ? spec_.outputName : std::to_string(spec_.aggregateIndex);
    const std::string data =
        params.use(toOutput ? ParamKind::OutputData : ParamKind::AggregateData, ref,
                   toOutput ? outputParamName(ref) : aggregateParamName(spec_.aggregateIndex), "float* __restrict__");
    const std::string ld =
        params.use(toOutput ? ParamKind::OutputStride : ParamKind::AggregateStride, ref,
                   toOutput ? outputStrideName(ref) : aggregateStrideName(spec_.aggregateIndex), "long long");
    w.line("#pragma unroll");
    auto chunks = w.scope("for (int c = 0; c < CH; ++c)");
    w.line("const int f0 = tile0 + (c * G + lane) * V;");
    w.line("if (F % TILE != 0 && f0 >= F) continue;");
    w.line("float result[V];");
    w.line("#pragma unroll");
    {
      auto lanes = w.scope("for (int v = 0; v < V; ++v)");
      w.line("const int f = f0 + v;");
      w.line("const int h = f / DIM, d = f % DIM;");
      w.line("(void)h; (void)d;");
      w.line("const float a = acc[c][v] * scale * {};", product(w, params, places, factors_.rowElement, "h", "d"));
      std::string result = "a";
      if (spec_.fusedOutput) {
        LeafPlaces withAggregate = places;
        withAggregate.inVariables[spec_.stage.aggregate.get()] = "a";
        ExprEmitter emitter(w, kernelContext(params, withAggregate));
        result = emitter.element(spec_.fusedOutput, "h", "d");
      }
      w.line("result[v] = {};", result);
    }
    if (t_.vec > 1)
      w.line("gnnjit::device::storeVecAligned<float, V>({} + (long long)row * {} + f0, result);", data, ld);
    else
      w.line("{}[(long long)row * {} + f0] = result[0];", data, ld);
  }

  /// The group's prologue: which unit of work it owns, its lane and mask.
  void groupHeader(SourceWriter &w, ParamList &params, const char *unit, ParamKind countKind, const char *countName,
                   int group, int chunks) {
    const std::string count = params.use(countKind, "", countName, "long long");
    w.line("constexpr int G = {}, CH = {}, TILE = G * V * CH;", group, chunks);
    w.line("const long long {} = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / G;", unit);
    w.line("if ({} >= {}) return; // the whole group leaves together", unit, count);
    w.line("const int lane = gnnjit::device::groupLane<G>();");
    w.line("const unsigned mask = gnnjit::device::groupMask<G>();");
    w.line("(void)mask;");
    w.line("const int tile0 = blockIdx.y * TILE;");
  }

  GeneratedKernel writeEntry(SourceWriter &out, Entry entry) {
    static constexpr const char *suffix[] = {"rows", "segments", "combine"};
    GeneratedKernel kernel;
    kernel.entry = fmt::format("{}_{}", base_, suffix[static_cast<int>(entry)]);
    kernel.blockThreads = t_.blockThreads;
    ParamList params;
    SourceWriter w;
    const std::string offsetsType = "const index_t* __restrict__";
    if (entry == Entry::Rows) {
      groupHeader(w, params, "row", ParamKind::NumRows, "num_rows", t_.group, t_.chunks);
      const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", offsetsType);
      w.line("const long long begin = {0}[row], end = {0}[row + 1];", offsets);
      if (t_.heavyThreshold > 0)
        w.line("if (end - begin > HEAVY) return; // split into segments instead");
      rowScale(w, params);
      zeroAccumulators(w);
      accumulate(w, params);
      epilogue(w, params);
    } else if (entry == Entry::Segments) {
      groupHeader(w, params, "segment", ParamKind::NumSegments, "num_segments", t_.segmentGroup, t_.segmentChunks);
      const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", offsetsType);
      const std::string rows = params.use(ParamKind::SegmentRows, "", "segment_rows", offsetsType);
      const std::string begins =
          params.use(ParamKind::SegmentBegins, "", "segment_begins", "const long long* __restrict__");
      w.line("const long long row = {}[segment];", rows);
      w.line("const long long begin = {}[segment];", begins);
      w.line("const long long end = min(begin + SEGMENT, (long long){}[row + 1]);", offsets);
      zeroAccumulators(w);
      accumulate(w, params);
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      w.line("#pragma unroll");
      w.line("for (int c = 0; c < CH; ++c)");
      w.line("  #pragma unroll");
      w.line("  for (int v = 0; v < V; ++v) {{");
      w.line("    const int f = tile0 + (c * G + lane) * V + v;");
      w.line("    if (f < F) {}[segment * F + f] = acc[c][v];", partials);
      w.line("  }}");
    } else {
      groupHeader(w, params, "heavy", ParamKind::NumHeavyRows, "num_heavy_rows", t_.segmentGroup, t_.segmentChunks);
      const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", offsetsType);
      const std::string rows = params.use(ParamKind::HeavyRows, "", "heavy_rows", offsetsType);
      const std::string first =
          params.use(ParamKind::HeavyFirstSegment, "", "heavy_first_segment", "const long long* __restrict__");
      const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
      w.line("const long long row = {}[heavy];", rows);
      w.line("const long long begin = {0}[row], end = {0}[row + 1];", offsets);
      w.line("(void)begin; (void)end;");
      rowScale(w, params);
      zeroAccumulators(w);
      w.line("// Partial sums in segment order: the same result on every run.");
      {
        auto segments = w.scope("for (long long s = {0}[heavy]; s < {0}[heavy + 1]; ++s)", first);
        w.line("#pragma unroll");
        w.line("for (int c = 0; c < CH; ++c)");
        w.line("  #pragma unroll");
        w.line("  for (int v = 0; v < V; ++v) {{");
        w.line("    const int f = tile0 + (c * G + lane) * V + v;");
        w.line("    if (f < F) acc[c][v] += {}[s * F + f];", partials);
        w.line("  }}");
      }
      epilogue(w, params);
    }
    kernel.params = params.params();
    auto fn = out.scope("extern \"C\" __global__ void __launch_bounds__({}) {}({})", t_.blockThreads, kernel.entry,
                        params.signature());
    out.text(w.str());
    return kernel;
  }

  const SpmmKernelSpec &spec_;
  const SpmmTuning &t_;
  bool overIn_ = true, mean_ = false, fastValue_ = false;
  Shape shape_;
  int64_t F_ = 0;
  std::string base_;
  WeightFactors factors_;
};

} // namespace

GeneratedModule generateSpmmKernel(const lower::PassPlan &plan, const lower::SpmmStep &step) {
  GeneratedModule module = SpmmWriter(specOf(plan, step)).write();
  checkEntries(module, step.kernels);
  return module;
}

GeneratedModule generateSpmmValuesKernel(const lower::PassPlan &plan, const lower::SpmmStep &step) {
  GeneratedModule module = SpmmWriter(specOf(plan, step)).writeValues();
  checkEntries(module, step.kernels);
  return module;
}

} // namespace gnnjit::codegen
