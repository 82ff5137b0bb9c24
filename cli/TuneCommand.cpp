#include "cli/TuneCommand.h"

#include "autotune/Candidates.h"
#include "autotune/Fingerprint.h"
#include "autotune/Records.h"
#include "cli/GraphOptions.h"
#include "cli/LayerOptionsCli.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/KernelCache.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace gnnjit::cli {

namespace {

struct TuneArgs {
  std::string layer = "gcn";
  LayerOptionArgs layerArgs;
  GraphArgs graph;
  bool list = false;
  bool exhaustive = false;
  bool json = false;
};

nlohmann::json spaceJson(const autotune::StageSpace &s) {
  nlohmann::json kept = nlohmann::json::array(), pruned = nlohmann::json::array();
  for (const autotune::Candidate &c : s.kept)
    kept.push_back(c.label);
  for (const autotune::PrunedCandidate &p : s.pruned)
    pruned.push_back({{"config", p.candidate.label}, {"why", p.why}});
  return {{"stage", s.stage}, {"aggregation", s.what}, {"rule", s.rule.label}, {"candidates", kept},
          {"pruned", pruned}};
}

void run(const TuneArgs &args) {
  const layers::LayerInfo &info = layers::findLayer(args.layer);
  const dsl::Layer layer = info.build(args.layerArgs.options(info));
  const LoadedGraph loaded = loadGraph(args.graph);
  const graph::Graph &g = loaded.graph;
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  const exec::GraphFacts facts = exec::graphFacts(g);
  const autotune::GraphFingerprint print = autotune::fingerprint(g);
  const autotune::RecordStore store = autotune::RecordStore::inCacheFolder(runtime::defaultCacheDir());
  nlohmann::json out = {{"layer", info.name},
                        {"layer_hash", layer.hashHex()},
                        {"graph", g.name()},
                        {"fingerprint", print.key()},
                        {"records", store.file().string()},
                        {"passes", nlohmann::json::object()}};
  if (!args.json)
    fmt::print("tune {} ({}) on {}: fingerprint {}\nrecords: {}\n", info.name, layer.hashHex(), g.name(), print.key(),
               store.file().string());
  for (lower::Pass pass : {lower::Pass::Forward, lower::Pass::Backward}) {
    const std::vector<autotune::StageSpace> spaces =
        autotune::candidateSpaces(lowered, pass, facts, exec::RuleOptions{}, args.exhaustive);
    nlohmann::json stages = nlohmann::json::array();
    for (const autotune::StageSpace &s : spaces) {
      stages.push_back(spaceJson(s));
      if (args.json)
        continue;
      fmt::print("\n{} stage {}: {}\n  rule: {}\n  {} candidates:\n", lower::passName(pass), s.stage, s.what,
                 s.rule.label, s.kept.size());
      for (const autotune::Candidate &c : s.kept)
        fmt::print("    {}\n", c.label);
      fmt::print("  {} pruned{}\n", s.pruned.size(), s.pruned.empty() ? "" : ":");
      for (const autotune::PrunedCandidate &p : s.pruned)
        fmt::print("    {}: {}\n", p.candidate.label, p.why);
    }
    out["passes"][std::string(lower::passName(pass))] = std::move(stages);
  }
  if (args.json)
    fmt::print("{}\n", out.dump(2));
}

} // namespace

void addTuneCommand(CLI::App &app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App *cmd = app.add_subcommand(
      "tune", "List the autotuner's candidate kernel configs for a layer on a graph, pruned by a model of its degrees "
              "(no GPU needed)");
  cmd->add_option("--layer", args->layer, "Library layer name (see `gnnjit layers`)")->capture_default_str();
  addLayerOptions(*cmd, args->layerArgs);
  addGraphOptions(*cmd, args->graph, GraphArgStyle::Flag);
  cmd->add_flag("--list", args->list,
                "Print the candidates of every stage without timing them (required: timing on the GPU is the "
                "autotuner's next part)")
      ->required();
  cmd->add_flag("--exhaustive", args->exhaustive, "Keep the candidates the model would prune");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  cmd->callback([args] { run(*args); });
}

} // namespace gnnjit::cli
