#include "graph/generate/Generators.h"

#include "graph/generate/GeneratorSupport.h"

#include <cmath>

namespace gnnjit::graph {

namespace {

/// Blocks of consecutive ids: the first `bigBlocks` hold base + 1 nodes,
/// the rest base.
struct Blocks {
  int64_t base, bigBlocks, bigNodes;
  Blocks(int64_t nodes, int64_t blocks)
      : base(nodes / blocks), bigBlocks(nodes % blocks), bigNodes(bigBlocks * (base + 1)) {}

  int64_t of(int64_t node) const { return node < bigNodes ? node / (base + 1) : bigBlocks + (node - bigNodes) / base; }
  int64_t start(int64_t block) const { return block * base + std::min(block, bigBlocks); }
  int64_t size(int64_t block) const { return base + (block < bigBlocks ? 1 : 0); }
};

void validate(const SbmParams &p) {
  if (p.nodes < 1)
    throwUserError("sbm: the node count must be at least 1, got {}", p.nodes);
  if (p.blocks < 1 || p.blocks > p.nodes)
    throwUserError("sbm: the block count must be between 1 and the node count ({}), got {}", p.nodes, p.blocks);
  if (!std::isfinite(p.degreeIn) || p.degreeIn < 0 || !std::isfinite(p.degreeOut) || p.degreeOut < 0)
    throwUserError("sbm: degrees must be finite numbers >= 0, got din={} dout={}", p.degreeIn, p.degreeOut);
  if (p.blocks == 1 && p.degreeOut > 0)
    throwUserError("sbm: with one block there is no other block to draw dout={} edges from; set dout=0 or use "
                   "at least 2 blocks",
                   p.degreeOut);
  const long double n = static_cast<long double>(p.nodes);
  detail::checkSize("sbm", n, n * p.degreeIn + n * p.degreeOut);
}

} // namespace

EdgeList generateSbm(const SbmParams &params) {
  validate(params);
  const int64_t n = params.nodes;
  // Destinations are uniform, so in-degrees are binomial around din and dout.
  const int64_t inside = std::llround(static_cast<double>(n) * params.degreeIn);
  const int64_t outside = std::llround(static_cast<double>(n) * params.degreeOut);
  const Blocks blocks(n, params.blocks);

  EdgeList edges;
  edges.numNodes = n;
  edges.src.resize(static_cast<size_t>(inside + outside));
  edges.dst.resize(static_cast<size_t>(inside + outside));
  int64_t *src = edges.src.data(), *dst = edges.dst.data();
  detail::forEachChunk(Rng(params.seed), inside + outside, "generating SBM", [&](Rng &rng, int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t to = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      const int64_t b = blocks.of(to);
      const int64_t start = blocks.start(b), size = blocks.size(b);
      int64_t from;
      if (k < inside) {
        from = start + static_cast<int64_t>(rng.below(static_cast<uint64_t>(size)));
      } else {
        // Uniform over the other blocks: skip this block's range.
        from = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - size)));
        if (from >= start)
          from += size;
      }
      src[k] = from;
      dst[k] = to;
    }
  });
  return edges;
}

} // namespace gnnjit::graph
