#include "dsl/Validate.h"

#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <set>
#include <unordered_map>

namespace gnnjit::dsl {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

class LayerChecker {
public:
  explicit LayerChecker(const Layer &layer) : layer_(layer) {
    for (const LayerOutput &out : layer.outputs())
      roots_.push_back(out.value);
    printer_.define(roots_);
    nodes_ = postOrder(roots_);
    for (const ExprPtr &n : nodes_)
      for (const ExprPtr &op : n->operands())
        users_[op.get()].push_back(n.get());
  }

  void run() {
    checkNodesWellFormed();
    for (const ExprPtr &n : nodes_)
      checkStructure(*n);
    checkOutputs();
    checkInputsUsed();
  }

private:
  [[noreturn]] void fail(const ExprNode &node, std::string_view what, std::string_view fix) {
    std::string context = fmt::format("\n  at   {}", printer_.line(node));
    for (const ExprPtr &op : node.operands())
      if (op)
        context += fmt::format("\n  with {}", printer_.line(*op));
    throwUserError("layer '{}': {}{}{}{}", layer_.name(), what, fix.empty() ? "" : "; ", fix, context);
  }

  void checkNodesWellFormed() {
    for (const ExprPtr &n : nodes_)
      if (!n->error().empty())
        fail(*n, n->error(), "");
  }

  void checkStructure(const ExprNode &n) {
    if (isa<Saved>(&n))
      fail(n, "a saved forward value appears in a layer", "saved values belong to backward plans");
    if (isa<Placeholder>(&n))
      fail(n, "an undefined declared value", "define() it before build()");
    if (const auto *agg = dyn_cast<Aggregate>(&n)) {
      if (agg->over() != Over::InEdges)
        fail(n, fmt::format("an aggregation over {}", overName(agg->over())),
             "a layer aggregates over the edges into each node; other groupings come from differentiation");
      if (agg->message()->aggregated())
        fail(n, "an aggregation of an aggregation (the message uses an aggregation result)",
             "aggregate once per layer, or split it into two layers");
    }
    if (n.aggregated() && (n.level() == Level::Edge || n.level() == Level::Src))
      fail(n, fmt::format("an aggregation result is combined with per-{} values", levelName(n.level())),
           "after aggregation only destination values (x.dst(), dstInput) and parameters can be used");
    if (isa<EdgeSoftmax>(&n))
      checkSoftmaxUse(n);
    if (const auto *g = dyn_cast<GraphValue>(&n); g && g->quantity() == GraphQuantity::AttentionDropout)
      checkDropoutUse(n);
  }

  /// Attention dropout scales the value of softmax-weighted messages only:
  /// no score reads it and every aggregation it reaches is an attention one.
  void checkDropoutUse(const ExprNode &dropout) {
    const auto fix = "write aggregate(Reduce::Sum, edgeSoftmax(score) * (attentionDropout(p, heads) * value))";
    const auto users = [this](const ExprNode *n) { return users_[n]; };
    walk(&dropout, users, [&](const ExprNode *n) {
      if (isa<EdgeSoftmax>(n))
        fail(dropout, "attention dropout inside an edgeSoftmax's score", fix);
      const auto *agg = dyn_cast<Aggregate>(n);
      if (agg && !hasSoftmaxFactor(*agg->message()))
        fail(dropout, "attention dropout in a message that no edgeSoftmax weights", fix);
      return agg ? Step::Skip : Step::Expand;
    });
  }

  enum class Step { Expand, Skip, Stop };
  /// Visits `start`, then what `next` lists of each node visited, each node
  /// once, until `visit` says Stop (true then); Skip leaves a node's next out.
  template <typename Next, typename Visit> static bool walk(const ExprNode *start, Next next, Visit visit) {
    std::vector<const ExprNode *> work{start};
    std::set<const ExprNode *> seen;
    while (!work.empty()) {
      const ExprNode *n = work.back();
      work.pop_back();
      if (!seen.insert(n).second)
        continue;
      const Step step = visit(n);
      if (step == Step::Stop)
        return true;
      if (step == Step::Expand)
        for (const ExprNode *m : next(n))
          work.push_back(m);
    }
    return false;
  }

