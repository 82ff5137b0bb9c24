#include "cli/TuneCommand.h"

#include "autotune/Candidates.h"
#include "autotune/Fingerprint.h"
#include "autotune/Records.h"
#include "autotune/TuneLayer.h"
#include "autotune/Tuner.h"
#include "cli/GraphOptions.h"
#include "cli/LayerOptionsCli.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/Device.h"
#include "runtime/KernelCache.h"
#include "support/Error.h"

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
  double budgetSeconds = 3.0;
  std::string records; ///< empty: under the kernel cache folder
  bool json = false;
};

nlohmann::json spaceJson(const autotune::StageSpace &s) {
  nlohmann::json kept = nlohmann::json::array(), pruned = nlohmann::json::array();
  for (const autotune::Candidate &c : s.kept)
    kept.push_back(c.label);
  for (const autotune::PrunedCandidate &p : s.pruned)
    pruned.push_back({{"config", p.candidate.label}, {"why", p.why}});
  return {{"stage", s.stage}, {"tied_stages", s.tied}, {"aggregation", s.what}, {"rule", s.rule.label},
          {"candidates", kept},   {"pruned", pruned}};
}

nlohmann::json tunedJson(const autotune::TunedStage &s) {
  nlohmann::json timed = nlohmann::json::array();
  for (const autotune::TimedCandidate &t : s.timed) {
    nlohmann::json c = {{"config", t.candidate.label}};
    if (t.ms < autotune::kUntimed)
      c["ms"] = t.ms;
    else
      c["why"] = t.failure;
    timed.push_back(std::move(c));
  }
  const double best = s.timed.empty() ? autotune::kUntimed : s.timed[s.best].ms;
  nlohmann::json j = {{"stage", s.stage}, {"tied_stages", s.tied}, {"aggregation", s.what}, {"candidates", timed}};
  if (best < autotune::kUntimed && s.ruleMs < autotune::kUntimed) {
    j["winner"] = s.timed[s.best].candidate.label;
    j["ms"] = best;
    j["rule_ms"] = s.ruleMs;
    j["speedup_over_rule"] = s.ruleMs / best;
  }
  return j;
}

void printTuned(const autotune::TunedStage &s, lower::Pass pass) {
  fmt::print("\n{} stage {}: {}\n", lower::passName(pass), s.stage, s.what);
  for (size_t k = 0; k < s.timed.size(); ++k) {
    const autotune::TimedCandidate &t = s.timed[k];
    const std::string time = t.ms < autotune::kUntimed ? fmt::format("{:9.4f} ms", t.ms) : "       inf   ";
    fmt::print("  {}{} {}{}\n", k == s.best ? "* " : "  ", time, t.candidate.label,
               t.failure.empty() ? "" : "  (" + t.failure + ")");
  }
  if (!s.timed.empty() && s.timed[s.best].ms < autotune::kUntimed && s.ruleMs < autotune::kUntimed)
    fmt::print("  winner {:.4f} ms, the rule's {:.4f} ms: {:.2f}x\n", s.timed[s.best].ms, s.ruleMs,
               s.ruleMs / s.timed[s.best].ms);
}

/// Times every pass's candidates on the GPU, prints them, records the winners.
void tune(const TuneArgs &args, const layers::LayerOptions &options, const dsl::Layer &layer,
          const lower::LoweredLayer &lowered, const graph::Graph &g, const autotune::GraphFacts &facts,
          const autotune::GraphFingerprint &print, const autotune::RecordStore &store, nlohmann::json &out) {
  exec::DeviceGraph device(g);
  autotune::LayerTuneOptions tuneOptions;
  tuneOptions.budgetSeconds = args.budgetSeconds;
  tuneOptions.exhaustive = args.exhaustive;
  const autotune::TunedLayer tunedLayer = autotune::tuneLayer(lowered, device, facts, tuneOptions);
  autotune::recordTuned(tunedLayer,
                        autotune::keyOnThisDevice(layer.hashHex(), print.key(), options.dim, options.heads), store);
  for (const autotune::TunedLayerPass &p : tunedLayer.passes) {
    const autotune::TunedPass &tuned = p.tuned;
    const std::string pass(lower::passName(p.pass));
    nlohmann::json stages = nlohmann::json::array();
    for (const autotune::TunedStage &s : tuned.stages) {
      stages.push_back(tunedJson(s));
      if (!args.json)
        printTuned(s, p.pass);
    }
    nlohmann::json variants = nlohmann::json::array();
    for (const autotune::TimedCandidate &v : tuned.variants) {
      variants.push_back({{"variant", v.candidate.label}, {"ms", v.ms < autotune::kUntimed ? nlohmann::json(v.ms) : nlohmann::json(nullptr)},
                          {"why", v.failure}, {"stage_winners_ms", tuned.stagesMs}});
      if (!args.json)
        fmt::print("\n{} pass variant {}: {} (the stages' winners together: {:.4f} ms)\n", pass, v.candidate.label,
                   v.ms < autotune::kUntimed ? fmt::format("{:.4f} ms", v.ms) : v.failure, tuned.stagesMs);
    }
    out["setup_seconds"][pass] = p.setupSeconds;
    if (!args.json)
      fmt::print("\n{} timer set up in {:.2f} s (inputs, the rule's kernels, two runs)\n", pass, p.setupSeconds);
    out["passes"][pass] = std::move(stages);
    out["pass_variants"][pass] = std::move(variants);
  }
  const autotune::Precompiler::Report &c = tunedLayer.compiling;
  out["tuning_seconds"] = tunedLayer.seconds;
  out["compiling"] = {{"modules_queued", c.queued},
                      {"compiled", c.compiled},
                      {"failed", c.failed},
                      {"dropped", c.dropped},
                      {"busy_seconds", c.busySeconds}};
  if (!args.json)
    fmt::print("\ntuned in {:.2f} s; beside the search NVRTC compiled {} of {} distinct modules ({} failed, {} not started "
               "within the budget, the rest in the kernel cache) over {:.2f} s; records appended to {}\n",
               tunedLayer.seconds, c.compiled, c.queued, c.failed, c.dropped, c.busySeconds, store.file().string());
}

