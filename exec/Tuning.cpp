#include "exec/Tuning.h"

#include "support/Error.h"

#include <algorithm>

namespace gnnjit::exec {

namespace {

int nextPowerOfTwo(int64_t n) {
  int p = 1;
  while (p < n && p < 32)
    p *= 2;
  return p;
}

} // namespace

SpmmChoice chooseSpmm(const TuningInputs &in) {
  SpmmChoice choice;
  if (in.variant == Variant::Cusparse && in.cusparsePossible) {
    choice.cusparse = true;
    return choice;
  }
  codegen::SpmmTuning &t = choice.tuning;
  // Widest vector the rows allow: 16-byte loads need 4-aligned widths.
  t.vec = !in.alignedGather ? 1 : in.width % 4 == 0 ? 4 : in.width % 2 == 0 ? 2 : 1;
  // Enough lanes to cover the row once, at most a warp; wide rows take
  // several vectors per lane (chunks), the rest go to more tiles (grid y).
  const int64_t vectors = (in.width + t.vec - 1) / t.vec;
  t.group = nextPowerOfTwo(vectors);
  t.chunks = static_cast<int>(std::min<int64_t>(4, (vectors + t.group - 1) / t.group));
  t.blockThreads = 256;
  // Rows much longer than typical would keep one group busy long after the
  // rest finished: split them into segments.
  const int64_t maxDegree = in.degrees ? in.degrees->max : 0;
  const int64_t threshold = 256;
  t.heavyThreshold = maxDegree > threshold ? threshold : 0;
  return choice;
}

} // namespace gnnjit::exec
