// Pass 4: differentiates the layer and classifies every aggregation of the
// backward plan into the same three families (SpMM backward is an SpMM on
// the transpose, max backward reads the saved arg index, attention backward
// recomputes alpha from the saved log-sum-exp).
#pragma once

#include "lower/Stages.h"

namespace gnnjit::lower {

BackwardStages planBackward(const dsl::Layer &layer);

} // namespace gnnjit::lower
