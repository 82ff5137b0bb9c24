// Synthetic graphs, deterministic for a seed on any machine (support/Random.h,
// never std::*_distribution). Each returns the raw edge list: self loops and
// duplicate edges are left as generated; BuildOptions cleans them. Bad
// parameters throw UserError naming the generator and the parameter. Work is
// split into fixed chunks with a random stream each, so the output does not
// depend on the number of threads either.
#pragma once

#include "graph/EdgeList.h"

#include <cstdint>

namespace gnnjit::graph {

/// Size limits every generator checks before allocating, so a typo such as
/// scale=40 is a clear error instead of an allocation failure. 2^34 edges
/// take 256 GiB as an edge list; 2^31 (a real size on an H200) fits well.
inline constexpr int64_t kMaxGeneratedEdges = int64_t{1} << 34;
inline constexpr int64_t kMaxGeneratedNodes = int64_t{1} << 34;

/// R-MAT (Chakrabarti et al. 2004): 2^scale nodes, edgeFactor * 2^scale
/// edges; each edge picks a quadrant per level with probabilities a, b, c,
/// d = 1 - a - b - c (a: both bits 0, b: destination bit 1, c: source bit 1).
/// Node ids are then permuted at random (Fisher-Yates) so id and degree are
/// unrelated. scale in 1..40, edgeFactor >= 1, a + b + c <= 1.
struct RmatParams {
  int scale = 16;
  int64_t edgeFactor = 16;
  double a = 0.57, b = 0.19, c = 0.19;
  uint64_t seed = 0;
  bool permute = true;
};
EdgeList generateRmat(const RmatParams &params);

/// A 2-D grid of rows x cols nodes (node r * cols + c), each joined to its
/// right and lower neighbour in both directions: road-like, degree <= 4.
/// Edges in the baseline's order: right links, down links, then reversed.
struct GridParams {
  int64_t rows = 256, cols = 256;
};
EdgeList generateGrid(const GridParams &params);

/// n * avgDegree edges with source and destination drawn uniformly (the
/// G(n, m) model with repeats, as the baseline's generator); n * avgDegree
/// is rounded to the nearest whole number.
struct ErdosRenyiParams {
  int64_t nodes = 100000;
  double avgDegree = 10;
  uint64_t seed = 0;
};
EdgeList generateErdosRenyi(const ErdosRenyiParams &params);

/// Stochastic block model: `blocks` communities of consecutive ids (sizes
/// differ by at most one); each node receives about degreeIn edges from its
/// own block and degreeOut from elsewhere. Locally dense when degreeIn is
/// large against the block size. Destinations are uniform and sources
/// uniform in (or outside) the destination's block: round(n * degreeIn)
/// edges inside blocks come first, then round(n * degreeOut) across.
/// blocks in 1..nodes; degreeOut must be 0 with one block.
struct SbmParams {
  int64_t nodes = 100000;
  int64_t blocks = 100;
  double degreeIn = 16, degreeOut = 2;
  uint64_t seed = 0;
};
EdgeList generateSbm(const SbmParams &params);

/// Barabasi-Albert preferential attachment: start from a clique of
/// edgesPerNode + 1 nodes; each later node links to edgesPerNode distinct
/// earlier nodes chosen proportionally to degree. Both directions stored.
/// Needs 1 <= edgesPerNode < nodes. Sequential: each node depends on all
/// earlier ones.
struct BarabasiAlbertParams {
  int64_t nodes = 100000;
  int64_t edgesPerNode = 4;
  uint64_t seed = 0;
};
EdgeList generateBarabasiAlbert(const BarabasiAlbertParams &params);

} // namespace gnnjit::graph
