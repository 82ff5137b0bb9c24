#include "autotune/Tuner.h"

#include <algorithm>
#include <exception>
#include <numeric>
#include <optional>

namespace gnnjit::autotune {

namespace {

/// ms of `config`, or kUntimed with why: it throws, or disagrees with the rule.
TimedCandidate timeOne(const Candidate &candidate, const lower::PassConfig &config, const PassTimer &time,
                       const PassCheck &check, const Elapsed &elapsed, bool isRule) {
  TimedCandidate t{candidate, kUntimed, ""};
  try {
    if (!isRule) {
      const double began = elapsed();
      const std::string why = check(config);
      t.checkSeconds = elapsed() - began;
      if (!why.empty()) {
        t.failure = "disagrees with the rule's config: " + why;
        return t;
      }
    }
    t.ms = time(config);
  } catch (const std::exception &e) {
    t.failure = std::string("failed: ") + e.what();
  }
  return t;
}

/// The order a stage's candidates (after the rule's, index 0) are taken
/// in: of those whose modules are compiled, one of each distinct set of
/// modules first (the kernels' shapes), in the space's order; then the
/// others (the same kernels under other launch parameters), those of the
/// fastest modules so far first.
class StageOrder {
public:
  explicit StageOrder(const std::vector<std::vector<std::string>> &modules) : group_(modules.size()) {
    for (size_t c = 0; c < modules.size(); ++c) {
      group_[c] = c;
      for (size_t e = 0; e < c; ++e)
        if (!modules[c].empty() && modules[e] == modules[c]) {
          group_[c] = e;
          break;
        }
      if (c > 0)
        (group_[c] == c ? firsts_ : others_).push_back(c);
    }
  }
  bool empty() const { return firsts_.empty() && others_.empty(); }
  /// The next candidate `ready` accepts, taken out; none when none is.
  std::optional<size_t> takeReady(const std::function<bool(size_t)> &ready, const std::vector<TimedCandidate> &timed) {
    if (auto c = take(firsts_, ready))
      return c;
    std::vector<double> groupMs(timed.size(), kUntimed);
    for (size_t c = 0; c < timed.size(); ++c)
      groupMs[group_[c]] = std::min(groupMs[group_[c]], timed[c].ms);
    std::stable_sort(others_.begin(), others_.end(),
                     [&](size_t a, size_t b) { return groupMs[group_[a]] < groupMs[group_[b]]; });
    return take(others_, ready);
  }
  /// Takes `c` out of the order.
  void remove(size_t c) {
    for (std::vector<size_t> *list : {&firsts_, &others_})
      list->erase(std::remove(list->begin(), list->end(), c), list->end());
  }
  /// The next in order, ready or not.
  size_t takeNext() {
    return *take(firsts_.empty() ? others_ : firsts_, [](size_t) { return true; });
  }

private:
  static std::optional<size_t> take(std::vector<size_t> &list, const std::function<bool(size_t)> &ready) {
    const auto it = std::find_if(list.begin(), list.end(), ready);
    if (it == list.end())
      return std::nullopt;
    const size_t c = *it;
    list.erase(it);
    return c;
  }

  std::vector<size_t> group_; ///< the first candidate with the same modules
  std::vector<size_t> firsts_, others_;
};

/// The longest a timing took in this pass (before any, the timer's
/// estimate): whether one more still ends in time. The longest, not the
/// mean: timings vary (cuSPARSE times its algorithms on first use, a slow
/// candidate's check is slow), and one that ends past the budget delays
/// the end of tuning. A config timed before in the pass is answered from
/// memory, at no cost.
class TimingCost {
public:
  TimingCost(const Elapsed &elapsed, double prior, SearchMemory &memory)
      : elapsed_(elapsed), prior_(prior), memory_(memory) {}
  double expected() const { return memory_.timed.empty() ? prior_ : memory_.longestSeconds; }
  bool endsBy(double deadline) const { return elapsed_() + expected() <= deadline; }
  /// Whether `config` is known, or one more timing ends by `deadline`.
  bool knownOrEndsBy(const lower::PassConfig &config, double deadline) const {
    return known(config) || endsBy(deadline);
  }
  TimedCandidate time(const Candidate &candidate, const lower::PassConfig &config, const PassTimer &timer,
                      const PassCheck &check, bool isRule) {
    if (const TimedCandidate *result = known(config))
      return {candidate, result->ms, result->failure};
    const double began = elapsed_();
    TimedCandidate t = timeOne(candidate, config, timer, check, elapsed_, isRule);
    t.began = began;
    t.seconds = elapsed_() - began;
    memory_.longestSeconds = std::max(memory_.longestSeconds, t.seconds);
    memory_.timed.emplace_back(config, t);
    return t;
  }

