#include "autotune/FromRecords.h"

#include "autotune/Fingerprint.h"
#include "autotune/Records.h"
#include "autotune/TuneLayer.h"
#include "autotune/Tuner.h"
#include "exec/DeviceGraph.h"
#include "runtime/KernelCache.h"
#include "support/Stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
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

/// Tunes the layer on this graph (both passes, as `gnnjit tune`) and
/// appends the winners to `store`; returns the seconds it took.
double tuneNow(const lower::LoweredLayer &lowered, const graph::Graph &g, const RecordStore &store, TuneKey base) {
  exec::DeviceGraph device(g);
  const TunedLayer tuned = tuneLayer(lowered, device, exec::graphFacts(g));
  recordTuned(tuned, std::move(base), store);
  return tuned.seconds;
}

} // namespace

ConfigsFromRecords configsFromRecords(const lower::LoweredLayer &lowered, const graph::Graph &g,
                                      const RecordLookup &lookup) {
  ConfigsFromRecords out;
  const Stopwatch clock;
  const RecordStore store = RecordStore::inCacheFolder(runtime::defaultCacheDir());
  if (!lookup.tuneMissing && !std::filesystem::exists(store.file()))
    return out;
  const TuneKey base = keyOnThisDevice(lookup.layerHash, fingerprint(g).key(), lookup.width, lookup.heads);
  const exec::GraphFacts facts = exec::graphFacts(g);
  std::vector<lower::Pass> passes{lower::Pass::Forward};
  if (lookup.backward)
    passes.push_back(lower::Pass::Backward);
  std::vector<lower::PassConfig> rules;
  for (lower::Pass pass : passes)
    rules.push_back(exec::ruleConfig(lowered, pass, facts, lookup.rule));
  LoadedRecords records = std::filesystem::exists(store.file()) ? store.load() : LoadedRecords{};
  if (lookup.tuneMissing) {
    int missing = 0;
    for (size_t k = 0; k < passes.size(); ++k)
      missing += stagesWithoutRecords(rules[k], records, base, passes[k]);
    if (missing > 0) {
      out.tuneSeconds = tuneNow(lowered, g, store, base);
      records = store.load();
    }
  }
  if (records.skipped > 0)
    out.note = fmt::format("{} line{} of {} skipped ({})", records.skipped, records.skipped == 1 ? "" : "s",
                           store.file().string(), records.firstProblem);
  for (size_t k = 0; k < passes.size(); ++k) {
    const RecordedConfig recorded = recordedConfig(lowered, passes[k], rules[k], records, base);
    if (recorded.config) {
      (passes[k] == lower::Pass::Forward ? out.forward : out.backward) = recorded.config;
      out.stages += recorded.stages;
    } else if (!recorded.refused.empty()) {
      out.note = fmt::format("records for this run not used, the planner refused them: {}", recorded.refused);
    }
  }
  out.ms = clock.ms() - std::max(0.0, out.tuneSeconds) * 1e3; // the lookup alone
  return out;
}

} // namespace gnnjit::autotune
