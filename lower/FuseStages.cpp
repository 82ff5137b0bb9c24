#include "lower/FuseStages.h"

#include "dsl/IRVisitor.h"

#include <set>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::isa;

namespace {

bool isLeaf(const ExprNode &n) { return n.operands().empty(); }

/// The largest per-node subexpressions of a message that are worth computing
/// once per node rather than once per edge (leaves are just reads).
void collectPrologue(const ExprPtr &e, std::set<const ExprNode *> &seen, std::vector<ExprPtr> &out) {
  if (!seen.insert(e.get()).second)
    return;
  if (e->level() != Level::Edge) {
    if (!isLeaf(*e) && !isa<Saved>(e.get()))
      out.push_back(e);
    return;
  }
  for (const ExprPtr &op : e->operands())
    collectPrologue(op, seen, out);
}

} // namespace

FusedLayer fuseStages(const Layer &layer) {
  FusedLayer fused;
  std::vector<ExprPtr> roots;
  for (const LayerOutput &out : layer.outputs())
    roots.push_back(out.value);
  std::set<const ExprNode *> seen;
  for (const ExprPtr &n : postOrder(roots)) {
    if (!isa<Aggregate>(n.get()))
      continue;
    fused.aggregates.push_back(n);
    collectPrologue(n->operands()[0], seen, fused.nodes.prologue);
  }
  fused.nodes.epilogue = layer.outputs();
  return fused;
}

} // namespace gnnjit::lower
