#include "ref/EdgeProgram.h"

#include "dsl/AttentionDropout.h"

#include "dsl/IRVisitor.h"
#include "ref/RowOps.h"
#include "support/Error.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace gnnjit::ref {

using llvm::cast;
using llvm::dyn_cast;

EdgeProgram::EdgeProgram(const Evaluator &evaluator, const dsl::ExprPtr &root)
    : evaluator_(evaluator), weights_(evaluator.graph().incoming().weights()) {
  const std::vector<dsl::ExprPtr> nodes = dsl::postOrder({root});
  // Only per-edge nodes the root reaches through per-edge nodes: below a
  // prepared value (an aggregate, a node value) nothing is per-edge work.
  std::unordered_set<const dsl::ExprNode *> needed{root.get()};
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
    if (needed.count(it->get()) && (*it)->level() == dsl::Level::Edge)
      for (const dsl::ExprPtr &op : (*it)->operands())
        needed.insert(op.get());

  std::unordered_map<const dsl::ExprNode *, int> stepOf;
  std::vector<size_t> offsets;
  size_t scratchSize = 0;
  for (const dsl::ExprPtr &n : nodes) {
    if (!needed.count(n.get()) || n->level() != dsl::Level::Edge)
      continue;
    stepOf[n.get()] = static_cast<int>(steps_.size());
    steps_.push_back(Step{n.get(), {}, nullptr, nullptr});
    offsets.push_back(scratchSize);
    scratchSize += static_cast<size_t>(n->shape().size());
  }
  scratch_.assign(scratchSize, 0.0);

  for (size_t s = 0; s < steps_.size(); ++s) {
    Step &step = steps_[s];
    const dsl::ExprNode &n = *step.node;
    step.scratch = scratch_.data() + offsets[s];
    step.result = step.scratch;
    for (const dsl::ExprPtr &op : n.operands()) {
      auto found = stepOf.find(op.get());
      step.operands.push_back(found != stepOf.end() ? Operand{found->second} : operandFor(*op));
    }
    if (const auto *ref = dyn_cast<dsl::InputRef>(&n)) {
      step.edgeInput = &evaluator_.input(*ref->input());
    } else if (const auto *g = dyn_cast<dsl::GraphValue>(&n)) {
      if (g->quantity() == dsl::GraphQuantity::AttentionDropout)
        step.dropout = g;
      else if (g->quantity() != dsl::GraphQuantity::EdgeWeight)
        throwInternalError("{} read per edge", dsl::graphQuantityName(g->quantity()));
    } else if (const auto *softmax = dyn_cast<dsl::EdgeSoftmax>(&n)) {
      step.softmax = &evaluator_.softmaxStats(*softmax);
    } else if (const auto *saved = dyn_cast<dsl::Saved>(&n)) {
      if (saved->what() == dsl::SavedKind::ArgMatch) {
        const auto &agg = cast<dsl::Aggregate>(*saved->forward());
        step.args = &evaluator_.argTable(agg);
        if (agg.over() == dsl::Over::AllNodes)
          throwInternalError("arg_match of an aggregation over all nodes; no edge gives it its value");
      } else if (saved->what() != dsl::SavedKind::SoftmaxProb) {
        throwInternalError("a saved {} at edge level", dsl::savedKindName(saved->what()));
      }
    } else if (!isRowOp(n)) {
      throwInternalError("a {} node at edge level", dsl::nodeKindName(n.kind()));
    }
  }
  auto rootStep = stepOf.find(root.get());
  root_ = rootStep != stepOf.end() ? Operand{rootStep->second} : operandFor(*root);
}

EdgeProgram::Operand EdgeProgram::operandFor(const dsl::ExprNode &node) const {
  return Operand{-1, &evaluator_.value(node), node.level() == dsl::Level::Src};
}

const double *EdgeProgram::read(const Operand &op, const EdgeContext &edge) const {
  if (op.step >= 0)
    return steps_[static_cast<size_t>(op.step)].result;
  return op.value->row(op.atSrc ? edge.src : edge.dst);
}

const double *EdgeProgram::evaluate(const EdgeContext &edge) {
  for (Step &step : steps_)
    run(step, edge);
  return read(root_, edge);
}

void EdgeProgram::run(Step &step, const EdgeContext &edge) {
  const double *in[3] = {nullptr, nullptr, nullptr};
  for (size_t k = 0; k < step.operands.size() && k < 3; ++k)
    in[k] = read(step.operands[k], edge);
  double *out = step.scratch;
  const dsl::ExprNode &n = *step.node;
  switch (n.kind()) {
  case dsl::NodeKind::InputRef: // rows of edge inputs are in original edge order
    step.result = step.edgeInput->values.data() + edge.id * step.edgeInput->cols;
    return;
  case dsl::NodeKind::GraphValue:
    if (step.dropout) {
      const int64_t heads = n.shape().heads;
      for (int64_t h = 0; h < heads; ++h)
        out[h] = dsl::dropoutFactor(evaluator_.seed(), static_cast<uint64_t>(edge.id), heads, h,
                                    step.dropout->probability());
      return;
    }
    out[0] = weights_.empty() ? 1.0 : static_cast<double>(weights_[static_cast<size_t>(edge.pos)]);
    return;
  case dsl::NodeKind::EdgeSoftmax: {
    const SoftmaxStats &st = *step.softmax;
    for (int64_t h = 0; h < st.heads; ++h) {
      const size_t at = static_cast<size_t>(edge.dst * st.heads + h);
      out[h] = std::exp(in[0][h] - st.max[at]) / st.sum[at];
    }
    return;
  }
  case dsl::NodeKind::Saved: {
    if (!step.args) { // SoftmaxProb: alpha of the forward softmax, an earlier step
      step.result = in[0];
      return;
    }
    const ArgTable &t = *step.args;
    int64_t group = 0;
    if (t.over == dsl::Over::InEdges)
      group = edge.dst;
    else if (t.over == dsl::Over::OutEdges)
      group = edge.src;
    const int64_t *pos = t.pos.data() + group * t.size;
    for (int64_t k = 0; k < t.size; ++k)
      out[k] = pos[k] == edge.pos ? 1.0 : 0.0;
    return;
  }
  default:
    computeRow(n, in, out);
  }
}

} // namespace gnnjit::ref
