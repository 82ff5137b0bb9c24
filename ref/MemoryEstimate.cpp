#include "ref/MemoryEstimate.h"

#include "dsl/IRVisitor.h"
#include "graph/GraphMemory.h"
#include "ref/Bindings.h"
#include "support/CheckedMath.h"

#include <fmt/format.h>

#include <set>

namespace gnnjit::ref {

using llvm::dyn_cast;
using llvm::isa;

namespace {

/// rows x size doubles.
uint64_t doubles(int64_t rows, int64_t size, std::string_view what) {
  return checkedProduct({rows, size, static_cast<int64_t>(sizeof(double))}, what);
}

/// The values Evaluator::prepare(roots) materializes, in the same walk.
void addPrepared(const std::vector<dsl::ExprPtr> &roots, const graph::Graph &graph, MemoryEstimate &m) {
  const int64_t n = graph.numNodes();
  const std::vector<dsl::ExprPtr> nodes = dsl::postOrder(roots);
  std::set<const dsl::ExprNode *> argsWanted;
  for (const dsl::ExprPtr &node : nodes)
    if (const auto *saved = dyn_cast<dsl::Saved>(node.get()); saved && saved->what() == dsl::SavedKind::ArgMatch)
      argsWanted.insert(saved->forward().get());
  uint64_t values = 0, argTables = 0, softmax = 0, counts = 0;
  bool outEdges = false;
  for (const dsl::ExprPtr &ptr : nodes) {
    const dsl::ExprNode &node = *ptr;
    if (node.level() == dsl::Level::Edge) {
      if (isa<dsl::EdgeSoftmax>(&node))
        softmax = checkedSum(softmax, doubles(n, 2 * node.shape().heads, "the softmax statistics"), "the reference");
      continue;
    }
    if (isa<dsl::InputRef>(&node) || isa<dsl::Saved>(&node))
      continue; // views of bound tensors or forward values
    const int64_t rows = node.level() == dsl::Level::Global ? 1 : n;
    const auto *agg = dyn_cast<dsl::Aggregate>(&node);
    const bool perGroup = agg && (agg->over() == dsl::Over::InEdges || agg->over() == dsl::Over::OutEdges);
    const int64_t groups = agg ? (perGroup ? n : 1) : rows;
    values = checkedSum(values, doubles(groups, node.shape().size(), "a reference value"), "the reference");
    if (agg) {
      counts = std::max(counts, doubles(groups, 1, "an aggregation's counts")); // freed after each aggregation
      outEdges |= agg->over() == dsl::Over::OutEdges;
      if (argsWanted.count(&node))
        argTables = checkedSum(argTables, doubles(groups, node.shape().size(), "an arg table"), "the reference");
    }
  }
  m.add("fp64 intermediate values (per node and global)", values);
  m.add("aggregation counters", counts);
  m.add("max/min arg tables", argTables);
  m.add("softmax statistics", softmax);
  if (outEdges)
    m.add(graph::transposeMemory(graph));
}

} // namespace

MemoryEstimate tensorMemory(const std::vector<dsl::InputPtr> &inputs, const graph::Graph &graph,
                            std::string_view role) {
  MemoryEstimate m;
  for (const dsl::InputPtr &in : inputs)
    m.add(fmt::format("{} '{}' (fp64)", role, in->name),
          doubles(bindingRows(*in, graph), in->shape.size(), fmt::format("the {} '{}'", role, in->name)));
  return m;
}

MemoryEstimate forwardMemory(const dsl::Layer &layer, const graph::Graph &graph) {
  MemoryEstimate m;
  std::vector<dsl::ExprPtr> roots;
  for (const dsl::LayerOutput &out : layer.outputs()) {
    roots.push_back(out.value);
    m.add(fmt::format("output '{}' (fp64)", out.name),
          doubles(graph.numNodes(), out.value->shape().size(), fmt::format("the output '{}'", out.name)));
  }
  addPrepared(roots, graph, m);
  return m;
}

MemoryEstimate backwardMemory(const dsl::Layer &layer, const dsl::BackwardPlan &plan, const graph::Graph &graph) {
  MemoryEstimate m = tensorMemory(layer.inputs(), graph, "gradient of");
  std::vector<dsl::ExprPtr> roots;
  for (const dsl::InputGradient &g : plan.gradients)
    for (const dsl::ExprPtr &term : g.terms)
      roots.push_back(term);
  addPrepared(roots, graph, m);
  return m;
}

} // namespace gnnjit::ref
