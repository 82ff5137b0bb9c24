#include "layers/LayerSupport.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <cmath>

namespace gnnjit::layers::detail {

using namespace gnnjit::dsl;

dsl::Expr invSqrtOrZero(const dsl::Expr &d) {
  return dsl::select(dsl::greater(d, 0.0), rsqrt(d), 0.0);
}

namespace {

/// The setting of a field when it is away from its default, for messages;
/// empty when it is at the default.
std::string nonDefault(Knob knob, const LayerOptions &o) {
  const LayerOptions defaults;
  switch (knob) {
  case Knob::Dim:
    return {};
  case Knob::Heads:
    return o.heads != defaults.heads ? fmt::format("heads = {}", o.heads) : std::string();
  case Knob::Concat:
    return o.concat != defaults.concat ? "concat = false (mean of heads)" : std::string();
  case Knob::NegativeSlope:
    return o.negativeSlope != defaults.negativeSlope ? fmt::format("negativeSlope = {}", o.negativeSlope)
                                                     : std::string();
  case Knob::Eps:
    return o.trainEps != defaults.trainEps || o.eps != defaults.eps ? fmt::format("eps = {}", o.eps) : std::string();
  case Knob::Aggregation:
    return o.aggregation != defaults.aggregation ? fmt::format("aggregation = '{}'", o.aggregation) : std::string();
  case Knob::Weighted:
    return o.weighted != defaults.weighted ? "weighted = true" : std::string();
  case Knob::EdgeFeatures:
    return o.edgeFeatures != defaults.edgeFeatures ? "edgeFeatures = true" : std::string();
  case Knob::AttentionDropout:
    return o.attentionDropout != defaults.attentionDropout ? fmt::format("attentionDropout = {}", o.attentionDropout)
                                                           : std::string();
  case Knob::Bipartite:
    return o.bipartite != defaults.bipartite ? "bipartite = true" : std::string();
  }
  return {};
}

} // namespace

void checkOptions(const LayerInfo &layer, const LayerOptions &options) {
  if (options.dim < 1)
    throwUserError("layer '{}': dim must be at least 1, got {}", layer.name, options.dim);
  if (options.heads < 1)
    throwUserError("layer '{}': heads must be at least 1, got {}", layer.name, options.heads);
  if (options.dim > kMaxShapeSize / options.heads)
    throwUserError("layer '{}': heads x dim = {} x {} is more features per row than a layer can have (at most {})",
                   layer.name, options.heads, options.dim, kMaxShapeSize);
  if (!std::isfinite(options.negativeSlope))
    throwUserError("layer '{}': negativeSlope must be a finite number, got {}", layer.name, options.negativeSlope);
  if (!std::isfinite(options.eps))
    throwUserError("layer '{}': eps must be a finite number, got {}", layer.name, options.eps);
  if (!(options.attentionDropout >= 0.0 && options.attentionDropout < 1.0))
    throwUserError("layer '{}': attentionDropout is a probability in [0, 1), got {}", layer.name,
                   options.attentionDropout);
  for (Knob knob : {Knob::Heads, Knob::Concat, Knob::NegativeSlope, Knob::Eps, Knob::Aggregation, Knob::Weighted,
                    Knob::EdgeFeatures, Knob::AttentionDropout, Knob::Bipartite}) {
    if (takes(layer, knob))
      continue;
    const std::string setting = nonDefault(knob, options);
    if (setting.empty())
      continue;
    if (knob == Knob::Heads)
      throwUserError("layer '{}' has no attention heads ({} was asked); leave heads at 1", layer.name, setting);
    throwUserError("layer '{}' does not read {} ({} was asked); it reads {}", layer.name, knobName(knob), setting,
                   layer.options);
  }
}

dsl::Reduce aggregation(std::string_view layer, const LayerOptions &options, dsl::Reduce fallback,
                        std::initializer_list<dsl::Reduce> allowed) {
  if (options.aggregation.empty())
    return fallback;
  std::string names;
  for (Reduce r : allowed) {
    if (reduceName(r) == options.aggregation)
      return r;
    names += fmt::format("{}{}", names.empty() ? "" : ", ", reduceName(r));
  }
  throwUserError("layer '{}' offers the aggregations {}; '{}' is not one of them", layer, names,
                 options.aggregation);
}

dsl::Expr withAttentionDropout(const dsl::Expr &value, const LayerOptions &options) {
  if (options.attentionDropout == 0.0)
    return value;
  return attentionDropout(options.attentionDropout, options.heads) * value;
}

dsl::Expr combineHeads(const dsl::Expr &perHead, const LayerOptions &options) {
  if (perHead.shape().heads == 1)
    return perHead; // one head: concatenating and averaging are both the identity
  return options.concat ? concatHeads(perHead) : meanHeads(perHead);
}

} // namespace gnnjit::layers::detail
