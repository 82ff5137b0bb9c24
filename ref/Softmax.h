// The per-destination statistics of an edge softmax, computed once per
// softmax node so every edge's alpha is then exp(s_e - max) / sum.
#pragma once

#include "ref/Evaluator.h"

namespace gnnjit::ref {

/// Per (destination, head): the max score over the edges into it and the
/// sum of exp(score - max), each score evaluated once and both taken over
/// the row's buffered scores, so the sum never overflows. A node with no
/// incoming edge keeps max 0, sum 1 (no edge reads them).
SoftmaxStats computeSoftmaxStats(const dsl::EdgeSoftmax &softmax, const Evaluator &evaluator);

} // namespace gnnjit::ref
