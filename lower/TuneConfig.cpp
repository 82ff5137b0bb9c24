#include "lower/TuneConfig.h"

#include <fmt/format.h>

namespace gnnjit::lower {

std::string RowTiling::print() const {
  if (heavyThreshold == 0)
    return fmt::format("group={} vec={} chunks={} block={}", group, vec, chunks, blockThreads);
  return fmt::format("group={} vec={} chunks={} block={} heavy>{} in segments of {} by {} lanes x {} chunks", group,
                     vec, chunks, blockThreads, heavyThreshold, segmentLength, segmentGroup, segmentChunks);
}

std::string SpmmConfig::print() const {
  if (backend == Backend::Cusparse)
    return cusparseAlgorithm ? fmt::format("cusparse alg{}", cusparseAlgorithm) : "cusparse";
  return RowTiling::print();
}

PassConfig unalignedConfig(PassConfig config) {
  for (StageConfig &stage : config.stages) {
    if (auto *attention = std::get_if<AttentionConfig>(&stage); attention && attention->vec > 1) {
      // The same tiles in floats, so heads stay whole: V times the chunks.
      attention->chunks *= attention->vec;
      attention->segmentChunks *= attention->vec;
      attention->vec = 1;
    }
    if (auto *spmm = std::get_if<SpmmConfig>(&stage))
      spmm->vec = 1;
    if (auto *reduction = std::get_if<ReductionConfig>(&stage))
      reduction->vec = 1;
  }
  return config;
}

StageConfig normalized(StageConfig config) {
  std::visit(
      [](auto &c) {
        if constexpr (std::is_base_of_v<RowTiling, std::decay_t<decltype(c)>>)
          c = normalized(c);
      },
      config);
  return config;
}

std::string AttentionConfig::print() const {
  return fmt::format("{} range_edges={}{}{}", RowTiling::print(), rangeEdges, fuseBackward ? " fused-backward" : "",
                     paddedDim > 0 ? fmt::format(" heads padded to {}", paddedDim) : std::string());
}

} // namespace gnnjit::lower
