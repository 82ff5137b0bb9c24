// What identifies a graph's content for tuning records: node and edge
// counts, log2 degree histograms, and a hash of the CSR arrays themselves.
// Two loads of the same file agree; graphs one edge apart differ. Never a
// pointer or an object id.
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnjit::autotune {

struct GraphFingerprint {
  int64_t nodes = 0, edges = 0;
  /// Nodes by degree bucket: [0], [1], [2, 3], [4, 7], ... (in, out).
  std::vector<int64_t> inBuckets, outBuckets;
  std::string csrHash; ///< xxHash64 of the incoming CSR's offsets, indices and weights, hex
  /// One string of all of it: "n<nodes>-e<edges>-<16 hex digits>".
  std::string key() const;
};

GraphFingerprint fingerprint(const graph::Graph &graph);

} // namespace gnnjit::autotune
