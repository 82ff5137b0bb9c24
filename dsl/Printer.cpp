#include "dsl/Printer.h"

#include "dsl/IRVisitor.h"

#include <fmt/format.h>

namespace gnnjit::dsl {

using llvm::cast;

std::string Printer::name(const ExprNode *node) const {
  const auto it = ids_.find(node);
  return it == ids_.end() ? std::string("%?") : fmt::format("%{}", it->second);
}

namespace {

std::string attributes(const ExprNode &n) {
  switch (n.kind()) {
  case NodeKind::InputRef: {
    const auto &in = *cast<InputRef>(&n)->input();
    return fmt::format("{}@{}", in.name, levelName(n.level()));
  }
  case NodeKind::GraphValue: {
    const auto *g = cast<GraphValue>(&n);
    if (g->quantity() == GraphQuantity::AttentionDropout)
      return fmt::format("{}[{}]@{}", graphQuantityName(g->quantity()), g->probability(), levelName(n.level()));
    return fmt::format("{}@{}", graphQuantityName(g->quantity()), levelName(n.level()));
  }
  case NodeKind::Constant:
    return fmt::format("{}", cast<Constant>(&n)->value());
  case NodeKind::Unary: {
    const auto *u = cast<Unary>(&n);
    const bool hasAttribute = u->op() == UnaryOp::LeakyRelu || u->op() == UnaryOp::Elu;
    return hasAttribute ? fmt::format("{}[{}]", unaryOpName(u->op()), u->attribute()) : std::string(unaryOpName(u->op()));
  }
  case NodeKind::Binary:
    return std::string(binaryOpName(cast<Binary>(&n)->op()));
  case NodeKind::Select:
    return "select";
  case NodeKind::SumAxis:
    return cast<SumAxis>(&n)->axis() == Axis::Dim ? "sum_dim" : "sum_heads";
  case NodeKind::BroadcastTo:
    return "broadcast";
  case NodeKind::Reshape:
    return "reshape";
  case NodeKind::EdgeSoftmax:
    return "edge_softmax";
  case NodeKind::Aggregate: {
    const auto *a = cast<Aggregate>(&n);
    return fmt::format("aggregate[{}, {}]", reduceName(a->reduce()), overName(a->over()));
  }
  case NodeKind::Saved:
    return fmt::format("saved[{}]", savedKindName(cast<Saved>(&n)->what()));
  case NodeKind::Placeholder:
    return fmt::format("placeholder {}", cast<Placeholder>(&n)->name());
  }
  return "?";
}

} // namespace

std::string Printer::line(const ExprNode &node) const {
  std::string operands;
  for (const ExprPtr &op : node.operands())
    operands += fmt::format("{}{}", operands.empty() ? " " : ", ", name(op.get()));
  return fmt::format("{} = {}{} : {} {} {}", name(&node), attributes(node), operands, shapeText(node.shape()),
                     dtypeName(node.dtype()), levelName(node.level()));
}

std::vector<std::string> Printer::define(const std::vector<ExprPtr> &roots) {
  std::vector<std::string> lines;
  for (const ExprPtr &n : postOrder(roots)) {
    if (ids_.count(n.get()))
      continue;
    ids_.emplace(n.get(), ids_.size());
    lines.push_back(line(*n));
  }
  return lines;
}

std::string printExpr(const ExprPtr &root) {
  Printer p;
  std::string text;
  for (const std::string &l : p.define({root}))
    text += l + "\n";
  return text;
}

} // namespace gnnjit::dsl
