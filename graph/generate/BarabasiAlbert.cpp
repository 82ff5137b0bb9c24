#include "graph/generate/Generators.h"

#include "graph/generate/GeneratorSupport.h"

namespace gnnjit::graph {

namespace {

void validate(const BarabasiAlbertParams &p) {
  if (p.edgesPerNode < 1)
    throwUserError("ba: edges per node (m) must be at least 1, got {}", p.edgesPerNode);
  if (p.nodes <= p.edgesPerNode)
    throwUserError("ba: the node count must be larger than edges per node (m={}) to start from a clique of m + 1 "
                   "nodes, got {}",
                   p.edgesPerNode, p.nodes);
  const long double n = static_cast<long double>(p.nodes), m = static_cast<long double>(p.edgesPerNode);
  detail::checkSize("ba", n, (m + 1) * m + 2 * m * (n - m - 1));
}

} // namespace

EdgeList generateBarabasiAlbert(const BarabasiAlbertParams &params) {
  validate(params);
  const int64_t n = params.nodes, m = params.edgesPerNode;
  const int64_t undirected = (m + 1) * m / 2 + m * (n - m - 1);
  EdgeList edges;
  edges.numNodes = n;
  edges.reserve(static_cast<size_t>(2 * undirected));
  // Every endpoint of every edge so far: a uniform pick from it picks a
  // node with probability proportional to its degree.
  std::vector<int64_t> endpoints;
  endpoints.reserve(static_cast<size_t>(2 * undirected));
  const auto link = [&](int64_t u, int64_t v) {
    edges.add(u, v);
    edges.add(v, u);
    endpoints.push_back(u);
    endpoints.push_back(v);
  };
  for (int64_t u = 0; u <= m; ++u)
    for (int64_t v = u + 1; v <= m; ++v)
      link(u, v);

  // Each node depends on all earlier ones, so this runs on one stream.
  Rng rng(params.seed);
  std::vector<int64_t> chosenBy(static_cast<size_t>(n), -1), targets(static_cast<size_t>(m));
  Progress progress("generating Barabasi-Albert", static_cast<uint64_t>(n));
  for (int64_t v = m + 1; v < n; ++v) {
    const uint64_t pool = endpoints.size();
    for (int64_t t = 0; t < m;) {
      const int64_t u = endpoints[rng.below(pool)];
      if (chosenBy[static_cast<size_t>(u)] == v)
        continue; // targets are distinct: draw again
      chosenBy[static_cast<size_t>(u)] = v;
      targets[static_cast<size_t>(t++)] = u;
    }
    for (int64_t u : targets)
      link(v, u);
    if ((v & 0xFFFF) == 0)
      progress.update(static_cast<uint64_t>(v));
  }
  return edges;
}

} // namespace gnnjit::graph
