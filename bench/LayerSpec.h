// The layers the autotuner's benchmarks name on their command lines:
// name[:aggregation][/heads] (gcn, sage:max, gatv2/4), lowered at a feature
// width F = heads x features per head.
#pragma once

#include "layers/Library.h"
#include "lower/Pipeline.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace gnnjit::bench {

struct LayerSpec {
  std::string name, aggregation;
  int64_t heads = 1;
};

inline LayerSpec parseLayer(const std::string &spec) {
  LayerSpec l;
  std::string rest = spec;
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    l.heads = std::stoll(rest.substr(slash + 1));
    rest = rest.substr(0, slash);
  }
  if (const size_t colon = rest.find(':'); colon != std::string::npos) {
    l.aggregation = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  l.name = rest;
  return l;
}

/// The layer at width `width`; `dim` gets the features per head (width /
/// heads, at least 1: F = heads x dim may be below `width`).
inline lower::LoweredLayer lowered(const LayerSpec &spec, int64_t width, int64_t &dim) {
  layers::LayerOptions o;
  dim = std::max<int64_t>(1, width / spec.heads);
  o.dim = dim;
  if (!spec.aggregation.empty())
    o.aggregation = spec.aggregation;
  if (layers::takes(layers::findLayer(spec.name), layers::Knob::Heads))
    o.heads = spec.heads;
  return lower::lowerLayer(layers::buildLayer(spec.name, o));
}

} // namespace gnnjit::bench
