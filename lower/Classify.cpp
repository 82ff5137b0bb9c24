#include "lower/Classify.h"

#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::dyn_cast;
using llvm::isa;

std::string_view familyName(Family family) {
  switch (family) {
  case Family::SpMM:
    return "spmm";
  case Family::Reduction:
    return "reduction";
  case Family::Attention:
    return "attention";
  }
  return "?";
}

namespace {

/// Whether `e` depends on the graph and constants only (no input, no
/// softmax, no saved value).
bool isStructural(const ExprPtr &e) {
  for (const ExprPtr &n : postOrder({e}))
    if (isa<InputRef>(n.get()) || isa<EdgeSoftmax>(n.get()) || isa<Saved>(n.get()) || isa<Aggregate>(n.get()))
      return false;
  return true;
}

bool isSoftmaxFactor(const ExprPtr &e) {
  if (isa<EdgeSoftmax>(e.get()))
    return true;
  const auto *s = dyn_cast<Saved>(e.get());
  return s && s->what() == SavedKind::SoftmaxProb;
}

/// The first saved softmax probability anywhere in `e`, or null.
const Saved *findSavedSoftmax(const ExprPtr &e) {
  for (const ExprPtr &n : postOrder({e}))
    if (const auto *s = dyn_cast<Saved>(n.get()); s && s->what() == SavedKind::SoftmaxProb)
      return s;
  return nullptr;
}

} // namespace

AggregationStage classifyAggregation(const ExprPtr &aggregate) {
  const auto *agg = dyn_cast<Aggregate>(aggregate.get());
  if (!agg)
    throwInternalError("classifyAggregation of a {} node", nodeKindName(aggregate->kind()));
  AggregationStage stage;
  stage.aggregate = aggregate;

  if (agg->over() == Over::AllNodes) {
    // A dense sum over nodes (parameter gradients): a plain reduction.
    stage.family = Family::Reduction;
    stage.reason = "sum over all nodes of a per-node value";
    return stage;
  }

  const std::vector<ExprPtr> factors = productFactors(agg->message());
  std::vector<ExprPtr> softmax, structural, rest;
  for (const ExprPtr &f : factors)
    (isSoftmaxFactor(f) ? softmax : isStructural(f) ? structural : rest).push_back(f);

  if (!softmax.empty()) {
    if (agg->reduce() != Reduce::Sum || softmax.size() != 1)
      throwUserError("aggregation {} weights its message by {} softmax factors under {}; attention needs exactly "
                     "one, summed",
                     printExpr(aggregate), softmax.size(), reduceName(agg->reduce()));
    stage.family = Family::Attention;
    const ExprPtr &s = softmax.front();
    stage.score = isa<EdgeSoftmax>(s.get()) ? s->operands()[0] : s->operands()[0]->operands()[0];
    std::vector<ExprPtr> valueFactors = structural;
    valueFactors.insert(valueFactors.end(), rest.begin(), rest.end());
    stage.value = fold(BinaryOp::Mul, valueFactors);
    stage.reason = "sum of edgeSoftmax(score) x value";
    return stage;
  }
  if (const Saved *alpha = findSavedSoftmax(agg->message())) {
    // Backward messages that use alpha deeper in the expression: the
    // attention kernel recomputes it from the saved log-sum-exp.
    stage.family = Family::Attention;
    stage.score = alpha->forward()->operands()[0];
    stage.reason = "backward message that recomputes alpha from the saved log-sum-exp";
    return stage;
  }
  if (agg->reduce() == Reduce::Max || agg->reduce() == Reduce::Min) {
    stage.family = Family::Reduction;
    stage.reason = fmt::format("{} over edges", reduceName(agg->reduce()));
    return stage;
  }
  const ExprPtr value = fold(BinaryOp::Mul, rest);
  const Level gathered = gatheredLevel(agg->over());
  if (agg->over() != Over::AllEdges && value && (value->level() == gathered || value->level() == Level::Global)) {
    stage.family = Family::SpMM;
    stage.weight = fold(BinaryOp::Mul, structural);
    stage.value = value;
    stage.scalarWeight = !stage.weight || stage.weight->shape().isScalar();
    stage.reason = fmt::format("{} of {}x {} value", reduceName(agg->reduce()),
                               stage.weight ? "structural weight " : "", levelName(gathered));
    return stage;
  }
  stage.family = Family::Reduction;
  stage.reason = agg->over() == Over::AllEdges ? "sum over all edges (parameter gradient)"
                 : value                       ? fmt::format("{} of a message that reads {} values",
                                                             reduceName(agg->reduce()), levelName(value->level()))
                                               : "sum of a structural message";
  return stage;
}

} // namespace gnnjit::lower
