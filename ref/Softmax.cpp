#include "ref/Softmax.h"

#include "ref/EdgeLoops.h"
#include "ref/EdgeProgram.h"

#include <cmath>
#include <limits>

namespace gnnjit::ref {

SoftmaxStats computeSoftmaxStats(const dsl::EdgeSoftmax &softmax, const Evaluator &evaluator) {
  const graph::Graph &graph = evaluator.graph();
  SoftmaxStats st;
  const int64_t heads = softmax.shape().heads;
  st.heads = heads;
  const size_t cells = static_cast<size_t>(graph.numNodes() * heads);
  st.max.assign(cells, 0.0); // what a node without incoming edges keeps
  st.sum.assign(cells, 1.0);

  // Edges come grouped by destination: buffer one row's scores (each score
  // evaluated once), then take its max and its sum of exp(s - max).
  std::vector<double> row;
  int64_t current = -1;
  const auto finishRow = [&] {
    if (current < 0)
      return;
    const size_t edges = row.size() / static_cast<size_t>(heads);
    for (int64_t h = 0; h < heads; ++h) {
      double m = -std::numeric_limits<double>::infinity();
      for (size_t k = 0; k < edges; ++k) {
        const double v = row[k * static_cast<size_t>(heads) + static_cast<size_t>(h)];
        if (v > m || std::isnan(v))
          m = v;
      }
      double sum = 0;
      for (size_t k = 0; k < edges; ++k)
        sum += std::exp(row[k * static_cast<size_t>(heads) + static_cast<size_t>(h)] - m);
      st.max[static_cast<size_t>(current * heads + h)] = m;
      st.sum[static_cast<size_t>(current * heads + h)] = sum;
    }
    row.clear();
  };
  EdgeProgram score(evaluator, softmax.score());
  forEachEdgeByDst(graph, [&](const EdgeContext &e) {
    if (e.dst != current) {
      finishRow();
      current = e.dst;
    }
    const double *s = score.evaluate(e);
    row.insert(row.end(), s, s + heads);
  });
  finishRow();
  return st;
}

} // namespace gnnjit::ref
