#include "autotune/Rule.h"

#include "support/Error.h"

#include <algorithm>

namespace gnnjit::autotune {

namespace {

int nextPowerOfTwo(int64_t n) {
  int p = 1;
  while (p < n && p < 32)
    p *= 2;
  return p;
}

} // namespace

std::string_view variantName(Variant variant) {
  switch (variant) {
  case Variant::Auto:
    return "auto";
  case Variant::Generated:
    return "generated";
  case Variant::Cusparse:
    return "cusparse";
  }
  return "?";
}

Variant parseVariant(std::string_view text) {
  for (Variant v : {Variant::Auto, Variant::Generated, Variant::Cusparse})
    if (text == variantName(v))
      return v;
  throwUserError("unknown backend variant '{}': expected auto, generated or cusparse", text);
}

GraphFacts graphFacts(const graph::Graph &graph) {
  return graphFacts(graph.stats(), graph.indexType(), graph.hasWeights());
}

GraphFacts graphFacts(const graph::DegreeStats &stats, graph::IndexType index, bool weighted) {
  GraphFacts facts;
  facts.index = index == graph::IndexType::Int32 ? lower::IndexWidth::I32 : lower::IndexWidth::I64;
  facts.weighted = weighted;
  facts.in = DegreeFacts::of(stats.in);
  facts.out = DegreeFacts::of(stats.out);
  facts.local = stats.avgEdgeSpan <= static_cast<double>(stats.nodes) / 64.0;
  facts.nodes = stats.nodes;
  return facts;
}

RuleOptions forDeviceBuiltGraph(RuleOptions options) {
  if (options.variant == Variant::Auto)
    options.variant = Variant::Generated;
  return options;
}

GraphFacts assumedFacts(int64_t median, int64_t max, lower::IndexWidth index, bool weighted, bool local) {
  GraphFacts facts;
  facts.index = index;
  facts.weighted = weighted;
  facts.in = facts.out = DegreeFacts{static_cast<double>(median), 0.0, median, max};
  facts.local = local;
  return facts;
}

lower::SpmmConfig chooseSpmm(const SpmmInputs &in, const RuleOptions &options) {
  lower::SpmmConfig config;
  // Auto takes cuSPARSE for skewed degrees, where it beat the generated
  // kernel on the H200 (R-MAT scale 20: 1.43 vs 1.55 ms; tolokers: 0.081 vs
  // 0.085 ms, F = 128), and the generated kernel for even degrees, where it
  // won (2-D grid: 0.43 vs 0.56 ms; uniform random, degree 100: 0.64 vs 0.85).
  const bool skewed = in.degrees.std > in.degrees.mean || in.degrees.max > 16 * in.degrees.mean;
  // Not when cuSPARSE needs a pass over the output that the generated kernel
  // fuses (GIN's self term).
  const bool autoCusparse = options.variant == Variant::Auto && skewed && !in.cusparseNeedsPass;
  if (in.cusparsePossible && (options.variant == Variant::Cusparse || autoCusparse)) {
    config.backend = lower::SpmmConfig::Backend::Cusparse;
    return config;
  }
  static_cast<lower::RowTiling &>(config) = tileRows(in, options);
  return config;
}

lower::RowTiling tileRows(const SpmmInputs &in, const RuleOptions &options) {
  lower::RowTiling t;
  // Widest vector the rows allow: 16-byte loads need 4-aligned widths.
  t.vec = !in.alignedGather ? 1 : in.width % 4 == 0 ? 4 : in.width % 2 == 0 ? 2 : 1;
  const int64_t vectors = (in.width + t.vec - 1) / t.vec;
  auto chunksFor = [&](int group) { return static_cast<int>(std::min<int64_t>(8, (vectors + group - 1) / group)); };
  // Long rows: a group wide enough to cover the row once (at most a warp);
  // wider rows take several vectors per lane (chunks), then more tiles.
  t.segmentGroup = nextPowerOfTwo(vectors);
  t.segmentChunks = chunksFor(t.segmentGroup);
  // 256-edge segments. Shorter ones pay where heavy rows hold most edges
  // of a small graph (bench_reduction --sweep-segments, H200, SAGE max F =
  // 128: tolokers 0.127 ms at 256, 0.104 at 64), but lengthen the combine's
  // in-order fold on hubs (a 10^6-edge star: 15,625 partials per element at
  // 64): the autotuner's to choose per graph.
  t.segmentLength = options.segmentLength > 0 ? options.segmentLength : 256;
  // Typical rows: with local ids, a group about as wide as the median row is
  // long, so a warp serves several short rows and has their gathers in
  // flight together (H200, F = 128, 2-D grid: 4 lanes per row 0.43 ms, a
  // warp per row 0.65 ms). With scattered ids a row's gather wants whole
  // 512-byte requests: on R-MAT 4 lanes per row took 2.0 ms, a warp 1.55 ms.
  const int64_t median = std::max<int64_t>(1, in.degrees.p50);
  t.group = options.group > 0 ? options.group
            : in.local        ? std::min(t.segmentGroup, std::max(4, nextPowerOfTwo(median)))
                              : t.segmentGroup;
  // Wide rows: at least the lanes that cover the row in one tile of 8
  // chunks, so the edges are walked once. What the autotuner found on the
  // H200 at F = 490 on 2-D grids (median degree 4, which alone gives 4
  // lanes and 8 tiles): 32 lanes took SpMM 2.70 ms instead of 5.87
  // (grid 1024; 10.4 instead of 25.1 on grid 2100), SAGE max 4.56 ms
  // instead of 7.50.
  if (options.group <= 0)
    t.group = std::max(t.group, nextPowerOfTwo((vectors + 7) / 8));
  t.group = std::min(t.group, t.segmentGroup);
  t.chunks = chunksFor(t.group);
  t.blockThreads = 256;
  // Rows much longer than typical go to the segment kernels (R-MAT: 128
  // beat 32 and 512; uniform degree 100: splitting nothing was best).
  const int64_t threshold = options.heavyThreshold > 0 ? options.heavyThreshold
                            : in.local                 ? 8 * static_cast<int64_t>(t.group)
                                                       : std::max<int64_t>(128, 4 * median);
  t.heavyThreshold = in.degrees.max > threshold ? threshold : 0;
  return t;
}

lower::PassConfig ruleConfig(const lower::LoweredLayer &lowered, lower::Pass pass, const GraphFacts &facts,
                             const RuleOptions &options) {
  lower::PassConfig config;
  config.index = facts.index;
  config.weighted = facts.weighted;
  const std::vector<lower::AggregationStage> &stages = lower::stagesOf(lowered, pass);
  const std::vector<lower::Target> targets = lower::targetsOf(lowered, pass);
  for (size_t k = 0; k < stages.size(); ++k) {
    const lower::AggregationStage &stage = stages[k];
    const dsl::Over over = llvm::cast<dsl::Aggregate>(stage.aggregate.get())->over();
    const bool rows = over == dsl::Over::InEdges || over == dsl::Over::OutEdges;
    if (stage.family == lower::Family::Attention && over != dsl::Over::AllNodes) {
      AttentionInputs in;
      in.degrees = over == dsl::Over::OutEdges ? facts.out : facts.in;
      const dsl::Shape lanes = lower::attentionLanes(stage);
      in.heads = lanes.heads;
      in.dim = lanes.dim;
      in.aligned = options.aligned;
      in.backward = pass == lower::Pass::Backward;
      config.stages.emplace_back(chooseAttention(in, options));
      continue;
    }
    if (!rows) {
      config.stages.emplace_back(std::monostate{}); // nothing to tune (or refused by planning)
      continue;
    }
    SpmmInputs in;
    in.degrees = over == dsl::Over::OutEdges ? facts.out : facts.in;
    in.local = facts.local;
    in.width = stage.aggregate->shape().size();
    if (stage.family == lower::Family::Reduction) {
      // The same row mapping as the generated SpMM kernel; vector gathers
      // when the whole message is a plain input (SAGE max's x_j).
      in.alignedGather = options.aligned && lower::messageIsPlainGather(stage);
      lower::ReductionConfig reduction;
      static_cast<lower::RowTiling &>(reduction) = tileRows(in, options);
      // The arg scatter (N x F integer atomics, a memset and a convert) pays
      // where rows are long; on short rows one pass over the transpose is
      // cheaper. H200, SAGE max backward, F = 128: grid (degree 4) 2.83 ms
      // scattered vs 1.31 over the transpose; R-MAT (15.3) 2.50 vs 4.40;
      // uniform degree 100: 0.42 vs 2.05; tolokers (88): 0.07 vs 0.27.
      reduction.argScatter = options.argScatter && in.degrees.mean >= 8;
      // Packed atomics merge heavy max/min rows: faster where hubs hold
      // many edges, within 3% elsewhere, in less scratch (H200, SAGE max F =
      // 128, forward: R-MAT 1.56 vs 1.63 ms, peak 2648 vs 2693 MiB; tolokers
      // 0.122 vs 0.118 ms; grid and er have no heavy rows).
      const dsl::Reduce reduce = llvm::cast<dsl::Aggregate>(stage.aggregate.get())->reduce();
      reduction.packedMerge = options.packedMerge && (reduce == dsl::Reduce::Max || reduce == dsl::Reduce::Min) &&
                              in.degrees.max < (int64_t{1} << 31);
      config.stages.emplace_back(reduction);
      continue;
    }
    const lower::StageFusion fusion = lower::fusionOf(stages, targets, k);
    in.cusparsePossible = lower::cusparseCanRun(stage);
    in.cusparseNeedsPass = fusion.fusable && !fusion.direct;
    in.alignedGather = options.aligned && lower::isPlainGather(stage);
    config.stages.emplace_back(chooseSpmm(in, options));
  }
  return config;
}

lower::AttentionConfig chooseAttention(const AttentionInputs &in, const RuleOptions &options) {
  lower::AttentionConfig t;
  // Node inputs gathered in 16-byte vectors where rows allow; a vector
  // never straddles two heads.
  t.vec = !in.aligned ? 1 : in.dim % 4 == 0 ? 4 : in.dim % 2 == 0 ? 2 : 1;
  int64_t headLanes = in.dim / t.vec;
  // A power-of-two group whose lanes split into whole heads (headLanes
  // divides it) or whose multiples make one (it divides headLanes): at most
  // a warp, and no wider than a row's vectors.
  const auto widestGroup = [&](int64_t lanes) {
    int group = nextPowerOfTwo(in.heads * lanes);
    while (group > 1 && group % lanes != 0 && lanes % group != 0)
      group /= 2;
    return group;
  };
  int group = widestGroup(headLanes);
  if (group * t.vec < 8 && group < std::min<int64_t>(32, nextPowerOfTwo(in.heads * headLanes))) {
    // Lanes per head with an odd factor (61 for 122 floats in pairs) can
    // leave a group whose loads of a row fill less than a 32-byte sector:
    // one lane per row walking the whole row alone (H200, GATv2 4 x 122
    // forward on R-MAT 20: 777 ms; padded, 43 ms). Pad each head to a power
    // of two of lanes (or a multiple of 32) then. Groups that read a full
    // sector (24 floats: 2 lanes of 16 bytes) keep their real layout.
    headLanes = headLanes <= 32 ? nextPowerOfTwo(headLanes) : (headLanes + 31) / 32 * 32;
    t.paddedDim = headLanes * t.vec;
    group = widestGroup(headLanes);
  }
  // The backward of wide rows (512 floats or more: 4 heads x 122, padded
  // to 128): half a warp per tile, two or more tiles a row. The exhaustive
  // search's best on the H200, GATv2 4 x 122: 16 lanes on grid 1024 (33.0
  // ms against 39.9 in a warp), grid 2100 (141 against 169), R-MAT 20 (181
  // against 202) and tolokers. The forward's best ranges from 8 lanes
  // (grids) to a warp (R-MAT: 37 ms, against 56 in 16 lanes).
  const int64_t rowFloats = in.heads * headLanes * t.vec;
  const bool wide = rowFloats >= 512;
  if (wide && in.backward && group > 16 && headLanes % 16 == 0)
    group = 16;
  if (options.group > 0 && (options.group % headLanes == 0 || headLanes % options.group == 0))
    group = options.group;
  t.group = t.segmentGroup = group;
  // Vectors per lane: the whole row in one tile when it takes at most 8,
  // else tiles of whole heads down the grid.
  const int64_t chunksPerHead = headLanes > group ? headLanes / group : 1;
  const int64_t headsPerChunk = headLanes > group ? 1 : group / headLanes;
  const int64_t rowChunks = chunksPerHead * ((in.heads + headsPerChunk - 1) / headsPerChunk);
  t.chunks = t.segmentChunks = static_cast<int>(std::max(chunksPerHead, std::min<int64_t>(rowChunks, 8) / chunksPerHead * chunksPerHead));
  t.blockThreads = 256;
  // Segments of 256 edges, or 64 where each edge carries 512 floats: the
  // exhaustive search's best on the H200 for GATv2 4 x 122 (padded to 128)
  // had segments of 64 on R-MAT 20 and tolokers, forward and backward; at
  // 4 x 32 and 4 x 8 both lengths won.
  t.segmentLength = options.segmentLength > 0 ? options.segmentLength : wide ? 64 : 256;
  // Rows much longer than typical are split into segments, as SpMM's;
  // wide rows from 32 edges, where they are not typical (the exhaustive
  // best on R-MAT 20: forward 37.3 ms against 43.8 from 128, backward 189
  // against 200; on tolokers both passes).
  const int64_t median = std::max<int64_t>(1, in.degrees.p50);
  const int64_t threshold = options.heavyThreshold > 0 ? options.heavyThreshold
                            : wide                    ? std::max<int64_t>(32, 2 * median)
                                                      : std::max<int64_t>(128, 4 * median);
  t.heavyThreshold = in.degrees.max > threshold ? threshold : 0;
  t.fuseBackward = options.fuseAttentionBackward;
  return t;
}

} // namespace gnnjit::autotune
