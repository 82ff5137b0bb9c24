// A stage's tuning config as JSON and back, for tuning records: every field
// of the family's config struct, and "family" naming which one. Parsing a
// line another version wrote refuses what it does not know.
#pragma once

#include "lower/TuneConfig.h"

#include <nlohmann/json.hpp>

namespace gnnjit::autotune {

nlohmann::json configJson(const lower::StageConfig &config);
/// Throws std::invalid_argument (saying what is wrong) on a missing or
/// mistyped field, or an unknown family.
lower::StageConfig configFromJson(const nlohmann::json &j);

} // namespace gnnjit::autotune
