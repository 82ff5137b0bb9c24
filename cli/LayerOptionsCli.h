// The layer options every command that builds a library layer takes (run,
// export): --dim, --heads, --aggr, --slope, --eps, --weighted,
// --edge-features, --mean-heads; see layers::LayerOptions.
#pragma once

#include "layers/Library.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace gnnjit::cli {

struct LayerOptionArgs {
  int64_t dim = 16;
  int64_t heads = 1;
  std::string aggregation;
  double slope = 0.2;
  double eps = 0;
  CLI::Option *epsOption = nullptr; ///< set by addLayerOptions; --eps given: a fixed eps
  bool weighted = false;
  bool edgeFeatures = false;
  bool meanHeads = false;

  /// The layers::LayerOptions these arguments ask for.
  layers::LayerOptions options() const;
};

/// Adds the layer options to `command`, bound to `args` (which must outlive
/// parsing). `weightedHelp` replaces the help of --weighted when not empty.
void addLayerOptions(CLI::App &command, LayerOptionArgs &args, std::string_view weightedHelp = {});

} // namespace gnnjit::cli
