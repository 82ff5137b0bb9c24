#include "cli/LayerOptionsCli.h"

#include "dsl/Type.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <vector>

namespace gnnjit::cli {

namespace {

/// A number that must be finite: NaN or infinity as a slope or eps would
/// make every output NaN (a file's NaN weights are refused the same way).
const CLI::Validator kFinite(
    [](std::string &text) {
      char *end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0')
        return std::string(); // not a number: CLI11's conversion says so
      return std::isfinite(v) ? std::string() : fmt::format("{} is not a finite number", text);
    },
    "FINITE");

std::string flagList(const layers::LayerInfo &layer, const std::map<layers::Knob, CLI::Option *> &given) {
  std::vector<std::string> flags;
  for (const auto &[knob, option] : given)
    if (layers::takes(layer, knob))
      flags.push_back(option->get_name());
  return fmt::format("{}", fmt::join(flags, ", "));
}

} // namespace

layers::LayerOptions LayerOptionArgs::options(const layers::LayerInfo &layer) const {
  for (const auto &[knob, option] : given)
    if (option->count() > 0 && !layers::takes(layer, knob))
      throwUserError("layer '{}' has no option {}; it takes {} (`gnnjit layers {}` describes them)", layer.name,
                     option->get_name(), flagList(layer, given), layer.name);
  layers::LayerOptions o;
  o.dim = dim;
  o.heads = heads;
  o.aggregation = aggregation;
  o.negativeSlope = slope;
  if (auto it = given.find(layers::Knob::Eps); it != given.end() && it->second->count() > 0) {
    o.trainEps = false;
    o.eps = eps;
  }
  o.weighted = weighted;
  o.edgeFeatures = edgeFeatures;
  o.concat = !meanHeads;
  o.attentionDropout = attentionDropout;
  o.bipartite = bipartite;
  return o;
}

void addLayerOptions(CLI::App &cmd, LayerOptionArgs &args, std::string_view weightedHelp) {
  using layers::Knob;
  const auto width = CLI::Range(int64_t{1}, dsl::kMaxShapeSize);
  args.given[Knob::Dim] = cmd.add_option("--dim", args.dim, "Features per head (PyG out_channels), or the feature width")
                              ->check(width)
                              ->capture_default_str();
  args.given[Knob::Heads] =
      cmd.add_option("--heads", args.heads, "Attention heads (attention layers only)")->check(width)->capture_default_str();
  args.given[Knob::Aggregation] =
      cmd.add_option("--aggr", args.aggregation, "Aggregation for layers that offer one: sum, mean, max, min");
  args.given[Knob::NegativeSlope] =
      cmd.add_option("--slope", args.slope, "LeakyReLU negative slope (gat, gatv2)")->check(kFinite)->capture_default_str();
  args.given[Knob::Eps] =
      cmd.add_option("--eps", args.eps, "GIN: a fixed eps (default: eps is a parameter input)")->check(kFinite);
  args.given[Knob::Weighted] = cmd.add_flag("--weighted", args.weighted,
                                            weightedHelp.empty() ? std::string("gcn, graphconv: use the graph's edge weights")
                                                                 : std::string(weightedHelp));
  args.given[Knob::EdgeFeatures] =
      cmd.add_flag("--edge-features", args.edgeFeatures, "gat, gatv2, transformer: add the edge input e");
  args.given[Knob::Concat] =
      cmd.add_flag("--mean-heads", args.meanHeads, "Average heads instead of concatenating (PyG concat=False)");
  args.given[Knob::AttentionDropout] =
      cmd.add_option("--attention-dropout", args.attentionDropout,
                     "gat, gatv2, transformer: drop attention coefficients with this probability (PyG dropout), "
                     "drawn from each call's seed (run: --seed)")
          ->check(CLI::Range(0.0, 0.999999))
          ->capture_default_str();
  args.given[Knob::Bipartite] = cmd.add_flag(
      "--bipartite", args.bipartite, "gat, gin: destinations' features are an input of their own, x_dst");
}

} // namespace gnnjit::cli
