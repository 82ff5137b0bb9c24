#include "lower/Canonicalize.h"

#include "dsl/IRMutator.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <unordered_map>

namespace gnnjit::lower {

using namespace gnnjit::dsl;
using llvm::cast;
using llvm::dyn_cast;

namespace {

std::optional<double> constantValue(const ExprPtr &e) {
  if (const auto *c = dyn_cast<Constant>(e.get()))
    return c->value();
  return std::nullopt;
}

/// What makes two nodes the same computation: kind, attributes, operands.
std::string structuralKey(const ExprNode &n, const std::vector<ExprPtr> &ops) {
  std::string key(nodeKindName(n.kind()));
  const auto bits = [](double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  switch (n.kind()) {
  case NodeKind::InputRef:
    key += fmt::format(":{}:{}", static_cast<const void *>(cast<InputRef>(&n)->input().get()),
                       static_cast<int>(n.level()));
    break;
  case NodeKind::GraphValue:
    key += fmt::format(":{}:{}:{}:{}", static_cast<int>(cast<GraphValue>(&n)->quantity()), static_cast<int>(n.level()),
                       bits(cast<GraphValue>(&n)->probability()), n.shape().heads);
    break;
  case NodeKind::Constant:
    key += fmt::format(":{}", bits(cast<Constant>(&n)->value()));
    break;
  case NodeKind::Unary:
    key += fmt::format(":{}:{}", static_cast<int>(cast<Unary>(&n)->op()), bits(cast<Unary>(&n)->attribute()));
    break;
  case NodeKind::Binary:
    key += fmt::format(":{}", static_cast<int>(cast<Binary>(&n)->op()));
    break;
  case NodeKind::SumAxis:
    key += fmt::format(":{}", static_cast<int>(cast<SumAxis>(&n)->axis()));
    break;
  case NodeKind::BroadcastTo:
  case NodeKind::Reshape:
    key += fmt::format(":{}x{}", n.shape().heads, n.shape().dim);
    break;
  case NodeKind::Aggregate:
    key += fmt::format(":{}:{}", static_cast<int>(cast<Aggregate>(&n)->reduce()),
                       static_cast<int>(cast<Aggregate>(&n)->over()));
    break;
  case NodeKind::Saved:
    key += fmt::format(":{}", static_cast<int>(cast<Saved>(&n)->what()));
    break;
  case NodeKind::Placeholder:
    key += fmt::format(":{}", static_cast<const void *>(&n));
    break;
  case NodeKind::Select:
  case NodeKind::EdgeSoftmax:
    break;
  }
  for (const ExprPtr &op : ops)
    key += fmt::format(",{}", static_cast<const void *>(op.get()));
  return key;
}

class Canonicalizer : public IRMutator {
protected:
  ExprPtr rewrite(const ExprPtr &node, std::vector<ExprPtr> ops) override {
    ExprPtr result = simplify(node, ops);
    if (!result)
      result = IRMutator::rewrite(node, std::move(ops));
    auto [it, fresh] = unique_.try_emplace(structuralKey(*result, result->operands()), result);
    return it->second;
  }

private:
  /// A simpler equal node, or null. Only rewrites that keep the shape.
  static ExprPtr simplify(const ExprPtr &node, const std::vector<ExprPtr> &ops) {
    if (const auto *u = dyn_cast<Unary>(node.get())) {
      if (auto x = constantValue(ops[0]); x && u->op() == UnaryOp::Neg)
        return Constant::make(-*x);
      return nullptr;
    }
    const auto *b = dyn_cast<Binary>(node.get());
    if (!b)
      return nullptr;
    const auto a = constantValue(ops[0]), c = constantValue(ops[1]);
    if (a && c) {
      switch (b->op()) {
      case BinaryOp::Add:
        return Constant::make(*a + *c);
      case BinaryOp::Sub:
        return Constant::make(*a - *c);
      case BinaryOp::Mul:
        return Constant::make(*a * *c);
      case BinaryOp::Div:
        return Constant::make(*a / *c);
      default:
        return nullptr;
      }
    }
    // Identities keep the other operand only when it already has the result's shape.
    const auto keeps = [&](const ExprPtr &other) { return other->shape() == node->shape() ? other : nullptr; };
    switch (b->op()) {
    case BinaryOp::Mul:
      if (c == 1.0)
        return keeps(ops[0]);
      if (a == 1.0)
        return keeps(ops[1]);
      return nullptr;
    case BinaryOp::Add:
      if (c == 0.0)
        return keeps(ops[0]);
      if (a == 0.0)
        return keeps(ops[1]);
      return nullptr;
    case BinaryOp::Sub:
      return c == 0.0 ? keeps(ops[0]) : nullptr;
    case BinaryOp::Div:
      return c == 1.0 ? keeps(ops[0]) : nullptr;
    default:
      return nullptr;
    }
  }

  std::unordered_map<std::string, ExprPtr> unique_;
};

} // namespace

Layer canonicalize(const Layer &layer) {
  Canonicalizer pass;
  std::vector<LayerOutput> outputs;
  for (const LayerOutput &out : layer.outputs())
    outputs.push_back({out.name, pass.mutate(out.value)});
  return layer.withOutputs(std::move(outputs));
}

} // namespace gnnjit::lower
