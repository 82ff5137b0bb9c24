#include "lower/TuneConfig.h"

#include <fmt/format.h>

namespace gnnjit::lower {

std::string SpmmConfig::print() const {
  if (backend == Backend::Cusparse)
    return cusparseAlgorithm ? fmt::format("cusparse alg{}", cusparseAlgorithm) : "cusparse";
  if (heavyThreshold == 0)
    return fmt::format("group={} vec={} chunks={} block={}", group, vec, chunks, blockThreads);
  return fmt::format("group={} vec={} chunks={} block={} heavy>{} in segments of {} by {} lanes x {} chunks", group,
                     vec, chunks, blockThreads, heavyThreshold, segmentLength, segmentGroup, segmentChunks);
}

} // namespace gnnjit::lower
