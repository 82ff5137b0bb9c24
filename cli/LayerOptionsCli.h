// The layer options every command that builds a library layer takes (run,
// export): --dim, --heads, --aggr, --slope, --eps, --weighted,
// --edge-features, --mean-heads, --attention-dropout; see layers::LayerOptions.
#pragma once

#include "layers/Library.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gnnjit::cli {

struct LayerOptionArgs {
  int64_t dim = 16;
  int64_t heads = 1;
  std::string aggregation;
  double slope = 0.2;
  double eps = 0;
  bool weighted = false;
  bool edgeFeatures = false;
  bool meanHeads = false;
  double attentionDropout = 0;
  bool bipartite = false;
  /// Set by addLayerOptions: the option of each knob, to tell which were given.
  std::map<layers::Knob, CLI::Option *> given;

  /// The layers::LayerOptions these arguments ask for, after checking that
  /// `layer` reads every option given (a UserError listing the options it
  /// takes otherwise).
  layers::LayerOptions options(const layers::LayerInfo &layer) const;
};

/// Adds the layer options to `command`, bound to `args` (which must outlive
/// parsing). `weightedHelp` replaces the help of --weighted when not empty.
void addLayerOptions(CLI::App &command, LayerOptionArgs &args, std::string_view weightedHelp = {});

} // namespace gnnjit::cli
