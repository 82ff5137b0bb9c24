#include "dsl/Differentiate.h"

#include "dsl/IRMutator.h"
#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

namespace gnnjit::dsl {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

ExprPtr constant(double v) { return Constant::make(v); }
ExprPtr add(ExprPtr a, ExprPtr b) { return Binary::make(BinaryOp::Add, std::move(a), std::move(b)); }
ExprPtr sub(ExprPtr a, ExprPtr b) { return Binary::make(BinaryOp::Sub, std::move(a), std::move(b)); }
ExprPtr mul(ExprPtr a, ExprPtr b) { return Binary::make(BinaryOp::Mul, std::move(a), std::move(b)); }
ExprPtr div(ExprPtr a, ExprPtr b) { return Binary::make(BinaryOp::Div, std::move(a), std::move(b)); }
ExprPtr neg(ExprPtr a) { return Unary::make(UnaryOp::Neg, std::move(a)); }
ExprPtr greater(ExprPtr a, ExprPtr b) { return Binary::make(BinaryOp::Greater, std::move(a), std::move(b)); }
ExprPtr greaterEqual(ExprPtr a, ExprPtr b) { return Binary::make(BinaryOp::GreaterEqual, std::move(a), std::move(b)); }

/// Sums `c` over the axes where it is wider than `shape`, then repeats it
/// along the axes where it is narrower, so it has exactly `shape`.
ExprPtr fitShape(ExprPtr c, Shape shape) {
  if (c->shape().heads > shape.heads)
    c = SumAxis::make(c, Axis::Heads);
  if (c->shape().dim > shape.dim)
    c = SumAxis::make(c, Axis::Dim);
  if (c->shape() != shape)
    c = BroadcastTo::make(c, shape);
  return c;
}

/// Moves a contribution computed per `from` to the level `to` of the value it
/// belongs to, summing over what `to` does not distinguish.
ExprPtr reduceToLevel(ExprPtr c, Level from, Level to) {
  if (from == to)
    return c;
  if (from == Level::Edge) {
    const Over over = to == Level::Dst ? Over::InEdges : to == Level::Src ? Over::OutEdges : Over::AllEdges;
    return Aggregate::make(Reduce::Sum, std::move(c), over);
  }
  if (to == Level::Global)
    return Aggregate::make(Reduce::Sum, std::move(c), Over::AllNodes);
  throwInternalError("differentiate: cannot move a gradient from {} to {}", levelName(from), levelName(to));
}

/// Rewrites forward softmax nodes as their saved probabilities.
class SaveSoftmax : public IRMutator {
protected:
  ExprPtr rewrite(const ExprPtr &node, std::vector<ExprPtr> operands) override {
    if (isa<EdgeSoftmax>(node.get()))
      return Saved::make(SavedKind::SoftmaxProb, node);
    return IRMutator::rewrite(node, std::move(operands));
  }
};

class Differentiator {
public:
  explicit Differentiator(const Layer &layer) : layer_(layer) {}

  BackwardPlan run() {
    BackwardPlan plan;
    std::vector<ExprPtr> roots;
    for (const LayerOutput &out : layer_.outputs()) {
      auto decl = std::make_shared<const InputDecl>(
          InputDecl{"d_" + out.name, InputKind::Node, out.value->shape(), out.value->dtype()});
      plan.outputGradients.push_back(decl);
      contribute(out.value.get(), InputRef::make(decl, Level::Dst), Level::Dst);
      roots.push_back(out.value);
    }
    const std::vector<ExprPtr> order = postOrder(roots);
    for (const ExprPtr &n : order)
      for (const ExprPtr &op : n->operands())
        users_[op.get()].push_back(n.get());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const ExprPtr g = adjoint(it->get());
      if (g)
        propagate(*it, g);
    }

    std::map<const InputDecl *, size_t> slot;
    for (const InputPtr &in : layer_.inputs()) {
      slot[in.get()] = plan.gradients.size();
      plan.gradients.push_back({in, {}});
    }
    for (const ExprPtr &n : order)
      if (const auto *ref = dyn_cast<InputRef>(n.get()))
        if (ExprPtr g = adjoint(n.get()))
          plan.gradients[slot.at(ref->input().get())].terms.push_back(g);
    return plan;
  }

private:
  /// The sum of everything contributed to `n`, or null when nothing was.
  /// Only called once every user of `n` has contributed; the sum is kept
  /// so later reads share one node.
  ExprPtr adjoint(const ExprNode *n) {
    if (auto done = summed_.find(n); done != summed_.end())
      return done->second;
    auto it = adjoints_.find(n);
    ExprPtr sum;
    if (it != adjoints_.end() && !it->second.empty()) {
      sum = it->second.front();
      for (size_t i = 1; i < it->second.size(); ++i)
        sum = add(sum, it->second[i]);
    }
    summed_.emplace(n, sum);
    return sum;
  }

