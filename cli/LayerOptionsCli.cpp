#include "cli/LayerOptionsCli.h"

namespace gnnjit::cli {

layers::LayerOptions LayerOptionArgs::options() const {
  layers::LayerOptions o;
  o.dim = dim;
  o.heads = heads;
  o.aggregation = aggregation;
  o.negativeSlope = slope;
  if (epsOption && epsOption->count() > 0) {
    o.trainEps = false;
    o.eps = eps;
  }
  o.weighted = weighted;
  o.edgeFeatures = edgeFeatures;
  o.concat = !meanHeads;
  return o;
}

void addLayerOptions(CLI::App &cmd, LayerOptionArgs &args, std::string_view weightedHelp) {
  cmd.add_option("--dim", args.dim, "Features per head (PyG out_channels), or the feature width")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--heads", args.heads, "Attention heads (attention layers only)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--aggr", args.aggregation, "Aggregation for layers that offer one: sum, mean, max, min");
  cmd.add_option("--slope", args.slope, "LeakyReLU negative slope (gat, gatv2)")->capture_default_str();
  args.epsOption = cmd.add_option("--eps", args.eps, "GIN: a fixed eps (default: eps is a parameter input)");
  cmd.add_flag("--weighted", args.weighted,
               weightedHelp.empty() ? std::string("gcn, graphconv: use the graph's edge weights")
                                    : std::string(weightedHelp));
  cmd.add_flag("--edge-features", args.edgeFeatures, "gat, gatv2, transformer: add the edge input e");
  cmd.add_flag("--mean-heads", args.meanHeads, "Average heads instead of concatenating (PyG concat=False)");
}

} // namespace gnnjit::cli
