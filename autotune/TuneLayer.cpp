#include "autotune/TuneLayer.h"

#include "autotune/GpuTimer.h"
#include "exec/LayerRunner.h"
#include "support/Error.h"
#include "support/Stopwatch.h"

#include <algorithm>
#include <array>
#include <limits>
#include <memory>

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
std::vector<runtime::Source> sourcesOf(ProgramCache &programs, lower::Pass pass, const lower::PassConfig &config) {
  return exec::programSources(*programs.get(pass, config));
}

/// A pass begun past the budget: its stages keep the rule, untimed (the
/// search starts nothing past its budget).
TunedPass untimedPass(const TunedLayerPass &p, const std::vector<PassVariant> &variants, const Stopwatch &clock,
                      double budgetSeconds) {
  const auto unreachable = [](const lower::PassConfig &) -> double {
    throwInternalError("a pass searched past its budget was timed");
  };
  SearchOptions none;
  none.budgetSeconds = budgetSeconds;
  return searchPass(
      p.spaces, p.rule, unreachable, [](const lower::PassConfig &) { return std::string(); },
      [&] { return clock.seconds(); }, none, variants);
}

/// The checks and timings a first search of `p` would run: every candidate
/// of its stages, and its variants with the winners together.
size_t timingsOf(const TunedLayerPass &p, const std::vector<PassVariant> &variants) {
  size_t n = variants.empty() ? 0 : variants.size() + 1;
  for (const StageSpace &space : p.spaces)
    n += space.kept.size();
  return n;
}

/// Has `config`'s modules for `pass` compiled by `deadline` (queued ahead
/// of the others); whether they are.
bool compileBy(ProgramCache &programs, lower::Pass pass, const lower::PassConfig &config, double deadline,
               Precompiler &compiler, const Stopwatch &clock) {
  const std::vector<std::string> keys = compiler.enqueue(sourcesOf(programs, pass, config), true);
  while (!compiler.compiled(keys)) {
    const double left = deadline - clock.seconds();
    if (left <= 0 || !compiler.waitForProgress(left))
      return compiler.compiled(keys);
  }
  return true;
}

/// Each pass's search in turn, timing on the GPU what `compiler` has
/// compiled, each with its part of the time left by need (shareByNeed:
/// twice its timings by the seconds its rule's run says one takes, a
/// share being only a cap; a pass not set up yet needs all), its timer
/// set up as it begins (the backward's rule compiles while the forward is
/// searched); then, while time is left, once more for each pass whose part
/// ran out first (waiting for compiles, most often), resumed from what it
/// timed. A pass begun past the budget keeps the rule, untimed.
void searchPasses(ProgramCache &programs, exec::DeviceGraph &graph, const LayerTuneOptions &options,
                  const Stopwatch &clock, const std::array<std::vector<PassVariant>, 2> &variants,
                  Precompiler &compiler, std::vector<TunedLayerPass> &passes) {
  std::array<std::unique_ptr<GpuPassTimer>, 2> timers;
  for (const bool resumed : {false, true}) {
    std::vector<size_t> todo;
    for (size_t k = 0; k < passes.size(); ++k)
      if (!resumed || (timers[k] && leftUntimed(passes[k].tuned)))
        todo.push_back(k);
    for (size_t i = 0; i < todo.size(); ++i) {
      const size_t k = todo[i];
      TunedLayerPass &p = passes[k];
      if (!resumed)
        p.began = clock.seconds();
      if (clock.seconds() >= options.budgetSeconds) {
        if (!resumed)
          p.tuned = untimedPass(p, variants[k], clock, options.budgetSeconds);
        continue;
      }
      if (!timers[k]) {
        timers[k] = std::make_unique<GpuPassTimer>(programs, graph, p.pass, p.rule, passes.front().rule,
                                                   options.warmup, options.reps, options.cache);
        p.setupSeconds = clock.seconds() - p.began;
      }
      GpuPassTimer &timer = *timers[k];
      const double now = clock.seconds(), left = std::max(0.0, options.budgetSeconds - now);
      std::vector<double> needs;
      for (size_t j = i; j < todo.size(); ++j) {
        const TunedLayerPass &q = passes[todo[j]];
        const GpuPassTimer *t = timers[todo[j]].get();
        const size_t count = resumed ? untimedCount(q.tuned) : timingsOf(q, variants[todo[j]]);
        needs.push_back(t ? 2 * static_cast<double>(count) * std::max(t->expectedTimingSeconds(), q.memory.longestSeconds)
                          : std::numeric_limits<double>::infinity());
      }
      SearchOptions search;
      search.budgetSeconds = i + 1 == todo.size() ? options.budgetSeconds : now + shareByNeed(needs, left).front();
      search.expectedTimingSeconds = timer.expectedTimingSeconds();
      search.modulesOf = [&](const Candidate &c) {
        std::vector<std::string> keys;
        for (const auto &m : c.modules)
          keys.push_back(compiler.keyOf(*m));
        return keys;
      };
      search.compiled = [&](const std::vector<std::string> &keys) { return compiler.compiled(keys); };
      search.waitForProgress = [&](double seconds) { return compiler.waitForProgress(seconds); };
      search.compileBy = [&](const lower::PassConfig &c, double deadline) {
        return compileBy(programs, p.pass, c, deadline, compiler, clock);
      };
      search.memory = &p.memory;
      p.tuned = searchPass(
          p.spaces, p.rule, [&](const lower::PassConfig &c) { return timer.time(c); },
          [&](const lower::PassConfig &c) { return timer.check(c); }, [&] { return clock.seconds(); }, search,
          variants[k]);
      p.searchSeconds += clock.seconds() - now;
      timer.release(); // its runner's buffers, while another pass runs
    }
  }
}

} // namespace

