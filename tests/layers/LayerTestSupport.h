// Shared by the layer library tests: the layer configurations and graphs
// (bindings and the gradient check are in tests/GradientCheck.h).
#pragma once

#include "GradientCheck.h"
#include "layers/Library.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace gnnjit::test {

/// One configuration of one library layer.
struct LayerCase {
  std::string layer;
  layers::LayerOptions options;
  std::string label; ///< for messages: "gatv2 heads=2 mean edge"
  /// The PyG class adds self loops: graphs built for it get AddMissing
  /// where the test says "as PyG".
  bool pygAddsSelfLoops = false;
};

/// Every library layer in the option variants worth testing, with `dim`
/// features per head and `heads` heads on attention layers.
inline std::vector<LayerCase> allLayerCases(int64_t dim, int64_t heads) {
  std::vector<LayerCase> cases;
  const auto add = [&](std::string layer, std::string label, auto tweak) {
    layers::LayerOptions o;
    o.dim = dim;
    if (layers::takes(layers::findLayer(layer), layers::Knob::Heads))
      o.heads = heads;
    tweak(o);
    const bool loops = layer == "gcn" || layer == "gat" || layer == "gatv2" || layer == "agnn";
    cases.push_back({layer, o, layer + (label.empty() ? "" : " " + label), loops});
  };
  const auto none = [](layers::LayerOptions &) {};
  add("gcn", "", none);
  add("gcn", "weighted", [](layers::LayerOptions &o) { o.weighted = true; });
  add("graphconv", "sum", none);
  add("graphconv", "mean weighted", [](layers::LayerOptions &o) {
    o.aggregation = "mean";
    o.weighted = true;
  });
  for (const char *aggr : {"mean", "max", "min", "sum"})
    add("sage", aggr, [aggr](layers::LayerOptions &o) { o.aggregation = aggr; });
  add("gin", "train_eps", none);
  add("gin", "eps=0.25", [](layers::LayerOptions &o) {
    o.trainEps = false;
    o.eps = 0.25;
  });
  add("gin", "bipartite", [](layers::LayerOptions &o) { o.bipartite = true; });
  add("gat", "concat", none);
  add("gat", "bipartite edge", [](layers::LayerOptions &o) {
    o.bipartite = true;
    o.edgeFeatures = true;
  });
  add("gat", "mean edge", [](layers::LayerOptions &o) {
    o.concat = false;
    o.edgeFeatures = true;
  });
  add("gatv2", "concat", none);
  add("gatv2", "mean edge slope=0.1", [](layers::LayerOptions &o) {
    o.concat = false;
    o.edgeFeatures = true;
    o.negativeSlope = 0.1;
  });
  add("transformer", "concat", none);
  add("transformer", "mean edge", [](layers::LayerOptions &o) {
    o.concat = false;
    o.edgeFeatures = true;
  });
  add("agnn", "", none);
  for (const char *aggr : {"max", "min", "mean"})
    add("edgeconv", aggr, [aggr](layers::LayerOptions &o) { o.aggregation = aggr; });
  return cases;
}

/// Uniform in [-1, 1]; continuous values, so max/min ties between
/// different sources have probability zero.
} // namespace gnnjit::test
