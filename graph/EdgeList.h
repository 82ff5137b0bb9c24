// The graph as it comes from a file or a generator: edges in input order,
// before any CSR is built. Edge k is src[k] -> dst[k]; its original id is k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gnnjit::graph {

struct EdgeList {
  int64_t numNodes = 0;
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
  /// Empty (unweighted) or one value per edge.
  std::vector<float> weight;

  int64_t numEdges() const { return static_cast<int64_t>(src.size()); }
  bool hasWeights() const { return !weight.empty(); }

  void reserve(size_t edges) {
    src.reserve(edges);
    dst.reserve(edges);
  }
  void add(int64_t from, int64_t to) {
    src.push_back(from);
    dst.push_back(to);
  }
  void add(int64_t from, int64_t to, float w) {
    add(from, to);
    weight.push_back(w);
  }
};

} // namespace gnnjit::graph
