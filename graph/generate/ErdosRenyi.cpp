#include "graph/generate/Generators.h"

#include "graph/generate/GeneratorSupport.h"

#include <cmath>

namespace gnnjit::graph {

EdgeList generateErdosRenyi(const ErdosRenyiParams &params) {
  if (params.nodes < 1)
    throwUserError("er: the node count must be at least 1, got {}", params.nodes);
  if (!std::isfinite(params.avgDegree) || params.avgDegree < 0)
    throwUserError("er: the average degree must be a finite number >= 0, got {}", params.avgDegree);
  const long double wanted = static_cast<long double>(params.nodes) * params.avgDegree;
  detail::checkSize("er", params.nodes, wanted);

  const int64_t n = params.nodes;
  const int64_t m = std::llround(static_cast<double>(wanted));
  EdgeList edges;
  edges.numNodes = n;
  edges.src.resize(static_cast<size_t>(m));
  edges.dst.resize(static_cast<size_t>(m));
  int64_t *src = edges.src.data(), *dst = edges.dst.data();
  detail::forEachChunk(Rng(params.seed), m, "generating Erdos-Renyi", [&](Rng &rng, int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      src[k] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      dst[k] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    }
  });
  return edges;
}

} // namespace gnnjit::graph
