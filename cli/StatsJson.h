// Degree statistics as JSON, the shape `gnnjit info --json` prints.
#pragma once

#include "graph/DegreeStats.h"

#include <nlohmann/json.hpp>

namespace gnnjit::cli {

/// Degree thresholds whose node counts are reported ("nodes_above").
inline constexpr int64_t kDegreeThresholds[] = {32, 128, 512, 2048};

nlohmann::ordered_json toJson(const graph::DegreeSummary &summary);
nlohmann::ordered_json toJson(const graph::DegreeStats &stats);

} // namespace gnnjit::cli
