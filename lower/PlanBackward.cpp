#include "lower/PlanBackward.h"

#include "dsl/IRVisitor.h"
#include "lower/Classify.h"

#include <set>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::dyn_cast;
using llvm::isa;

BackwardStages planBackward(const Layer &layer) {
  BackwardStages result;
  result.plan = differentiate(layer);
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
