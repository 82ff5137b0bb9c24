#include "ref/Aggregation.h"

#include "ref/EdgeLoops.h"
#include "ref/EdgeProgram.h"
#include "support/Error.h"

#include <cmath>

namespace gnnjit::ref {

namespace {

/// Folds rows into per-group results in visiting order.
class Reducer {
public:
  Reducer(dsl::Reduce reduce, bool perNode, int64_t groups, int64_t size, ArgTable *args)
      : reduce_(reduce), size_(size), out_(NodeValue::zeros(perNode, groups, size)),
        count_(static_cast<size_t>(groups), 0), args_(args) {
    if (args_) {
      args_->size = size;
      args_->pos.assign(static_cast<size_t>(groups * size), -1);
    }
  }

  void add(int64_t group, const double *row, int64_t pos) {
    double *acc = out_.mutableRow(group);
    int64_t *arg = args_ ? args_->pos.data() + group * size_ : nullptr;
    const bool first = count_[static_cast<size_t>(group)]++ == 0;
    if (reduce_ == dsl::Reduce::Sum || reduce_ == dsl::Reduce::Mean) {
      for (int64_t k = 0; k < size_; ++k)
        acc[k] += row[k];
      return;
    }
    const bool isMax = reduce_ == dsl::Reduce::Max;
    for (int64_t k = 0; k < size_; ++k) {
      const double v = row[k];
      // Strict comparison: the first of equal values stays.
      const bool better = first || (isMax ? v > acc[k] : v < acc[k]) || (std::isnan(v) && !std::isnan(acc[k]));
      if (!better)
        continue;
      acc[k] = v;
      if (arg)
        arg[k] = pos;
    }
  }

  NodeValue finish() {
    if (reduce_ == dsl::Reduce::Mean)
      for (size_t g = 0; g < count_.size(); ++g)
        if (count_[g] > 0)
          for (int64_t k = 0; k < size_; ++k)
            out_.mutableRow(static_cast<int64_t>(g))[k] /= static_cast<double>(count_[g]);
    return std::move(out_);
  }

private:
  dsl::Reduce reduce_;
  int64_t size_;
  NodeValue out_;
  std::vector<int64_t> count_;
  ArgTable *args_;
};

} // namespace

NodeValue aggregate(const dsl::Aggregate &agg, const Evaluator &evaluator, ArgTable *args) {
  const graph::Graph &graph = evaluator.graph();
  const int64_t n = graph.numNodes();
  const int64_t size = agg.shape().size();
  const bool perNode = agg.over() == dsl::Over::InEdges || agg.over() == dsl::Over::OutEdges;
  if (args)
    args->over = agg.over();
  Reducer reducer(agg.reduce(), perNode, perNode ? n : 1, size, args);

  if (agg.over() == dsl::Over::AllNodes) {
    if (agg.message()->level() == dsl::Level::Edge)
      throwInternalError("an aggregation over all nodes of a per-edge message");
    const NodeValue &message = evaluator.value(*agg.message());
    if (message.perNode()) {
      for (int64_t v = 0; v < n; ++v)
        reducer.add(0, message.row(v), v);
      return reducer.finish();
    }
    // n copies of one value: its mean, max and min are the value, its sum n times it.
    if (n > 0)
      reducer.add(0, message.row(0), 0);
    NodeValue out = reducer.finish();
    if (agg.reduce() == dsl::Reduce::Sum)
      for (int64_t k = 0; k < size; ++k)
        out.mutableRow(0)[k] *= static_cast<double>(n);
    return out;
  }

  EdgeProgram message(evaluator, agg.message());
  switch (agg.over()) {
  case dsl::Over::InEdges:
    forEachEdgeByDst(graph, [&](const EdgeContext &e) { reducer.add(e.dst, message.evaluate(e), e.pos); });
    break;
  case dsl::Over::OutEdges:
    forEachEdgeBySrc(graph, [&](const EdgeContext &e) { reducer.add(e.src, message.evaluate(e), e.pos); });
    break;
  case dsl::Over::AllEdges:
    forEachEdgeByDst(graph, [&](const EdgeContext &e) { reducer.add(0, message.evaluate(e), e.pos); });
    break;
  case dsl::Over::AllNodes:
    break;
  }
  return reducer.finish();
}

} // namespace gnnjit::ref
