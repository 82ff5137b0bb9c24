#include "autotune/TuneLayer.h"

#include "autotune/GpuTimer.h"
#include "support/Stopwatch.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>

namespace gnnjit::autotune {

double TunedLayerPass::ruleMs() const { return tuned.stages.empty() ? kUntimed : tuned.stages.front().ruleMs; }

double TunedLayerPass::tunedMs() const {
  // Each stage is timed with the earlier ones at their best, so the last
  // stage's winner is the whole tuned pass; a variant replaces it when faster.
  double ms = tuned.stages.empty() || tuned.stages.back().timed.empty()
                  ? kUntimed
                  : tuned.stages.back().timed[tuned.stages.back().best].ms;
  for (const TimedCandidate &v : tuned.variants)
    ms = std::min(ms, v.ms);
  return ms;
}

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
  const double allShares = shares[0] + shares[1];
  double ends = 0;
  for (size_t k = 0; k < passes.size(); ++k) {
    TunedLayerPass &p = out.passes[k];
    ends = k + 1 == passes.size() ? options.budgetSeconds : ends + options.budgetSeconds * shares[k] / allShares;
    GpuPassTimer timer(lowered, graph, p.pass, p.rule, options.warmup, options.reps);
    // Compiling runs on the host's cores while the search times what is
    // ready on the GPU (a candidate not compiled yet compiles when timed);
    // when the search ends, compiles not yet started are dropped.
    const std::vector<lower::PassConfig> trials = trialConfigs(p.spaces, p.rule);
    std::atomic<bool> stop = false;
    const double compileStarts = clock.seconds();
    std::thread compiling([&] {
      timer.precompile(trials, &stop);
      p.compileSeconds = clock.seconds() - compileStarts;
    });
    try {
      p.tuned = searchPass(
          p.spaces, p.rule, [&](const lower::PassConfig &c) { return timer.time(c); },
          [&](const lower::PassConfig &c) { return timer.check(c); }, [&] { return clock.seconds(); }, {ends},
          variants[k]);
    } catch (...) {
      stop = true;
      compiling.join();
      throw;
    }
    stop = true;
    compiling.join();
    p.compiled = trials.size();
  }
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
