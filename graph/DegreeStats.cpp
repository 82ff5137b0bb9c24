#include "graph/DegreeStats.h"

#include "graph/Graph.h"
#include "graph/NearestRank.h"

#include <cmath>
#include <cstdlib>

namespace gnnjit::graph {

int64_t DegreeSummary::nodesAbove(int64_t degree) const {
  int64_t count = 0;
  for (int64_t d = std::max<int64_t>(degree + 1, 0); d < static_cast<int64_t>(histogram.size()); ++d)
    count += histogram[static_cast<size_t>(d)];
  return count;
}

DegreeSummary DegreeSummary::fromDegrees(const std::vector<int64_t> &degrees) {
  DegreeSummary s;
  if (degrees.empty())
    return s;
  int64_t maxDegree = 0;
  long double sum = 0;
  for (int64_t d : degrees) {
    maxDegree = std::max(maxDegree, d);
    sum += d;
  }
  const long double n = static_cast<long double>(degrees.size());
  const long double mean = sum / n;
  long double squares = 0;
  s.histogram.assign(static_cast<size_t>(maxDegree) + 1, 0);
  for (int64_t d : degrees) {
    squares += (d - mean) * (d - mean);
    ++s.histogram[static_cast<size_t>(d)];
  }
  s.mean = static_cast<double>(mean);
  s.std = static_cast<double>(std::sqrt(squares / n));
  s.max = maxDegree;
  s.min = 0;
  while (s.histogram[static_cast<size_t>(s.min)] == 0)
    ++s.min;

  // Nearest rank: the smallest d whose cumulative count reaches the rank.
  const auto count = static_cast<unsigned long long>(degrees.size());
  const auto rank = [count](unsigned long long numerator, unsigned long long denominator) {
    return static_cast<int64_t>(nearestRank(count, numerator, denominator));
  };
  struct Want {
    int64_t rank;
    int64_t *out;
  } wants[] = {{rank(50, 100), &s.p50}, {rank(90, 100), &s.p90}, {rank(99, 100), &s.p99}, {rank(999, 1000), &s.p999}};
  int64_t cumulative = 0;
  size_t next = 0;
  for (int64_t d = 0; d <= maxDegree && next < std::size(wants); ++d) {
    cumulative += s.histogram[static_cast<size_t>(d)];
    while (next < std::size(wants) && cumulative >= wants[next].rank)
      *wants[next++].out = d;
  }
  return s;
}

DegreeStats DegreeStats::compute(const Graph &graph) {
  DegreeStats stats;
  const int64_t n = graph.numNodes();
  stats.nodes = n;
  stats.edges = graph.numEdges();
  std::vector<int64_t> inDegree(static_cast<size_t>(n)), outDegree(static_cast<size_t>(n));
  std::vector<bool> touched(static_cast<size_t>(n), false); // has an edge to or from another node
  long double spanSum = 0;
  graph.incoming().visit([&](const auto &a) {
    for (int64_t i = 0; i < n; ++i) {
      const auto begin = a.offsets[static_cast<size_t>(i)], end = a.offsets[static_cast<size_t>(i) + 1];
      inDegree[static_cast<size_t>(i)] = end - begin;
      for (auto p = begin; p < end; ++p) {
        const int64_t j = a.indices[static_cast<size_t>(p)];
        ++outDegree[static_cast<size_t>(j)];
        spanSum += std::llabs(i - j);
        if (i == j) {
          ++stats.selfLoops;
        } else {
          touched[static_cast<size_t>(i)] = true;
          touched[static_cast<size_t>(j)] = true;
        }
      }
    }
  });
  for (bool t : touched)
    stats.isolatedNodes += !t;
  stats.in = DegreeSummary::fromDegrees(inDegree);
  stats.out = DegreeSummary::fromDegrees(outDegree);
  stats.avgEdgeSpan = stats.edges ? static_cast<double>(spanSum / stats.edges) : 0.0;
  return stats;
}

} // namespace gnnjit::graph