void run(const TuneArgs &args) {
  if (!args.list && !runtime::hasCudaDevice())
    throwUserError("gnnjit tune times candidates on a CUDA device and none was found; --list prints them without one");
  const layers::LayerInfo &info = layers::findLayer(args.layer);
  const layers::LayerOptions options = args.layerArgs.options(info);
  const dsl::Layer layer = info.build(options);
  const LoadedGraph loaded = loadGraph(args.graph);
  const graph::Graph &g = loaded.graph;
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  const autotune::GraphFacts facts = autotune::graphFacts(g);
  const autotune::GraphFingerprint print = autotune::fingerprint(g);
  const autotune::RecordStore store = args.records.empty()
                                          ? autotune::RecordStore::inCacheFolder(runtime::defaultCacheDir())
                                          : autotune::RecordStore(args.records);
  nlohmann::json out = {{"layer", info.name},
                        {"layer_hash", layer.hashHex()},
                        {"graph", g.name()},
                        {"fingerprint", print.key()},
                        {"records", store.file().string()},
                        {"passes", nlohmann::json::object()}};
  if (!args.json)
    fmt::print("tune {} ({}) on {}: fingerprint {}\nrecords: {}\n", info.name, layer.hashHex(), g.name(), print.key(),
               store.file().string());
  if (!args.list) {
    tune(args, options, layer, lowered, g, facts, print, store, out);
    if (args.json)
      fmt::print("{}\n", out.dump(2));
    return;
  }
  autotune::ProgramCache programs(lowered);
  for (lower::Pass pass : {lower::Pass::Forward, lower::Pass::Backward}) {
    const std::vector<autotune::StageSpace> spaces =
        autotune::candidateSpaces(programs, pass, facts, autotune::RuleOptions{}, args.exhaustive);
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
    const std::vector<lower::PassConfig> trials =
        autotune::trialConfigs(spaces, autotune::ruleConfig(lowered, pass, facts, autotune::RuleOptions{}));
    const size_t modules = autotune::distinctModules(spaces).size();
    out["compile"][std::string(lower::passName(pass))] = {{"configs", trials.size()}, {"modules", modules}};
    if (!args.json)
      fmt::print("\n{}: {} configs to time, {} distinct kernel modules to compile for them\n", lower::passName(pass),
                 trials.size(), modules);
    nlohmann::json variants = nlohmann::json::array();
    for (const autotune::PassVariant &v :
         autotune::passVariants(pass, autotune::ruleConfig(lowered, pass, facts, autotune::RuleOptions{}))) {
      variants.push_back(v.label);
      if (!args.json)
        fmt::print("\n{} pass variant (timed on the stages' winners): {}\n", lower::passName(pass), v.label);
    }
    out["pass_variants"][std::string(lower::passName(pass))] = std::move(variants);
  }
  if (args.json)
    fmt::print("{}\n", out.dump(2));
}

} // namespace

void addTuneCommand(CLI::App &app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App *cmd = app.add_subcommand(
      "tune", "Time the autotuner's candidate kernel configs of a layer on a graph on the GPU and record the fastest "
              "per stage (--list: only list them, pruned by a model of the degrees; no GPU needed)");
  cmd->add_option("--layer", args->layer, "Library layer name (see `gnnjit layers`)")->capture_default_str();
  addLayerOptions(*cmd, args->layerArgs);
  addGraphOptions(*cmd, args->graph, GraphArgStyle::Flag);
  cmd->add_flag("--list", args->list, "Print the candidates of every stage without timing them (no GPU needed)");
  cmd->add_flag("--exhaustive", args->exhaustive, "Keep (and time) the candidates the model would prune");
  cmd->add_option("--records", args->records,
                  "The tuning records file to append to (default: tuning/records.jsonl under the kernel cache "
                  "folder: $GNNJIT_CACHE_DIR, else $XDG_CACHE_HOME/gnnjit, else ~/.cache/gnnjit)");
  cmd->add_option("--budget-s", args->budgetSeconds,
                  "Seconds the whole call may take: no compile or candidate starts unless it is expected to end "
                  "within them (a stage whose rule config cannot be timed in time keeps it, unrecorded)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object instead of text");
  cmd->callback([args] { run(*args); });
}

} // namespace gnnjit::cli
