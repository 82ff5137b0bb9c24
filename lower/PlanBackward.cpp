#include "lower/PlanBackward.h"

#include "dsl/IRVisitor.h"
#include "lower/Classify.h"

#include <optional>
#include <set>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// An input's gradient terms with the attention sums over the same edges
/// merged: sum_e a + sum_e b = sum_e (a + b), one edge loop instead of two
/// (GATv2's source gradient through the value and through the score). Only
/// attention stages: merging SpMM messages would lose their weight x value form.
void addends(const ExprPtr &e, std::vector<ExprPtr> &out) {
  if (const auto *add = dyn_cast<Binary>(e.get()); add && add->op() == BinaryOp::Add &&
                                                    add->a()->shape() == e->shape() && add->b()->shape() == e->shape()) {
    addends(add->a(), out);
    addends(add->b(), out);
    return;
  }
  out.push_back(e);
}

std::optional<std::vector<ExprPtr>> mergeAttentionSums(const std::vector<ExprPtr> &given) {
  std::vector<ExprPtr> terms;
  for (const ExprPtr &t : given)
    addends(t, terms);
  std::vector<ExprPtr> merged;
  std::vector<int> mergeable; // index into merged, or -1
  for (const ExprPtr &t : terms) {
    const auto *agg = dyn_cast<Aggregate>(t.get());
    const bool attention = agg && agg->reduce() == Reduce::Sum && agg->over() != Over::AllNodes &&
                           classifyAggregation(t).family == Family::Attention;
    bool done = false;
    if (attention)
      for (size_t k = 0; k < merged.size() && !done; ++k) {
        const auto *other = dyn_cast<Aggregate>(merged[k].get());
        if (mergeable[k] && other->over() == agg->over() && merged[k]->shape() == t->shape()) {
          merged[k] = Aggregate::make(Reduce::Sum, Binary::make(BinaryOp::Add, other->message(), agg->message()),
                                      agg->over());
          done = true;
        }
      }
    if (!done) {
      merged.push_back(t);
      mergeable.push_back(attention ? 1 : 0);
    }
  }
  if (merged.size() == terms.size())
    return std::nullopt; // nothing merged: the terms stay as differentiation wrote them
  return merged;
}

} // namespace

BackwardStages planBackward(const Layer &layer) {
  BackwardStages result;
  result.plan = differentiate(layer);
  for (InputGradient &g : result.plan.gradients)
    if (std::optional<std::vector<ExprPtr>> merged = mergeAttentionSums(g.terms))
      g.terms = std::move(*merged);
  std::vector<ExprPtr> roots;
  for (const InputGradient &g : result.plan.gradients)
    roots.insert(roots.end(), g.terms.begin(), g.terms.end());
  // Aggregates inside Saved values are the forward's, already computed.
  class Finder : public IRGraphVisitor {
  public:
    std::vector<const ExprNode *> found;

  protected:
    bool descend(const ExprNode &n) override { return !isa<Saved>(&n); }
    void visit(const Aggregate &a) override { found.push_back(&a); }
  } finder;
  for (const ExprPtr &r : roots)
    finder.include(r);
  const std::set<const ExprNode *> wanted(finder.found.begin(), finder.found.end());
  for (const ExprPtr &n : postOrder(roots))
    if (wanted.count(n.get()))
      result.stages.push_back(classifyAggregation(n));
  return result;
}

} // namespace gnnjit::lower
