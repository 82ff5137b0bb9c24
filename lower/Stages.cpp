#include "lower/Stages.h"

#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"

#include <fmt/format.h>

namespace gnnjit::lower {

std::vector<dsl::ExprPtr> productFactors(const dsl::ExprPtr &e) {
  if (const auto *b = llvm::dyn_cast<dsl::Binary>(e.get()); b && b->op() == dsl::BinaryOp::Mul) {
    std::vector<dsl::ExprPtr> factors = productFactors(b->a());
    const std::vector<dsl::ExprPtr> right = productFactors(b->b());
    factors.insert(factors.end(), right.begin(), right.end());
    return factors;
  }
  return {e};
}

dsl::ExprPtr fold(dsl::BinaryOp op, const std::vector<dsl::ExprPtr> &terms) {
  dsl::ExprPtr result;
  for (const dsl::ExprPtr &t : terms)
    result = result ? dsl::Binary::make(op, result, t) : t;
  return result;
}

bool readsComputed(const dsl::ExprPtr &e) {
  for (const dsl::ExprPtr &n : dsl::postOrder({e}))
    if (llvm::isa<dsl::Aggregate>(n.get()) || llvm::isa<dsl::EdgeSoftmax>(n.get()) || llvm::isa<dsl::Saved>(n.get()))
      return true;
  return false;
}

dsl::Level gatheredLevel(dsl::Over over) { return over == dsl::Over::OutEdges ? dsl::Level::Dst : dsl::Level::Src; }

bool isPlainGather(const AggregationStage &stage) {
  const auto *agg = llvm::cast<dsl::Aggregate>(stage.aggregate.get());
  return stage.value && llvm::isa<dsl::InputRef>(stage.value.get()) &&
         stage.value->level() == gatheredLevel(agg->over()) && stage.value->shape() == stage.aggregate->shape();
}

bool messageIsPlainGather(const AggregationStage &stage) {
  const auto *agg = llvm::cast<dsl::Aggregate>(stage.aggregate.get());
  const dsl::ExprPtr &m = agg->message();
  return llvm::isa<dsl::InputRef>(m.get()) && m->level() == gatheredLevel(agg->over()) &&
         m->shape() == stage.aggregate->shape();
}

Family LoweredLayer::family() const {
  // Attention dominates (its kernel also covers the rest of the layer's
  // work in practice), then reduction, then SpMM.
  Family f = Family::SpMM;
  for (const AggregationStage &s : forward)
    if (s.family == Family::Attention || (s.family == Family::Reduction && f == Family::SpMM))
      f = s.family;
  return f;
}

std::string LoweredLayer::print() const {
  dsl::Printer printer;
  std::vector<dsl::ExprPtr> roots;
  for (const dsl::LayerOutput &out : layer.outputs())
    roots.push_back(out.value);
  std::string text = fmt::format("lowered {} (family {})\n", layer.name(), familyName(family()));
  for (const std::string &line : printer.define(roots))
    text += "  " + line + "\n";
  for (const AggregationStage &s : forward)
    text += fmt::format("  stage {}: {} ({}){}\n", printer.name(s.aggregate.get()), familyName(s.family), s.reason,
                        s.family == Family::SpMM && !s.scalarWeight ? ", per-head weight" : "");
  for (const dsl::ExprPtr &p : nodes.prologue)
    text += fmt::format("  per-node {}\n", printer.name(p.get()));
  text += fmt::format("  backward: {} aggregations:", backward.stages.size());
  for (const AggregationStage &s : backward.stages)
    text += fmt::format(" {}[{}]", familyName(s.family),
                        dsl::overName(llvm::cast<dsl::Aggregate>(s.aggregate.get())->over()));
  return text + "\n";
}

} // namespace gnnjit::lower
