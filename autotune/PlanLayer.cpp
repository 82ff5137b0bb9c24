#include "autotune/PlanLayer.h"

#include "autotune/Fingerprint.h"
#include "autotune/Records.h"
#include "autotune/TuneLayer.h"
#include "autotune/Tuner.h"
#include "exec/DeviceGraph.h"
#include "runtime/KernelCache.h"
#include "support/Stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <vector>

namespace gnnjit::autotune {

namespace {

/// How many of the rule's tunable stages of `pass` have no record for `base`.
int stagesWithoutRecords(const lower::PassConfig &rule, const LoadedRecords &records, TuneKey base, lower::Pass pass) {
  base.pass = std::string(lower::passName(pass));
  int tunable = 0;
  for (const lower::StageConfig &s : rule.stages)
    tunable += std::holds_alternative<std::monostate>(s) ? 0 : 1;
  return tunable - replay(rule, records, base).fromRecords;
}

/// Tunes the layer on this graph (both passes, as `gnnjit tune`, planning
/// in `programs`) and appends the winners to `store`; returns the seconds
/// it took.
double tuneNow(ProgramCache &programs, const graph::Graph &g, const RecordStore &store, TuneKey base) {
  exec::DeviceGraph device(g);
  LayerTuneOptions options;
  options.programs = &programs;
  const TunedLayer tuned = tuneLayer(programs.lowered(), device, graphFacts(g), options);
  recordTuned(tuned, std::move(base), store);
  return tuned.seconds;
}

/// For inputs whose rows do not allow 16-byte loads: a pass the records
/// configured runs its config's unaligned variant, one the rule configured
/// the rule's config for such inputs.
std::function<codegen::ProgramPtr(const lower::LoweredLayer &, lower::Pass)>
unalignedPolicy(const GraphFacts &facts, RuleOptions rule, std::array<std::optional<lower::PassConfig>, 2> recorded) {
  rule.aligned = false;
  return [facts, rule, recorded](const lower::LoweredLayer &lowered, lower::Pass pass) {
    const std::optional<lower::PassConfig> &config = recorded[pass == lower::Pass::Forward ? 0 : 1];
    return std::make_shared<const codegen::Program>(codegen::planProgram(
        lowered, pass, config ? lower::unalignedConfig(*config) : ruleConfig(lowered, pass, facts, rule)));
  };
}

} // namespace

exec::LayerPrograms rulePrograms(ProgramCache &programs, const GraphFacts &facts, const RuleOptions &options,
                                 bool backward) {
  const lower::LoweredLayer &lowered = programs.lowered();
  exec::LayerPrograms out;
  out.forward = programs.get(lower::Pass::Forward, ruleConfig(lowered, lower::Pass::Forward, facts, options));
  if (backward)
    out.backward = programs.get(lower::Pass::Backward, ruleConfig(lowered, lower::Pass::Backward, facts, options));
  out.unaligned = unalignedPolicy(facts, options, {});
  return out;
}

exec::LayerPrograms rulePrograms(const lower::LoweredLayer &lowered, const graph::Graph &graph,
                                 const RuleOptions &options, bool backward) {
  ProgramCache programs(lowered);
  return rulePrograms(programs, graphFacts(graph), options, backward);
}

PlannedLayer planLayer(const lower::LoweredLayer &lowered, const graph::Graph &g, const PlanRequest &request,
                       ProgramCache *given) {
  PlannedLayer out;
  const Stopwatch clock;
  ProgramCache own(lowered);
  ProgramCache &programs = given ? *given : own;
  const GraphFacts facts = graphFacts(g);
  std::vector<lower::Pass> passes{lower::Pass::Forward};
  if (request.backward)
    passes.push_back(lower::Pass::Backward);
  std::vector<lower::PassConfig> rules;
  for (lower::Pass pass : passes)
    rules.push_back(ruleConfig(lowered, pass, facts, request.rule));
  std::array<std::optional<lower::PassConfig>, 2> recorded;
  const RecordStore store = RecordStore::inCacheFolder(runtime::defaultCacheDir());
  if (request.useRecords && (request.tuneMissing || std::filesystem::exists(store.file()))) {
    const TuneKey base = keyOnThisDevice(request.layerHash, fingerprint(g).key(), request.width, request.heads);
    LoadedRecords records = std::filesystem::exists(store.file()) ? store.load() : LoadedRecords{};
    if (request.tuneMissing) {
      int missing = 0;
      for (size_t k = 0; k < passes.size(); ++k)
        missing += stagesWithoutRecords(rules[k], records, base, passes[k]);
      if (missing > 0) {
        out.tuneSeconds = tuneNow(programs, g, store, base);
        records = store.load();
      }
    }
    if (records.skipped > 0)
      out.note = fmt::format("{} line{} of {} skipped ({})", records.skipped, records.skipped == 1 ? "" : "s",
                             store.file().string(), records.firstProblem);
    for (size_t k = 0; k < passes.size(); ++k) {
      const RecordedConfig r = recordedConfig(programs, passes[k], rules[k], records, base);
      if (r.config) {
        recorded[k] = r.config;
        (k == 0 ? out.programs.forward : out.programs.backward) = r.program;
        out.stages += r.stages;
      } else if (!r.refused.empty()) {
        out.note = fmt::format("records for this run not used, the planner refused them: {}", r.refused);
      }
    }
  }
  // The rule's config where no record gave one.
  for (size_t k = 0; k < passes.size(); ++k) {
    codegen::ProgramPtr &program = k == 0 ? out.programs.forward : out.programs.backward;
    if (!program)
      program = programs.get(passes[k], rules[k]);
  }
  out.programs.unaligned = unalignedPolicy(facts, request.rule, recorded);
  out.ms = clock.ms() - std::max(0.0, out.tuneSeconds) * 1e3; // the lookup alone
  return out;
}

} // namespace gnnjit::autotune