TunedLayer tuneLayer(const lower::LoweredLayer &lowered, exec::DeviceGraph &graph, const GraphFacts &facts,
                     const LayerTuneOptions &options) {
  const Stopwatch clock;
  ProgramCache own(lowered);
  ProgramCache &programs = options.programs ? *options.programs : own;
  TunedLayer out;
  double stopped = 0; // when the searches ended
  constexpr std::array passes{lower::Pass::Forward, lower::Pass::Backward};
  // The graph's lazily built parts, built once here before planning.
  (void)graph.host().stats();
  (void)graph.host().outgoing();
  exec::RunnerOptions runnerDefaults; // what the timer's runners use but for the configs
  runnerDefaults.cache = options.cache;
  {
    // Compiling starts at once, the rules' modules first (each pass's timer
    // waits for them), then every candidate's as the spaces are planned; no
    // compile starts once it could not end within the budget.
    Precompiler compiler(exec::kernelCacheOf(runnerDefaults), exec::compileOptionsOf(runnerDefaults));
    compiler.setDeadline(options.budgetSeconds);
    for (lower::Pass pass : passes) {
      TunedLayerPass &p = out.passes.emplace_back();
      p.pass = pass;
      p.rule = ruleConfig(lowered, p.pass, facts, RuleOptions{});
      compiler.enqueue(sourcesOf(programs, p.pass, p.rule));
    }
    std::array<std::vector<PassVariant>, passes.size()> variants;
    for (size_t k = 0; k < passes.size(); ++k) {
      TunedLayerPass &p = out.passes[k];
      p.spaces = candidateSpaces(programs, p.pass, facts, RuleOptions{}, options.exhaustive);
      for (const auto &m : distinctModules(p.spaces))
        compiler.enqueue(*m);
      variants[k] = passVariants(p.pass, p.rule);
      for (const PassVariant &v : variants[k])
        compiler.enqueue(sourcesOf(programs, p.pass, v.apply(p.rule)));
    }
    out.planSeconds = clock.seconds();
    searchPasses(programs, graph, options, clock, variants, compiler, out.passes);
    stopped = clock.seconds();
    compiler.stop();
    out.compiling = compiler.report();
  } // the compiles under way end here, within the timed wall
  out.seconds = clock.seconds();
  out.stopSeconds = out.seconds - stopped;
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
