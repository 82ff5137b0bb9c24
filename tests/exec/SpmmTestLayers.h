// The SpMM-family layer configurations the exec tests run: every library
// layer that lowers to SpMM aggregations, with the options that change its
// kernels (mean vs sum, edge weights, a trainable or fixed epsilon).
#pragma once

#include "layers/Library.h"

#include <string>
#include <vector>

namespace gnnjit::test {

struct SpmmLayerCase {
  std::string label;
  std::string layer;
  layers::LayerOptions options;
};

inline std::vector<SpmmLayerCase> spmmLayerCases(int64_t dim) {
  auto with = [dim](auto edit) {
    layers::LayerOptions o;
    o.dim = dim;
    edit(o);
    return o;
  };
  return {
      {"gcn", "gcn", with([](auto &) {})},
      {"gcn weighted", "gcn", with([](auto &o) { o.weighted = true; })},
      {"graphconv sum", "graphconv", with([](auto &o) { o.aggregation = "sum"; })},
      {"graphconv mean", "graphconv", with([](auto &o) { o.aggregation = "mean"; })},
      {"graphconv weighted", "graphconv", with([](auto &o) { o.weighted = true; })},
      {"sage mean", "sage", with([](auto &o) { o.aggregation = "mean"; })},
      {"sage sum", "sage", with([](auto &o) { o.aggregation = "sum"; })},
      {"gin train eps", "gin", with([](auto &o) { o.trainEps = true; })},
      {"gin fixed eps", "gin", with([](auto &o) {
         o.trainEps = false;
         o.eps = 0.25;
       })},
      {"gin bipartite", "gin", with([](auto &o) { o.bipartite = true; })},
  };
}

} // namespace gnnjit::test
