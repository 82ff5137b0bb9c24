#include "graph/DegreeStats.h"

#include "graph/Graph.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace gnnjit::graph;

TEST_CASE("degree statistics on a hand-checked graph") {
  // 0->1, 2->1, 1->0, 0->1, 3->3; node 4 has no edge, node 3 only a loop.
  EdgeList e;
  e.numNodes = 5;
  for (auto [s, d] : {std::pair{0, 1}, {2, 1}, {1, 0}, {0, 1}, {3, 3}})
    e.add(s, d);
  const Graph g = Graph::fromEdges(e);
  const DegreeStats &s = g.stats();
  CHECK(&s == &g.stats());
  CHECK(s.nodes == 5);
  CHECK(s.edges == 5);
  CHECK(s.selfLoops == 1);
  CHECK(s.isolatedNodes == 2);
  CHECK(s.avgEdgeSpan == doctest::Approx(0.8));

  // in-degrees [1, 3, 0, 1, 0]
  CHECK(s.in.mean == doctest::Approx(1.0));
  CHECK(s.in.std == doctest::Approx(std::sqrt(1.2)));
  CHECK(s.in.min == 0);
  CHECK(s.in.max == 3);
  CHECK(s.in.p50 == 1);
  CHECK(s.in.p90 == 3);
  CHECK(s.in.p99 == 3);
  CHECK(s.in.p999 == 3);
  CHECK(s.in.nodesAbove(0) == 3);
  CHECK(s.in.nodesAbove(1) == 1);
  CHECK(s.in.nodesAbove(3) == 0);
  CHECK(s.in.histogram == std::vector<int64_t>{2, 2, 0, 1});

  // out-degrees [2, 1, 1, 1, 0]
  CHECK(s.out.mean == doctest::Approx(1.0));
  CHECK(s.out.std == doctest::Approx(std::sqrt(0.4)));
  CHECK(s.out.max == 2);
  CHECK(s.out.p50 == 1);
}

TEST_CASE("nearest-rank percentiles") {
  std::vector<int64_t> degrees(1000);
  for (int64_t i = 0; i < 1000; ++i)
    degrees[static_cast<size_t>(i)] = i + 1; // 1..1000
  const DegreeSummary s = DegreeSummary::fromDegrees(degrees);
  CHECK(s.p50 == 500);
  CHECK(s.p90 == 900);
  CHECK(s.p99 == 990);
  CHECK(s.p999 == 999);
  CHECK(s.min == 1);
  CHECK(s.mean == doctest::Approx(500.5));
}

TEST_CASE("statistics of an empty graph are zero") {
  const Graph g = Graph::fromEdges(EdgeList{});
  CHECK(g.stats().nodes == 0);
  CHECK(g.stats().in.max == 0);
  CHECK(g.stats().avgEdgeSpan == 0.0);
}