  static bool hasSoftmaxFactor(const ExprNode &message) {
    const auto *mul = dyn_cast<Binary>(&message);
    return mul && mul->op() == BinaryOp::Mul && (isa<EdgeSoftmax>(mul->a().get()) || isa<EdgeSoftmax>(mul->b().get()));
  }

  /// A softmax may only be a factor of a Sum aggregation's message:
  /// aggregate(Sum, edgeSoftmax(s) * v), so it normalizes exactly what is summed.
  void checkSoftmaxUse(const ExprNode &softmax) {
    const auto fix = "write aggregate(Reduce::Sum, edgeSoftmax(score) * value)";
    for (const ExprNode *user : users_[&softmax]) {
      const auto *mul = dyn_cast<Binary>(user);
      if (!mul || mul->op() != BinaryOp::Mul || (mul->a().get() == &softmax && mul->b().get() == &softmax))
        fail(softmax, "edgeSoftmax used outside an aggregation's message", fix);
      const ExprNode *value = mul->a().get() == &softmax ? mul->b().get() : mul->a().get();
      if (containsSoftmax(value))
        fail(*user, "a softmax-weighted message whose value holds another edgeSoftmax", fix);
      for (const ExprNode *aggUser : users_[user]) {
        const auto *agg = dyn_cast<Aggregate>(aggUser);
        if (!agg || agg->reduce() != Reduce::Sum)
          fail(softmax, "edgeSoftmax used outside a Sum aggregation's message", fix);
      }
      if (users_[user].empty())
        fail(softmax, "edgeSoftmax used outside an aggregation", fix);
    }
    // An output that is the softmax itself has no users; it is caught as an
    // edge-level output.
  }

  bool containsSoftmax(const ExprNode *root) {
    const auto operands = [](const ExprNode *n) {
      std::vector<const ExprNode *> ops;
      for (const ExprPtr &op : n->operands())
        ops.push_back(op.get());
      return ops;
    };
    return walk(root, operands, [](const ExprNode *n) { return isa<EdgeSoftmax>(n) ? Step::Stop : Step::Expand; });
  }

  void checkOutputs() {
    if (layer_.outputs().empty())
      throwUserError("layer '{}' has no output; call output(name, value) at least once", layer_.name());
    for (const LayerOutput &out : layer_.outputs()) {
      const ExprNode &v = *out.value;
      switch (v.level()) {
      case Level::Edge:
        fail(v, fmt::format("output '{}' is one value per edge", out.name),
             "outputs are per node: wrap the message in aggregate(...)");
      case Level::Src:
        fail(v, fmt::format("output '{}' is read at edge sources", out.name),
             "outputs are per destination node: aggregate the source values");
      case Level::Global:
        fail(v, fmt::format("output '{}' is one value for the whole layer", out.name),
             "outputs are per node and must use aggregate(...)");
      case Level::Dst:
        break;
      }
      if (!v.aggregated())
        fail(v, fmt::format("output '{}' never aggregates over edges", out.name),
             "a layer's outputs must use aggregate(...); per-node work belongs outside the layer");
    }
  }

  void checkInputsUsed() {
    std::set<const InputDecl *> used;
    for (const ExprPtr &n : nodes_)
      if (const auto *ref = dyn_cast<InputRef>(n.get()))
        used.insert(ref->input().get());
    for (const InputPtr &in : layer_.inputs())
      if (!used.count(in.get()))
        throwUserError("layer '{}': {} input '{}' is declared but no output uses it; remove it or use it",
                       layer_.name(), inputKindName(in->kind), in->name);
  }

  const Layer &layer_;
  std::vector<ExprPtr> roots_;
  std::vector<ExprPtr> nodes_;
  Printer printer_;
  std::unordered_map<const ExprNode *, std::vector<const ExprNode *>> users_;
};

} // namespace

void validateLayer(const Layer &layer) { LayerChecker(layer).run(); }

} // namespace gnnjit::dsl