  /// Adds `c`, computed per `context` (the finer of c's level and where it
  /// was computed), to the adjoint of `operand`.
  void contribute(const ExprNode *operand, ExprPtr c, Level context) {
    c = fitShape(std::move(c), operand->shape());
    const Level from = join(context, c->level());
    adjoints_[operand].push_back(reduceToLevel(std::move(c), from, operand->level()));
  }

  /// A forward value as the backward plan reads it: aggregated values are
  /// saved per destination, softmax probabilities are recomputed.
  ExprPtr fwd(const ExprPtr &e) {
    auto [it, fresh] = forwardReads_.try_emplace(e.get());
    if (fresh)
      it->second = e->aggregated() ? Saved::make(SavedKind::Value, e) : saveSoftmax_.mutate(e);
    return it->second;
  }

  void propagate(const ExprPtr &self, const ExprPtr &g) {
    const ExprNode *n = self.get();
    const Level ctx = n->level();
    switch (n->kind()) {
    case NodeKind::InputRef:
    case NodeKind::GraphValue:
    case NodeKind::Constant:
      return;
    case NodeKind::Unary:
      return unary(*cast<Unary>(n), self, g);
    case NodeKind::Binary:
      return binary(*cast<Binary>(n), self, g);
    case NodeKind::Select: {
      const auto *s = cast<Select>(n);
      contribute(s->a().get(), Select::make(fwd(s->cond()), g, constant(0)), ctx);
      contribute(s->b().get(), Select::make(fwd(s->cond()), constant(0), g), ctx);
      return;
    }
    case NodeKind::SumAxis:
    case NodeKind::BroadcastTo:
      // fitShape repeats or sums back to the operand's shape.
      contribute(n->operands()[0].get(), g, ctx);
      return;
    case NodeKind::Reshape:
      contribute(n->operands()[0].get(), Reshape::make(g, n->operands()[0]->shape()), ctx);
      return;
    case NodeKind::EdgeSoftmax:
      return softmax(*cast<EdgeSoftmax>(n), self, g);
    case NodeKind::Aggregate:
      return aggregate(*cast<Aggregate>(n), self, g);
    case NodeKind::Saved:
    case NodeKind::Placeholder:
      throwInternalError("differentiate: {} in a forward layer", nodeKindName(n->kind()));
    }
  }

  void unary(const Unary &u, const ExprPtr &self, const ExprPtr &g) {
    const ExprPtr x = fwd(u.x());
    const ExprPtr y = fwd(self);
    ExprPtr d;
    switch (u.op()) {
    case UnaryOp::Neg:
      d = neg(g);
      break;
    case UnaryOp::Exp:
      d = mul(g, y);
      break;
    case UnaryOp::Log:
      d = div(g, x);
      break;
    case UnaryOp::Sqrt:
      d = div(mul(g, constant(0.5)), y);
      break;
    case UnaryOp::Rsqrt:
      d = mul(mul(g, constant(-0.5)), mul(y, mul(y, y)));
      break;
    case UnaryOp::Relu:
      d = mul(g, greater(x, constant(0)));
      break;
    case UnaryOp::LeakyRelu:
      d = mul(g, Select::make(greater(x, constant(0)), constant(1), constant(u.attribute())));
      break;
    case UnaryOp::Elu: // x <= 0: alpha * e^x = y + alpha
      d = mul(g, Select::make(greater(x, constant(0)), constant(1), add(y, constant(u.attribute()))));
      break;
    case UnaryOp::Sigmoid:
      d = mul(g, mul(y, sub(constant(1), y)));
      break;
    case UnaryOp::Tanh:
      d = mul(g, sub(constant(1), mul(y, y)));
      break;
    case UnaryOp::Abs:
      d = mul(g, sub(greater(x, constant(0)), greater(constant(0), x)));
      break;
    }
    contribute(u.x().get(), d, u.level());
  }

