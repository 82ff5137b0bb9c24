// The rank a degree percentile is read at, one definition for the host's
// statistics (graph/DegreeStats.cpp) and the device build's kernels
// (exec/device/graph_build.cuh), so both read the same degree. Plain C++17,
// callable from device code.
#pragma once

#ifdef __CUDACC__
#define GNNJIT_HOST_DEVICE __host__ __device__
#else
#define GNNJIT_HOST_DEVICE
#endif

namespace gnnjit::graph {

/// Nearest rank: ceil(n * numerator / denominator), at least one. The
/// percentile is the smallest degree that many nodes reach. Integers, so no
/// rounding can move a rank.
GNNJIT_HOST_DEVICE inline unsigned long long nearestRank(unsigned long long n, unsigned long long numerator,
                                                         unsigned long long denominator) {
  const unsigned long long rank = (n * numerator + denominator - 1) / denominator;
  return rank < 1 ? 1 : rank;
}

} // namespace gnnjit::graph
