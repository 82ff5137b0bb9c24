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
  const int64_t vectors = (in.width + t.vec - 1) / t.vec;
  auto chunksFor = [&](int group) { return static_cast<int>(std::min<int64_t>(8, (vectors + group - 1) / group)); };
  // Long rows: a group wide enough to cover the row once (at most a warp);
  // wider rows take several vectors per lane (chunks), then more tiles.
  t.segmentGroup = nextPowerOfTwo(vectors);
  t.segmentChunks = chunksFor(t.segmentGroup);
  t.segmentLength = 256;
  // Typical rows: a group about as wide as the median row is long, so a
  // warp serves several short rows at once and has their gathers in flight
  // together (H200, F = 128: 4 lanes per row on a 2-D grid ran 1.5x faster
  // than a warp per row; a warp per row won on rows of ~100 edges).
  const int64_t median = in.degrees ? std::max<int64_t>(1, in.degrees->p50) : 32;
  t.group = in.group > 0 ? in.group : std::min(t.segmentGroup, std::max(4, nextPowerOfTwo(median)));
  t.group = std::min(t.group, t.segmentGroup);
  t.chunks = chunksFor(t.group);
  t.blockThreads = 256;
  // Rows much longer than the group is wide go to the segment kernels.
  const int64_t threshold = in.heavyThreshold > 0 ? in.heavyThreshold : 8 * static_cast<int64_t>(t.group);
  const int64_t maxDegree = in.degrees ? in.degrees->max : 0;
  t.heavyThreshold = maxDegree > threshold ? threshold : 0;
  return choice;
}

} // namespace gnnjit::exec
