#include "autotune/TuneLayer.h"

#include "autotune/GpuTimer.h"
#include "support/Error.h"
#include "support/Stopwatch.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <thread>

namespace gnnjit::autotune {

double TunedLayerPass::ruleMs() const { return tuned.stages.empty() ? kUntimed : tuned.stages.front().ruleMs; }

double TunedLayerPass::tunedMs() const {
  if (tuned.config == rule)
    return ruleMs(); // the same kernels; a later stage's timing of them is only noise
  // Each stage is timed with the earlier ones at their best, so the last
  // stage's winner is the whole tuned pass; a variant replaces it when faster.
  double ms = tuned.stages.empty() || tuned.stages.back().timed.empty()
                  ? kUntimed
                  : tuned.stages.back().timed[tuned.stages.back().best].ms;
  for (const TimedCandidate &v : tuned.variants)
    ms = std::min(ms, v.ms);
  return ms;
}

namespace {

/// The modules of `config` for `pass`, as the GPU timer's runner loads them.
std::vector<runtime::Source> sourcesOf(const lower::LoweredLayer &lowered, const graph::Graph &graph, lower::Pass pass,
                                       const lower::PassConfig &config) {
  exec::RunnerOptions o; // the cache plays no part in a module's source
  (pass == lower::Pass::Forward ? o.forward : o.backward) = config;
  return exec::programSources(lowered, graph, pass, o);
}

/// Plans every candidate of both passes on a thread of its own and queues
/// their modules, in the order the search meets them; stops early when
/// told, and is joined however the tuning ends.
class CandidateFeeder {
public:
  CandidateFeeder(const lower::LoweredLayer &lowered, const graph::Graph &graph,
                  const std::vector<TunedLayerPass> &passes,
                  const std::array<std::vector<PassVariant>, 2> &variants, Precompiler &compiler)
      : thread_([&, this] {
          for (size_t k = 0; k < passes.size(); ++k) {
            std::vector<lower::PassConfig> trials = trialConfigs(passes[k].spaces, passes[k].rule);
            for (const PassVariant &v : variants[k])
              trials.push_back(v.apply(passes[k].rule));
            for (const lower::PassConfig &trial : trials) {
              if (stop_)
                return;
              try {
                compiler.enqueue(sourcesOf(lowered, graph, passes[k].pass, trial));
              } catch (const std::exception &) {
                // a config the planner refuses: timing it reports why
              }
            }
          }
        }) {}
  ~CandidateFeeder() {
    stop_ = true;
    thread_.join();
  }

private:
  std::atomic<bool> stop_ = false;
  std::thread thread_;
};

/// Each pass's search in turn, timing on the GPU what `compiler` has
/// compiled; a pass begun past the budget keeps the rule, untimed.
void searchPasses(const lower::LoweredLayer &lowered, exec::DeviceGraph &graph, const LayerTuneOptions &options,
                  const Stopwatch &clock, const std::array<std::vector<PassVariant>, 2> &variants,
                  const std::array<double, 2> &shares, Precompiler &compiler, std::vector<TunedLayerPass> &passes) {
  for (size_t k = 0; k < passes.size(); ++k) {
    TunedLayerPass &p = passes[k];
    if (clock.seconds() >= options.budgetSeconds) {
      // No time for this pass's rule either: its stages keep the rule,
      // untimed (the search starts nothing past its budget).
      const auto unreachable = [](const lower::PassConfig &) -> double {
        throwInternalError("a pass searched past its budget was timed");
      };
      SearchOptions none;
      none.budgetSeconds = options.budgetSeconds;
      p.tuned = searchPass(
          p.spaces, p.rule, unreachable, [](const lower::PassConfig &) { return std::string(); },
          [&] { return clock.seconds(); }, none, variants[k]);
      continue;
    }
    GpuPassTimer timer(lowered, graph, p.pass, p.rule, options.warmup, options.reps, options.cache);
    // The pass's part of what is left once its rule runs (its kernels
    // compiled first): the forward's setup waits for NVRTC, which the
    // backward's, later, seldom does.
    const double now = clock.seconds(), left = std::max(0.0, options.budgetSeconds - now);
    SearchOptions search;
    search.budgetSeconds =
        k + 1 == passes.size() ? options.budgetSeconds : now + left * shares[k] / (shares[k] + shares[k + 1]);
    search.modulesOf = [&](const lower::PassConfig &c) { return compiler.keysOf(timer.sources(c)); };
    search.compiled = [&](const std::vector<std::string> &keys) { return compiler.compiled(keys); };
    search.waitForProgress = [&](double seconds) { return compiler.waitForProgress(seconds); };
    p.tuned = searchPass(
        p.spaces, p.rule, [&](const lower::PassConfig &c) { return timer.time(c); },
        [&](const lower::PassConfig &c) { return timer.check(c); }, [&] { return clock.seconds(); }, search,
        variants[k]);
  }
}

} // namespace

TunedLayer tuneLayer(const lower::LoweredLayer &lowered, exec::DeviceGraph &graph, const exec::GraphFacts &facts,
                     const LayerTuneOptions &options) {
  const Stopwatch clock;
  TunedLayer out;
  constexpr std::array passes{lower::Pass::Forward, lower::Pass::Backward};
  std::array<std::vector<PassVariant>, passes.size()> variants;
  std::array<double, passes.size()> shares{}; // a pass's stages, and its variants as one more
  for (size_t k = 0; k < passes.size(); ++k) {
    TunedLayerPass &p = out.passes.emplace_back();
    p.pass = passes[k];
    p.rule = exec::ruleConfig(lowered, p.pass, facts, exec::RuleOptions{});
    p.spaces = candidateSpaces(lowered, p.pass, facts, exec::RuleOptions{}, options.exhaustive);
    variants[k] = passVariants(p.pass, p.rule);
    shares[k] = static_cast<double>(p.spaces.size() + (variants[k].empty() ? 0 : 1));
  }
  // The graph's lazily built parts, built here before two threads plan.
  (void)graph.host().stats();
  (void)graph.host().outgoing();
  // Every module compiles from now on, the rules' first; none starts once
  // it could not finish within the budget.
  exec::RunnerOptions runnerDefaults; // what the timer's runners use but for the configs
  runnerDefaults.cache = options.cache;
  {
    Precompiler compiler(exec::kernelCacheOf(runnerDefaults), exec::compileOptionsOf(runnerDefaults));
    compiler.setDeadline(options.budgetSeconds);
    for (const TunedLayerPass &p : out.passes)
      compiler.enqueue(sourcesOf(lowered, graph.host(), p.pass, p.rule));
    const CandidateFeeder feeder(lowered, graph.host(), out.passes, variants, compiler);
    searchPasses(lowered, graph, options, clock, variants, shares, compiler, out.passes);
    compiler.stop();
    out.compiling = compiler.report();
  } // the compiles under way and the planning thread end here, within the timed wall
  out.seconds = clock.seconds();
  return out;
}

void recordTuned(const TunedLayer &tuned, TuneKey base, const RecordStore &store) {
  for (const TunedLayerPass &p : tuned.passes) {
    base.pass = std::string(lower::passName(p.pass));
    for (const TuneRecord &r : recordsOf(p.tuned, base))
      store.append(r);
  }
}

} // namespace gnnjit::autotune
