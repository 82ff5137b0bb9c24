#include "graph/generate/Generators.h"

#include "graph/generate/GeneratorSupport.h"

#include <cmath>
#include <numeric>

namespace gnnjit::graph {

namespace {

void validate(const RmatParams &p) {
  if (p.scale < 1 || p.scale > 40)
    throwUserError("rmat: scale must be between 1 and 40 (2^scale nodes), got {}", p.scale);
  if (p.edgeFactor < 1)
    throwUserError("rmat: the edge factor (edges per node) must be at least 1, got {}", p.edgeFactor);
  detail::checkRange("rmat", "a", p.a, 0, 1);
  detail::checkRange("rmat", "b", p.b, 0, 1);
  detail::checkRange("rmat", "c", p.c, 0, 1);
  // A little slack so that a + b + c written as 1 in decimals is accepted.
  if (p.a + p.b + p.c > 1 + 1e-9)
    throwUserError("rmat: a + b + c must be at most 1 (d = 1 - a - b - c), got {} + {} + {} = {}", p.a, p.b, p.c,
                   p.a + p.b + p.c);
  const long double nodes = std::ldexp(1.0L, p.scale);
  detail::checkSize("rmat", nodes, nodes * static_cast<long double>(p.edgeFactor));
}

/// A quadrant choice compares 32 random bits with these (2^-32 resolution,
/// far below any meaningful probability), so one 64-bit draw serves two
/// levels.
struct Thresholds {
  uint64_t a, ab, abc;
  explicit Thresholds(const RmatParams &p) : a(toFixed(p.a)), ab(toFixed(p.a + p.b)), abc(toFixed(p.a + p.b + p.c)) {}
  static uint64_t toFixed(double p) { return static_cast<uint64_t>(std::llround(std::min(p, 1.0) * 0x1.0p32)); }
};

/// One level: appends the quadrant's source and destination bits. a:
/// neither, b: destination, c: source, d: both; the destination bit is the
/// parity of the thresholds passed. No branch: each outcome is random.
inline void descend(uint64_t x, const Thresholds &t, uint64_t &s, uint64_t &d) {
  const uint64_t pastA = x >= t.a, pastAB = x >= t.ab, pastABC = x >= t.abc;
  s = s * 2 + pastAB;
  d = d * 2 + (pastA ^ pastAB ^ pastABC);
}

/// Ids of one edge before permutation; level 0 decides the highest bit, as
/// the baseline does (src = src * 2 + bit).
inline void drawEdge(Rng &rng, const Thresholds &t, int scale, uint64_t &s, uint64_t &d) {
  s = d = 0;
  int level = 0;
  for (; level + 1 < scale; level += 2) {
    const uint64_t bits = rng.next();
    descend(bits & 0xFFFFFFFFu, t, s, d);
    descend(bits >> 32, t, s, d);
  }
  if (level < scale)
    descend(rng.next() & 0xFFFFFFFFu, t, s, d);
}

/// A seeded Fisher-Yates shuffle of 0..n-1, in the narrowest type that
/// holds it: the gathers through it are the cost of permuting.
template <typename Id> std::vector<Id> randomPermutation(int64_t n, Rng rng) {
  std::vector<Id> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), Id{0});
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(perm[static_cast<size_t>(i)], perm[rng.below(static_cast<uint64_t>(i) + 1)]);
  return perm;
}

template <typename Id> void fillEdges(const RmatParams &params, EdgeList &edges) {
  const Rng root(params.seed);
  const std::vector<Id> perm = params.permute ? randomPermutation<Id>(edges.numNodes, root.fork(1)) : std::vector<Id>{};
  const Thresholds t(params);
  int64_t *src = edges.src.data(), *dst = edges.dst.data();
  detail::forEachChunk(root.fork(0), edges.numEdges(), "generating R-MAT", [&](Rng &rng, int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      uint64_t s, d;
      drawEdge(rng, t, params.scale, s, d);
      src[k] = perm.empty() ? static_cast<int64_t>(s) : static_cast<int64_t>(perm[s]);
      dst[k] = perm.empty() ? static_cast<int64_t>(d) : static_cast<int64_t>(perm[d]);
    }
  });
}

} // namespace

EdgeList generateRmat(const RmatParams &params) {
  validate(params);
  EdgeList edges;
  edges.numNodes = int64_t{1} << params.scale;
  const int64_t m = params.edgeFactor * edges.numNodes;
  edges.src.resize(static_cast<size_t>(m));
  edges.dst.resize(static_cast<size_t>(m));
  if (params.scale <= 31)
    fillEdges<int32_t>(params, edges);
  else
    fillEdges<int64_t>(params, edges);
  return edges;
}

} // namespace gnnjit::graph