  /// What timing `config` gave in this pass, if it was timed.
  const TimedCandidate *known(const lower::PassConfig &config) const {
    for (const auto &[seen, result] : memory_.timed)
      if (seen == config)
        return &result;
    return nullptr;
  }

private:
  const Elapsed &elapsed_;
  double prior_;
  SearchMemory &memory_;
};

} // namespace

TunedPass searchPass(const std::vector<StageSpace> &spaces, const lower::PassConfig &rule, const PassTimer &time,
                     const PassCheck &check, const Elapsed &elapsed, const SearchOptions &options,
                     const std::vector<PassVariant> &variants) {
  TunedPass tuned;
  tuned.config = rule;
  // Each stage (and the variants, as one more) gets an equal share of what
  // is left of the budget when it starts, so a stage with many candidates
  // cannot leave the later ones only their rule's time.
  const size_t shares = spaces.size() + (variants.empty() ? 0 : 1);
  SearchMemory own;
  TimingCost cost(elapsed, options.expectedTimingSeconds, options.memory ? *options.memory : own);
  for (size_t k = 0; k < spaces.size(); ++k) {
    const StageSpace &space = spaces[k];
    const double start = elapsed();
    const double deadline = start + std::max(0.0, options.budgetSeconds - start) / static_cast<double>(shares - k);
    TunedStage stage;
    stage.stage = space.stage;
    stage.tied = space.tied;
    stage.what = space.what;
    const size_t n = space.kept.size();
    std::vector<lower::PassConfig> trials;
    std::vector<std::vector<std::string>> modules(n);
    for (size_t c = 0; c < n; ++c) {
      trials.push_back(space.with(tuned.config, space.kept[c].config));
      if (options.modulesOf)
        modules[c] = options.modulesOf(space.kept[c]);
      stage.timed.push_back({space.kept[c], kUntimed, kBudgetSpent});
    }
    if (n == 0) {
      tuned.stages.push_back(std::move(stage));
      continue;
    }
    // The rule's config first: it is what tuning must beat (past the
    // budget the stage keeps the rule, untimed, and nothing is recorded).
    if (!cost.knownOrEndsBy(trials[0], options.budgetSeconds)) {
      tuned.stages.push_back(std::move(stage));
      continue;
    }
    stage.timed[0] = cost.time(space.kept[0], trials[0], time, check, true);
    stage.ruleMs = stage.timed[0].ms;
    StageOrder order(modules);
    // What the pass timed before (a resumed search) is answered first, at no
    // cost, whatever time is left.
    for (size_t c = 1; c < n; ++c)
      if (cost.known(trials[c])) {
        order.remove(c);
        stage.timed[c] = cost.time(space.kept[c], trials[c], time, check, false);
      }
    const auto ready = [&](size_t c) { return !options.compiled || options.compiled(modules[c]); };
    while (!order.empty() && cost.endsBy(deadline)) {
      std::optional<size_t> c = order.takeReady(ready, stage.timed);
      if (!c) {
        if (options.waitForProgress && options.waitForProgress(std::max(0.0, deadline - elapsed())))
          continue; // something compiled, or the time is up: look again
        c = order.takeNext(); // nothing compiling: timing compiles it
      }
      stage.timed[*c] = cost.time(space.kept[*c], trials[*c], time, check, false);
    }
    for (size_t c = 1; c < n; ++c)
      if (stage.timed[c].ms < stage.timed[stage.best].ms)
        stage.best = c; // strictly faster: a tie keeps the rule's (or the earlier)
    tuned.config = space.with(tuned.config, stage.timed[stage.best].candidate.config);
    tuned.stages.push_back(std::move(stage));
  }
  if (variants.empty())
    return tuned;
  // The winners together, then each pass variant of them; the fastest
  // stays. Each only when it ends within the budget.
  if (cost.knownOrEndsBy(tuned.config, options.budgetSeconds))
    tuned.stagesMs = cost.time({}, tuned.config, time, check, true).ms;
  lower::PassConfig best = tuned.config;
  double bestMs = tuned.stagesMs;
  for (const PassVariant &v : variants) {
    const lower::PassConfig trial = v.apply(tuned.config);
    const Candidate candidate{trial.stages.empty() ? lower::StageConfig{} : trial.stages.front(), v.label};
    const auto compiledInTime = [&] {
      return cost.known(trial) || !options.compileBy || options.compileBy(trial, options.budgetSeconds - cost.expected());
    };
    if (tuned.stagesMs == kUntimed || !cost.knownOrEndsBy(trial, options.budgetSeconds) || !compiledInTime()) {
      tuned.variants.push_back({candidate, kUntimed, kBudgetSpent});
      continue;
    }
    tuned.variants.push_back(cost.time(candidate, trial, time, check, false));
    if (tuned.variants.back().ms < bestMs) {
      bestMs = tuned.variants.back().ms;
      best = trial;
    }
  }
  if (best != tuned.config) { // a variant won: its stages are the records' configs
    tuned.config = best;
    for (TunedStage &s : tuned.stages) {
      s.timed[s.best].candidate = {best.stages[s.stage], configLabel(best.stages[s.stage])};
      s.timed[s.best].ms = bestMs; // every time is the whole pass's
    }
  }
  return tuned;
}

size_t untimedCount(const TunedPass &tuned) {
  const auto untimed = [](const TimedCandidate &t) { return t.failure == kBudgetSpent; };
  auto n = static_cast<size_t>(std::count_if(tuned.variants.begin(), tuned.variants.end(), untimed));
  for (const TunedStage &s : tuned.stages)
    n += static_cast<size_t>(std::count_if(s.timed.begin(), s.timed.end(), untimed));
  return n;
}

bool leftUntimed(const TunedPass &tuned) { return untimedCount(tuned) > 0; }

std::vector<double> shareByNeed(const std::vector<double> &needs, double left) {
  std::vector<size_t> order(needs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return needs[a] < needs[b]; });
  std::vector<double> shares(needs.size(), 0.0);
  double rest = std::max(0.0, left);
  for (size_t j = 0; j < order.size(); ++j) {
    const size_t k = order[j];
    shares[k] = j + 1 == order.size() ? rest : std::min(std::max(0.0, needs[k]), rest / static_cast<double>(order.size() - j));
    rest -= shares[k];
  }
  return shares;
}

