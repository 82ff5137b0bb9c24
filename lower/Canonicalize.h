// Pass 1: one node per distinct computation, constants folded, identities
// (x * 1, x + 0, x - 0, x / 1) removed, so later passes see each value once.
#pragma once

#include "dsl/Layer.h"

namespace gnnjit::lower {

dsl::Layer canonicalize(const dsl::Layer &layer);

} // namespace gnnjit::lower
