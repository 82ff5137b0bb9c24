#include "layers/LayerSupport.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::layers::detail {

using namespace gnnjit::dsl;

dsl::Expr invSqrtOrZero(const dsl::Expr &d) {
  return dsl::select(dsl::greater(d, 0.0), rsqrt(d), 0.0);
}

void checkShape(std::string_view layer, const LayerOptions &options, bool hasHeads) {
  if (options.dim < 1)
    throwUserError("layer '{}': dim must be at least 1, got {}", layer, options.dim);
  if (options.heads < 1)
    throwUserError("layer '{}': heads must be at least 1, got {}", layer, options.heads);
  if (!hasHeads && options.heads != 1)
    throwUserError("layer '{}' has no attention heads (heads = {} was asked); leave heads at 1", layer,
                   options.heads);
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

dsl::Expr combineHeads(const dsl::Expr &perHead, const LayerOptions &options) {
  if (perHead.shape().heads == 1)
    return perHead; // one head: concatenating and averaging are both the identity
  return options.concat ? concatHeads(perHead) : meanHeads(perHead);
}

} // namespace gnnjit::layers::detail