std::vector<TuneRecord> recordsOf(const TunedPass &tuned, const TuneKey &base) {
  std::vector<TuneRecord> records;
  for (const TunedStage &s : tuned.stages) {
    if (s.timed.empty() || s.timed[s.best].ms == kUntimed)
      continue; // nothing ran: nothing learned
    TuneRecord r;
    r.key = base;
    r.config = s.timed[s.best].candidate.config;
    r.ms = s.timed[s.best].ms;
    r.ruleMs = s.ruleMs;
    for (const TimedCandidate &t : s.timed)
      r.candidates += t.ms != kUntimed ? 1 : 0;
    std::vector<size_t> stages{s.stage};
    stages.insert(stages.end(), s.tied.begin(), s.tied.end());
    for (size_t stage : stages) {
      r.key.stage = static_cast<int64_t>(stage);
      records.push_back(r);
    }
  }
  return records;
}

Replayed replay(const lower::PassConfig &rule, const LoadedRecords &records, const TuneKey &base) {
  Replayed out{rule, 0};
  for (size_t k = 0; k < rule.stages.size(); ++k) {
    if (std::holds_alternative<std::monostate>(rule.stages[k]))
      continue;
    TuneKey key = base;
    key.stage = static_cast<int64_t>(k);
    // A record of another family (a layer hash collision, a hand-edited
    // file) is ignored rather than planned.
    if (const auto r = records.find(key); r && r->config.index() == rule.stages[k].index()) {
      out.config.stages[k] = r->config;
      ++out.fromRecords;
    }
  }
  return out;
}

RecordedConfig recordedConfig(ProgramCache &programs, lower::Pass pass, const lower::PassConfig &rule,
                              const LoadedRecords &records, TuneKey base) {
  base.pass = std::string(lower::passName(pass));
  const Replayed replayed = replay(rule, records, base);
  RecordedConfig out;
  if (replayed.fromRecords == 0)
    return out;
  try {
    out.program = programs.get(pass, replayed.config);
  } catch (const std::exception &e) {
    out.refused = e.what(); // a record this build cannot plan: the rule's config instead
    return out;
  }
  out.config = replayed.config;
  out.stages = replayed.fromRecords;
  return out;
}

} // namespace gnnjit::autotune
