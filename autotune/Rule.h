// The tuner's default policy: the rule that shapes each stage of a pass on a
// given graph, from its degree statistics and the feature width (for an SpMM
// aggregation, whether cuSPARSE or the generated kernel runs it; for every
// generated kernel its row mapping). A simple rule, not a search: what runs
// where no tuning record exists, and where every search starts. Its output
// is plain data (lower::PassConfig) that planning is handed.
#pragma once

#include "graph/DegreeStats.h"
#include "graph/Graph.h"
#include "lower/KernelPlan.h"

#include <string_view>

namespace gnnjit::autotune {

/// Which SpMM backend the rule may pick.
enum class Variant : uint8_t { Auto, Generated, Cusparse };
std::string_view variantName(Variant variant);
/// Parses "auto", "generated" or "cusparse"; UserError otherwise.
Variant parseVariant(std::string_view text);

/// The few numbers of a degree distribution the rule reads.
struct DegreeFacts {
  double mean = 0, std = 0;
  int64_t p50 = 0, max = 0;
  static DegreeFacts of(const graph::DegreeSummary &s) { return {s.mean, s.std, s.p50, s.max}; }
};

/// What the rule sees of a graph (measured, or assumed by `export`).
struct GraphFacts {
  lower::IndexWidth index = lower::IndexWidth::I32;
  bool weighted = false;
  DegreeFacts in, out; ///< in- and out-degrees
  /// Neighbours' ids are close (DegreeStats::avgEdgeSpan at most 1/64 of the
  /// nodes, as on meshes and road grids): gathered rows then share cache
  /// lines and pages, and small groups per row pay off.
  bool local = false;
  int64_t nodes = 0; ///< rows of the aggregation; 0 when not known (export)
};
GraphFacts graphFacts(const graph::Graph &graph);
/// The same from a graph's statistics, index type and weights (a graph
/// built on the device has no graph::Graph).
GraphFacts graphFacts(const graph::DegreeStats &stats, graph::IndexType index, bool weighted);
/// What the rule is told of a graph nobody has measured (`export`, the
/// layout of saved values): rows of `median` edges (mean and median) up to
/// `max`.
GraphFacts assumedFacts(int64_t median, int64_t max, lower::IndexWidth index = lower::IndexWidth::I32,
                        bool weighted = false, bool local = false);

/// What the caller fixes beyond the graph.
struct RuleOptions {
  Variant variant = Variant::Auto;
  bool aligned = true; ///< node inputs allow 16-byte vector loads
  /// Forced lanes per row, heavy-row threshold and segment length of
  /// generated SpMM and reduction kernels (0: the rule's), for benchmarks;
  /// the vector width still follows alignment.
  int group = 0;
  int64_t heavyThreshold = 0;
  int64_t segmentLength = 0;
  /// Backward of a max/min to its sources by an arg scatter (N x F integer
  /// atomics) rather than a pass over the transpose (E x F).
  bool argScatter = true;
  /// Heavy max/min rows merged by packed 64-bit atomics rather than a
  /// second pass over per-segment partials (off: for benchmarks and tests).
  bool packedMerge = true;
  /// Attention backward sums sharing edge loops (AttentionConfig::fuseBackward):
  /// faster on every benchmarked graph; off only to compare or to test the
  /// separate loops.
  bool fuseAttentionBackward = true;
};

/// `options` for a graph built on the device: the generated kernels where
/// Auto would take cuSPARSE. Such a graph is mostly one step's graph, and
/// cuSPARSE's per-matrix setup (handle, descriptors, workspace,
/// preprocessing) would come with every step. (The wrong GCN results first
/// blamed on cuSPARSE here came from its CSR ALG3, which gnnjit no longer
/// uses: exec/CusparseSpmm.h.)
RuleOptions forDeviceBuiltGraph(RuleOptions options);

/// One SpMM stage as the rule sees it.
struct SpmmInputs {
  DegreeFacts degrees; ///< of the rows the kernel walks (in-degrees for In)
  bool local = false;
  int64_t width = 1; ///< F: floats per aggregated row
  bool cusparsePossible = false;
  bool cusparseNeedsPass = false; ///< cuSPARSE would need a node pass the generated kernel fuses
  bool alignedGather = false;     ///< the gathered input allows 16-byte vector loads
};

lower::SpmmConfig chooseSpmm(const SpmmInputs &in, const RuleOptions &options);

/// The generated kernels' row mapping for a stage (SpMM and reduction alike).
lower::RowTiling tileRows(const SpmmInputs &in, const RuleOptions &options);

/// One attention stage as the rule sees it.
struct AttentionInputs {
  DegreeFacts degrees; ///< of the rows the kernel walks
  int64_t heads = 1, dim = 1;
  bool aligned = true; ///< node inputs allow 16-byte vector loads
  bool backward = false; ///< a stage of the backward pass
};
/// The attention kernels' mapping: whole heads per tile, a head's lanes in one group.
lower::AttentionConfig chooseAttention(const AttentionInputs &in, const RuleOptions &options);

/// The rule's config for every stage of `pass` on a graph with `facts`.
lower::PassConfig ruleConfig(const lower::LoweredLayer &lowered, lower::Pass pass, const GraphFacts &facts,
                             const RuleOptions &options);


} // namespace gnnjit::autotune
