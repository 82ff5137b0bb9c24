// The rule that picks how an SpMM aggregation runs on a given graph: the
// variant (generated kernel or cuSPARSE) and the generated kernel's shape,
// from the degree statistics and the feature width. A simple rule, not a
// search; the autotuner replaces it later.
#pragma once

#include "exec/Program.h"
#include "graph/DegreeStats.h"

namespace gnnjit::exec {

struct TuningInputs {
  const graph::DegreeSummary *degrees = nullptr; ///< of the rows the kernel walks (in-degrees for In)
  /// Neighbours' ids are close (DegreeStats::avgEdgeSpan at most 1/64 of the
  /// nodes, as on meshes and road grids): gathered rows then share cache
  /// lines and pages, and small groups per row pay off.
  bool local = false;
  int64_t width = 1; ///< F: floats per aggregated row
  bool cusparsePossible = false;
  bool cusparseNeedsPass = false; ///< cuSPARSE would need a node pass the generated kernel fuses
  bool alignedGather = false;     ///< the gathered input allows 16-byte vector loads (plain gather, aligned rows)
  Variant variant = Variant::Auto;
  /// Forced lanes per row and heavy-row threshold (0: the rule's), for
  /// benchmarks and the tuner; the vector width still follows alignment.
  int group = 0;
  int64_t heavyThreshold = 0;
};

SpmmChoice chooseSpmm(const TuningInputs &in);

/// What the rule sees of a graph (measured, or assumed by `export`). The
/// summaries must outlive any config made from these facts.
struct GraphFacts {
  codegen::IndexWidth index = codegen::IndexWidth::I32;
  bool weighted = false;
  const graph::DegreeSummary *in = nullptr, *out = nullptr; ///< in- and out-degrees
  bool local = false;                                       ///< see TuningInputs::local
};
GraphFacts graphFacts(const graph::Graph &graph);

/// What the caller fixes beyond the graph.
struct RuleOptions {
  Variant variant = Variant::Auto;
  bool aligned = true; ///< node inputs allow 16-byte vector loads
  int group = 0;       ///< see TuningInputs
  int64_t heavyThreshold = 0;
};

/// A program config whose chooseSpmm applies the rule to `facts`.
ProgramConfig ruleConfig(const GraphFacts &facts, const RuleOptions &options);

} // namespace gnnjit::exec
