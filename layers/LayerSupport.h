// Small helpers the library layers share: option checks and the few
// expressions dsl/Ops.h does not offer.
#pragma once

#include "layers/Library.h"

#include <initializer_list>
#include <string_view>

namespace gnnjit::layers::detail {

/// d > 0 ? 1/sqrt(d) : 0, element-wise: PyG's deg.pow(-0.5) followed by
/// masked_fill(inf -> 0). Equal to PyG for d >= 0 (d = 0 gives 0, not inf);
/// for d < 0 PyG gives NaN and this gives 0 (negative weighted degrees are
/// outside what GCN normalization means).
dsl::Expr invSqrtOrZero(const dsl::Expr &d);

/// Throws UserError unless the options fit the layer: dim and heads at
/// least 1 with heads x dim within dsl::kMaxShapeSize, finite numbers, and
/// every field the layer does not read (LayerInfo::knobs) at its default.
void checkOptions(const LayerInfo &layer, const LayerOptions &options);

/// The aggregation options.aggregation names (or `fallback` when empty);
/// a UserError naming `allowed` when it is not one of them.
dsl::Reduce aggregation(std::string_view layer, const LayerOptions &options, dsl::Reduce fallback,
                        std::initializer_list<dsl::Reduce> allowed);

/// Attention layers' output: [H, C] per node, concatenated into [1, H * C]
/// (PyG concat=True: head-major, as out.view(-1, H * C)) or averaged into
/// [1, C] (concat=False: out.mean(dim=1)).
dsl::Expr combineHeads(const dsl::Expr &perHead, const LayerOptions &options);

/// An attention message's value with options.attentionDropout applied
/// (PyG drops alpha; alpha x (mask x value) is the same product): the value
/// itself when the probability is 0.
dsl::Expr withAttentionDropout(const dsl::Expr &value, const LayerOptions &options);

} // namespace gnnjit::layers::detail
