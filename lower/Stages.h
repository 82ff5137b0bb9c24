// What lowering produces first: the layer split into stages that kernels run, each
// aggregation classified into one of the three kernel families.
#pragma once

#include "dsl/Differentiate.h"
#include "dsl/Layer.h"

#include <string>
#include <vector>

namespace gnnjit::lower {

enum class Family : uint8_t {
  SpMM,      ///< sum/mean of (structural weight) x (source value): cuSPARSE or a CSR kernel
  Reduction, ///< max/min, or sum/mean of a general message: degree-aware edge loops
  Attention, ///< sum of edgeSoftmax(score) x value: one streaming pass with online softmax
};
std::string_view familyName(Family family);

/// One aggregation and the element-wise work fused around it.
struct AggregationStage {
  dsl::ExprPtr aggregate; ///< the dsl::Aggregate node
  Family family;
  /// Why this family, in words (for plan.json, --explain and tests).
  std::string reason;

  /// SpMM: message = weight * value, weight built only from graph values
  /// and constants (null: weight 1), value read per source node.
  dsl::ExprPtr weight, value;
  /// Attention: message = edgeSoftmax(score) * value.
  dsl::ExprPtr score;
  /// Whether the weight is one scalar per edge (what cuSPARSE can take).
  bool scalarWeight = true;
};

/// Per-node values the stages read, computed before the edge loops (by the
/// caller's dense code or a small node kernel), and the outputs computed
/// after them from aggregates and destination values.
struct NodeStages {
  std::vector<dsl::ExprPtr> prologue; ///< maximal Src/Dst/Global subexpressions messages read
  std::vector<dsl::LayerOutput> epilogue;
};

struct BackwardStages {
  dsl::BackwardPlan plan;
  std::vector<AggregationStage> stages; ///< every aggregation the plan contains
};

/// The factors of a product tree: a * (b * c) -> [a, b, c].
std::vector<dsl::ExprPtr> productFactors(const dsl::ExprPtr &e);
/// The left fold of `terms` by `op`: ((t0 op t1) op t2) ...; null when
/// there are none. fold(Mul, productFactors(e)) rebuilds a product.
dsl::ExprPtr fold(dsl::BinaryOp op, const std::vector<dsl::ExprPtr> &terms);
/// Whether `e` reads an aggregate, a softmax or a saved value: what a
/// kernel cannot recompute from inputs alone.
bool readsComputed(const dsl::ExprPtr &e);
/// The end of each edge whose values an aggregation over `over` gathers:
/// the source over in-edges, the destination over out-edges.
dsl::Level gatheredLevel(dsl::Over over);
/// Whether an SpMM stage's value is a layer input read whole at the gathered
/// end (what cuSPARSE and 16-byte vector gathers need).
bool isPlainGather(const AggregationStage &stage);
/// Whether an aggregation's whole message is a layer input read whole at
/// the gathered end (SAGE max's x_j): reduction kernels then gather it in
/// 16-byte vectors.
bool messageIsPlainGather(const AggregationStage &stage);

struct LoweredLayer {
  dsl::Layer layer; ///< after canonicalization
  std::vector<AggregationStage> forward;
  NodeStages nodes;
  BackwardStages backward;

  /// The layer's family: that of its forward stages when they agree.
  Family family() const;
  /// Stable text of everything above.
  std::string print() const;
};

} // namespace gnnjit::lower
