// The autotuner's benchmark: for each graph, layer and width, the pass
// times under the rule's config, under the config a budgeted search picks
// (the default pruning and budget, as `gnnjit tune`), and under the best of
// an exhaustive search (no pruning, a long budget), with the tuning's wall
// time and how much of it compiling took. Prints a table and the autotuner
// issue's goals (tuned within 5 % of the exhaustive best, never slower than
// the rule, tuning in <= 3 s).
#include "BenchSupport.h"
#include "LayerSpec.h"

#include "autotune/Rule.h"
#include "autotune/TuneLayer.h"
#include "codegen/Version.h"
#include "runtime/Device.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace gnnjit;

namespace {

struct Options {
  std::vector<std::string> graphs = {"rmat:scale=20,ef=16,seed=0", "grid:side=1024", "grid:side=2100",
                                     "er:n=100000,deg=100,seed=0", "tolokers"};
  /// name[:aggregation][/heads]
  std::vector<std::string> layers = {"gcn", "sage:max", "gatv2/4"};
  std::vector<int64_t> widths = {32, 128, 490};
  double budgetSeconds = 3.0, exhaustiveBudgetSeconds = 120.0;
  bool exhaustive = true;
  bool warmCache = false;
  std::string jsonPath;
};

/// Each stage's winner, "rule" where it is the rule's config.
std::string winners(const autotune::TunedLayerPass &p) {
  std::string out;
  for (const autotune::TunedStage &s : p.tuned.stages) {
    const autotune::Candidate &c = s.timed[s.best].candidate;
    std::string stages = fmt::format("{}", s.stage);
    for (size_t k : s.tied)
      stages += fmt::format("+{}", k);
    out += fmt::format("{}[{}] {}", out.empty() ? "" : "; ", stages,
                       c.config == p.rule.stages[s.stage] ? std::string("rule") : c.label);
  }
  for (const autotune::TimedCandidate &v : p.tuned.variants)
    if (v.ms < autotune::kUntimed && v.ms <= p.tunedMs())
      out += "; " + v.candidate.label;
  return out;
}

/// Where a tuning's wall time went: planning, each pass's setup, its
/// timings (the longest named) and the waits for compiles between them,
/// and the compiles under way at the end.
std::string timeline(const autotune::TunedLayer &t) {
  std::string out = fmt::format("plan {:.2f}", t.planSeconds);
  for (const autotune::TunedLayerPass &p : t.passes) {
    double timings = 0;
    int count = 0;
    const autotune::TimedCandidate *longest = nullptr;
    auto add = [&](const autotune::TimedCandidate &c) {
      if (c.seconds <= 0)
        return;
      timings += c.seconds;
      ++count;
      if (!longest || c.seconds > longest->seconds)
        longest = &c;
    };
    for (const auto &[config, c] : p.memory.timed)
      add(c);
    out += fmt::format(" | {}: setup {:.2f}, {} timings {:.2f}", lower::passName(p.pass), p.setupSeconds, count,
                       timings);
    if (longest)
      out += fmt::format(" (longest {:.2f}, its check {:.2f}, at {:.2f}: {})", longest->seconds,
                         longest->checkSeconds, longest->began,
                         longest->candidate.label.empty() ? "the stages' winners" : longest->candidate.label);
    out += fmt::format(", waits {:.2f}", std::max(0.0, p.searchSeconds - timings));
  }
  return out + fmt::format(" | stop {:.2f}", t.stopSeconds);
}

std::string ms(double v) { return v < autotune::kUntimed ? fmt::format("{:9.3f}", v) : "      inf"; }

struct Goals {
  int cases = 0, within5 = 0, notSlower = 0, fast = 0;
};

void runCase(const Options &o, const std::string &spec, const graph::Graph &g, exec::DeviceGraph &device,
             const bench::LayerSpec &layer, int64_t width, Goals &goals, std::ofstream *json) {
  int64_t dim = 0;
  const lower::LoweredLayer l = bench::lowered(layer, width, dim);
  const autotune::GraphFacts facts = autotune::graphFacts(g);
  // A new (graph, layer, width) as a user meets it: no kernel compiled yet,
  // in memory or on disk (unless --warm-cache). The exhaustive search then
  // reuses what the tuning compiled.
  const std::filesystem::path cacheDir =
      std::filesystem::temp_directory_path() / fmt::format("gnnjit-bench-autotune-{}", getpid());
  std::filesystem::remove_all(cacheDir);
  runtime::KernelCache cold(runtime::KernelCacheConfig{cacheDir, codegen::kGeneratorVersion});
  autotune::LayerTuneOptions pruned;
  pruned.budgetSeconds = o.budgetSeconds;
  pruned.cache = o.warmCache ? nullptr : &cold;
  const autotune::TunedLayer tuned = autotune::tuneLayer(l, device, facts, pruned);
  autotune::TunedLayer exhaustive;
  if (o.exhaustive) {
    autotune::LayerTuneOptions all;
    all.exhaustive = true;
    all.budgetSeconds = o.exhaustiveBudgetSeconds;
    all.cache = pruned.cache;
    exhaustive = autotune::tuneLayer(l, device, facts, all);
  }
  std::filesystem::remove_all(cacheDir);
  const std::string label = layer.name + (layer.aggregation.empty() ? "" : "-" + layer.aggregation);
  const double compile = tuned.compiling.busySeconds;
  for (size_t k = 0; k < tuned.passes.size(); ++k) {
    const autotune::TunedLayerPass &p = tuned.passes[k];
    const double rule = p.ruleMs(), best = p.tunedMs();
    const double all = o.exhaustive ? std::min(exhaustive.passes[k].tunedMs(), best) : autotune::kUntimed;
    int timed = 0, total = 0;
    for (const autotune::TunedStage &s : p.tuned.stages)
      for (const autotune::TimedCandidate &t : s.timed) {
        timed += t.ms < autotune::kUntimed ? 1 : 0;
        ++total;
      }
    ++goals.cases;
    goals.within5 += o.exhaustive && best <= 1.05 * all ? 1 : 0;
    goals.notSlower += best <= rule ? 1 : 0;
    goals.fast += tuned.seconds <= 3.0 ? 1 : 0;
    std::printf("%-28s %-10s %4lld %-3s %s %s %s %8.3f %8.3f %7.2f (%5.2f) %4d/%-4d %7.2f\n", spec.c_str(),
                label.c_str(), (long long)(layer.heads * dim), std::string(lower::passName(p.pass)).c_str(),
                ms(rule).c_str(), ms(best).c_str(), ms(all).c_str(), rule / best, o.exhaustive ? best / all : 0.0,
                tuned.seconds, compile, timed, total, o.exhaustive ? exhaustive.seconds : 0.0);
    std::printf("    tuned: %s\n", winners(p).c_str());
    if (k == 0)
      std::printf("    seconds: %s\n", timeline(tuned).c_str());
    if (o.exhaustive)
      std::printf("    exhaustive: %s\n", winners(exhaustive.passes[k]).c_str());
    if (json)
      *json << nlohmann::json{{"graph", spec},
                              {"layer", label},
                              {"width", layer.heads * dim},
                              {"heads", layer.heads},
                              {"pass", lower::passName(p.pass)},
                              {"rule_ms", rule},
                              {"tuned_ms", best},
                              {"exhaustive_ms", o.exhaustive ? nlohmann::json(all) : nlohmann::json(nullptr)},
                              {"tuning_seconds", tuned.seconds},
                              {"setup_seconds", p.setupSeconds},
                              {"search_seconds", p.searchSeconds},
                              {"seconds_spent", timeline(tuned)},
                              {"compile_seconds", compile},
                              {"modules_compiled", tuned.compiling.compiled},
                              {"modules_queued", tuned.compiling.queued},
                              {"modules_dropped", tuned.compiling.dropped},
                              {"timed", timed},
                              {"candidates", total},
                              {"exhaustive_seconds", exhaustive.seconds},
                              {"tuned_winners", winners(p)},
                              {"exhaustive_winners", o.exhaustive ? winners(exhaustive.passes[k]) : ""}}
                   .dump()
            << std::endl; // kept if a later case is cut short
  }
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"The autotuner on the GPU: rule, tuned and exhaustive pass times, and the tuning time"};
  app.add_option("graphs", o.graphs, "graphs (GRAPH specs)");
  app.add_option("--layers", o.layers, "layers as name[:aggregation][/heads]")->capture_default_str();
  app.add_option("--widths", o.widths, "feature widths F (heads x features per head)")->capture_default_str();
  app.add_option("--budget-s", o.budgetSeconds, "the tuned search's budget (as gnnjit tune)")->capture_default_str();
  app.add_option("--exhaustive-budget-s", o.exhaustiveBudgetSeconds, "the exhaustive search's budget")
      ->capture_default_str();
  app.add_flag("!--no-exhaustive", o.exhaustive, "skip the exhaustive search");
  app.add_flag("--warm-cache", o.warmCache,
               "tune with the process's kernel cache (kernels compiled for earlier cases, or on disk, are reused); by "
               "default each case starts from an empty cache, as a new graph, layer and width would");
  app.add_option("--json", o.jsonPath, "also write one JSON line per pass here");
  CLI11_PARSE(app, argc, argv);
  if (!runtime::hasCudaDevice()) {
    std::printf("SKIPPED: no CUDA device; bench_autotune times kernels on a GPU\n");
    return 0;
  }
  std::ofstream json;
  if (!o.jsonPath.empty())
    json.open(o.jsonPath, std::ios::app);
  Goals goals;
  for (const std::string &spec : o.graphs) {
    const graph::Graph g = bench::loadBenchGraph(spec, "");
    exec::DeviceGraph device(g);
    std::printf("%-28s %-10s %4s %-3s %9s %9s %9s %8s %8s %7s %7s %9s %7s\n", "graph", "layer", "F", "pass", "rule ms",
                "tuned ms", "exh. ms", "rule/tun", "tun/exh", "tune s", "(comp.)", "timed", "exh. s");
    for (const std::string &layerSpec : o.layers)
      for (int64_t width : o.widths) {
        try {
          runCase(o, spec, g, device, bench::parseLayer(layerSpec), width, goals, json.is_open() ? &json : nullptr);
        } catch (const std::exception &e) {
          std::printf("%-28s %-10s %4lld failed: %s\n", spec.c_str(), layerSpec.c_str(), (long long)width, e.what());
        }
      }
  }
  std::printf("\ngoals over %d passes: tuned within 5%% of the exhaustive best %d; not slower than the rule %d; "
              "the layer tuned in <= 3 s %d\n",
              goals.cases, goals.within5, goals.notSlower, goals.fast);
  return 0;
}
