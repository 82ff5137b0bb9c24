#include "dsl/IRVisitor.h"

#include <unordered_map>

namespace gnnjit::dsl {

void IRGraphVisitor::include(const ExprPtr &root) {
  // Iterative: expressions built in loops can be deep.
  struct Frame {
    const ExprNode *node;
    size_t next;
  };
  if (!root || !seen_.insert(root.get()).second)
    return;
  std::vector<Frame> stack{{root.get(), 0}};
  while (!stack.empty()) {
    Frame &top = stack.back();
    const auto &ops = top.node->operands();
    if (top.next < ops.size() && descend(*top.node)) {
      const ExprNode *child = ops[top.next++].get();
      if (child && seen_.insert(child).second)
        stack.push_back({child, 0});
      continue;
    }
    const ExprNode *done = top.node;
    stack.pop_back();
    dispatch(*done);
  }
}

void IRGraphVisitor::dispatch(const ExprNode &node) {
  switch (node.kind()) {
#define GNNJIT_IR_NODE(Name)                                                                                         \
  case NodeKind::Name:                                                                                               \
    visit(static_cast<const Name &>(node));                                                                          \
    return;
#include "dsl/IRNodes.def"
  }
}

namespace {
class Collector : public IRGraphVisitor {
public:
  std::vector<const ExprNode *> order;

protected:
#define GNNJIT_IR_NODE(Name)                                                                                         \
  void visit(const Name &n) override { order.push_back(&n); }
#include "dsl/IRNodes.def"
};
} // namespace

std::vector<ExprPtr> postOrder(const std::vector<ExprPtr> &roots) {
  // Nodes are shared_ptr-owned; recover owning handles through the roots'
  // operand lists so callers get ExprPtr, not raw pointers.
  std::unordered_map<const ExprNode *, ExprPtr> owner;
  std::vector<ExprPtr> work(roots.begin(), roots.end());
  while (!work.empty()) {
    ExprPtr e = std::move(work.back());
    work.pop_back();
    if (!e || !owner.emplace(e.get(), e).second)
      continue;
    for (const ExprPtr &op : e->operands())
      work.push_back(op);
  }
  Collector c;
  for (const ExprPtr &r : roots)
    c.include(r);
  std::vector<ExprPtr> result;
  result.reserve(c.order.size());
  for (const ExprNode *n : c.order)
    result.push_back(owner.at(n));
  return result;
}

} // namespace gnnjit::dsl