  void binary(const Binary &b, const ExprPtr &self, const ExprPtr &g) {
    const ExprNode *a = b.a().get(), *bb = b.b().get();
    const Level ctx = b.level();
    switch (b.op()) {
    case BinaryOp::Add:
      contribute(a, g, ctx);
      contribute(bb, g, ctx);
      return;
    case BinaryOp::Sub:
      contribute(a, g, ctx);
      contribute(bb, neg(g), ctx);
      return;
    case BinaryOp::Mul:
      contribute(a, mul(g, fwd(b.b())), ctx);
      contribute(bb, mul(g, fwd(b.a())), ctx);
      return;
    case BinaryOp::Div:
      contribute(a, div(g, fwd(b.b())), ctx);
      contribute(bb, neg(div(mul(g, fwd(self)), fwd(b.b()))), ctx);
      return;
    case BinaryOp::Min: // ties go to the left operand
      contribute(a, mul(g, greaterEqual(fwd(b.b()), fwd(b.a()))), ctx);
      contribute(bb, mul(g, greater(fwd(b.a()), fwd(b.b()))), ctx);
      return;
    case BinaryOp::Max:
      contribute(a, mul(g, greaterEqual(fwd(b.a()), fwd(b.b()))), ctx);
      contribute(bb, mul(g, greater(fwd(b.b()), fwd(b.a()))), ctx);
      return;
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual:
      return; // piecewise constant
    }
  }

  void aggregate(const Aggregate &agg, const ExprPtr &self, const ExprPtr &g) {
    if (agg.over() != Over::InEdges)
      throwInternalError("differentiate: aggregation over {} in a forward layer", overName(agg.over()));
    ExprPtr dm;
    switch (agg.reduce()) {
    case Reduce::Sum:
      dm = g;
      break;
    case Reduce::Mean: // every edge's destination has in-degree >= 1
      dm = div(g, GraphValue::make(GraphQuantity::InDegree, Level::Dst));
      break;
    case Reduce::Max:
    case Reduce::Min:
      dm = mul(g, Saved::make(SavedKind::ArgMatch, self));
      break;
    }
    contribute(agg.message().get(), dm, Level::Edge);
  }

  /// alpha = softmax(s): ds_e = alpha_e (dalpha_e - sum_e' alpha_e' dalpha_e').
  /// Validation guarantees every use of alpha is aggregate(Sum, alpha * v),
  /// so the sum is <g_A, A> per head over those aggregates A: the saved
  /// output replaces a second pass over the edges (FlashAttention's Delta).
  void softmax(const EdgeSoftmax &sm, const ExprPtr &self, const ExprPtr &dalpha) {
    ExprPtr delta;
    for (const ExprNode *mulNode : users_[&sm]) {
      for (const ExprNode *aggNode : users_[mulNode]) {
        const ExprPtr gA = adjoint(aggNode);
        if (!gA)
          continue;
        const ExprPtr term = SumAxis::make(mul(gA, fwd(owner(aggNode))), Axis::Dim);
        delta = delta ? add(delta, term) : term;
      }
    }
    const ExprPtr alpha = fwd(self);
    const ExprPtr inner = delta ? sub(dalpha, delta) : dalpha;
    contribute(sm.score().get(), mul(alpha, inner), Level::Edge);
  }

  /// The owning handle of a node known to be in the forward DAG.
  ExprPtr owner(const ExprNode *n) {
    if (owners_.empty()) {
      std::vector<ExprPtr> roots;
      for (const LayerOutput &out : layer_.outputs())
        roots.push_back(out.value);
      for (const ExprPtr &e : postOrder(roots))
        owners_[e.get()] = e;
    }
    return owners_.at(n);
  }

  const Layer &layer_;
  std::unordered_map<const ExprNode *, std::vector<ExprPtr>> adjoints_;
  std::unordered_map<const ExprNode *, ExprPtr> summed_;
  std::unordered_map<const ExprNode *, std::vector<const ExprNode *>> users_;
  std::unordered_map<const ExprNode *, ExprPtr> owners_;
  /// fwd() results, so each forward value is read back through one node.
  std::unordered_map<const ExprNode *, ExprPtr> forwardReads_;
  SaveSoftmax saveSoftmax_;
};

} // namespace

BackwardPlan differentiate(const Layer &layer) { return Differentiator(layer).run(); }

std::string BackwardPlan::print() const {
  std::string text = "backward\n";
  for (const InputPtr &d : outputGradients)
    text += fmt::format("  {} {} : {} {}\n", inputKindName(d->kind), d->name, shapeText(d->shape), dtypeName(d->dtype));
  std::vector<ExprPtr> roots;
  for (const InputGradient &g : gradients)
    roots.insert(roots.end(), g.terms.begin(), g.terms.end());
  Printer printer;
  for (const std::string &line : printer.define(roots))
    text += "  " + line + "\n";
  for (const InputGradient &g : gradients) {
    std::string terms;
    for (const ExprPtr &t : g.terms)
      terms += fmt::format("{}{}", terms.empty() ? "" : " + ", printer.name(t.get()));
    text += fmt::format("  grad {} = {}\n", g.input->name, terms.empty() ? "0" : terms);
  }
  return text;
}

} // namespace gnnjit::dsl
