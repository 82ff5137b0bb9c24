#include "autotune/Candidates.h"

#include "dsl/Printer.h"

#include <fmt/format.h>
#include <llvm/Support/Parallel.h>

#include <algorithm>
#include <exception>
#include <map>
#include <set>

namespace gnnjit::autotune {

using lower::StageConfig;

std::string configLabel(const StageConfig &c) {
  if (const auto *r = std::get_if<lower::ReductionConfig>(&c)) // what its print() leaves out
    return fmt::format("{}{}{}", r->print(), r->packedMerge ? " packed-merge" : "", r->argScatter ? "" : " no-arg-scatter");
  return std::visit(
      [](const auto &config) -> std::string {
        if constexpr (requires { config.print(); })
          return config.print();
        else
          return "nothing to tune";
      },
      c);
}

namespace {

/// The rule's row tiling of a config, if the family has one.
const lower::RowTiling *tilingOf(const StageConfig &c) {
  if (const auto *s = std::get_if<lower::SpmmConfig>(&c))
    return s->backend == lower::SpmmConfig::Backend::Cusparse ? nullptr : s;
  if (const auto *r = std::get_if<lower::ReductionConfig>(&c))
    return r;
  if (const auto *a = std::get_if<lower::AttentionConfig>(&c))
    return a;
  return nullptr;
}

/// The rule asked under every combination of forced per-stage knobs of
/// `options` (the fused attention backward is a knob of the whole pass:
/// passVariants).
std::vector<RuleOptions> knobGrid(const RuleOptions &base) {
  std::vector<RuleOptions> grid;
  for (int group : {0, 1, 2, 4, 8, 16, 32})
    for (int64_t threshold : {int64_t{0}, int64_t{32}, int64_t{128}, int64_t{512}})
      for (int64_t segment : {int64_t{0}, int64_t{64}, int64_t{256}, int64_t{1024}})
        for (Variant variant : {Variant::Auto, Variant::Generated, Variant::Cusparse})
          for (bool packed : {true, false})
            for (bool scatter : {true, false}) {
              RuleOptions o = base;
              o.group = group;
              o.heavyThreshold = threshold;
              o.segmentLength = segment;
              o.variant = variant;
              o.packedMerge = packed;
              o.argScatter = scatter;
              grid.push_back(o);
            }
  return grid;
}

/// Threads an H200 keeps resident (132 multiprocessors x 2048): rows whose
/// lanes fill it a few times over gain nothing from being split.
constexpr int64_t kResidentThreads = 132 * 2048;

/// Why the model expects `c` to lose on these degrees and this width, or empty.
std::string hopeless(const StageConfig &c, const DegreeFacts &degrees, int64_t nodes, int64_t width) {
  const lower::RowTiling *t = tilingOf(c);
  if (!t)
    return "";
  if (static_cast<int64_t>(t->group) * t->vec > 2 * std::max<int64_t>(width, 1))
    return fmt::format("lanes idle: {} lanes x {} floats for rows of {}", t->group, t->vec, width);
  // A group whose loads of a row fill less than a 32-byte sector, walking
  // it in many chunks, reads each sector several times over (GATv2's 4 x
  // 122 in one lane of pairs ran 18x slower than in 64).
  if (t->group * t->vec < 8 && t->chunks >= 4)
    return fmt::format("sub-sector loads: {} lanes x {} floats (under 32 bytes) walk each row in {} chunks", t->group,
                       t->vec, t->chunks);
  // SpMM and reduction tiles each walk the row's edges once more: a row in
  // four or more of them re-reads its indices and gathers short pieces of
  // every neighbour's row (F = 490 in 4 lanes x 2 floats x 8 chunks: 8
  // tiles). No such tiling was the exhaustive search's best on any of five
  // graphs at F = 32, 128 or 490 on the H200, and at 490 one check of them
  // took up to half a second. Attention tiles are whole heads (its own
  // trade-off: GATv2 4 x 122 won in 4 tiles on grids).
  if (!std::holds_alternative<lower::AttentionConfig>(c)) {
    const int64_t perTile = static_cast<int64_t>(t->group) * t->vec * t->chunks;
    const int64_t tiles = (std::max<int64_t>(width, 1) + perTile - 1) / perTile;
    if (tiles >= 4)
      return fmt::format("rows in {} tiles: {} lanes x {} floats x {} chunks cover {} of {} floats, and each tile "
                         "walks the row's edges again",
                         tiles, t->group, t->vec, t->chunks, perTile, width);
  }
  // Splitting typical rows only pays when there are too few rows to fill
  // the GPU (the H200's tuning found heavy > 32 in segments of 64 fastest
  // on tolokers' 11,758 rows of median degree 30); unknown counts are
  // taken as plenty.
  const bool fewRows = nodes > 0 && nodes * t->group < 4 * kResidentThreads;
  if (t->heavyThreshold > 0 && t->heavyThreshold < 2 * degrees.p50 && !fewRows)
    return fmt::format("splits typical rows: threshold {} below twice the median degree {}, and {} rows fill the GPU",
                       t->heavyThreshold, degrees.p50, nodes > 0 ? fmt::format("{}", nodes) : "the");
  // No row over the threshold: the same kernels as no split, at another
  // launch. Segments as long as the longest row are not that: each heavy
  // row is one segment of the segment kernels, and on er (degrees 50 to
  // 153) GATv2 4 x 122's forward ran 11.2 ms so (heavy > 32 in segments of
  // 256) against 13.9 ms in segments of 64.
  if (t->heavyThreshold > 0 && t->heavyThreshold >= degrees.max)
    return fmt::format("no heavy rows: threshold {} at or over the longest row ({})", t->heavyThreshold, degrees.max);
  return "";
}

std::string stageText(const lower::AggregationStage &s) {
  const auto *agg = llvm::cast<dsl::Aggregate>(s.aggregate.get());
  return fmt::format("aggregate[{}, {}] {} ({})", dsl::reduceName(agg->reduce()), dsl::overName(agg->over()),
                     dsl::shapeText(s.aggregate->shape()), lower::familyName(s.family));
}

/// Per stage the rule's plan runs in one edge loop with an earlier one,
/// that earlier stage (the first of the loop's stages).
std::map<size_t, size_t> sharedLoopFirsts(ProgramCache &programs, lower::Pass pass, const lower::PassConfig &rule,
                                          const std::vector<lower::AggregationStage> &stages) {
  std::map<size_t, size_t> firsts;
  codegen::ProgramPtr program;
  try {
    program = programs.get(pass, rule);
  } catch (const std::exception &) {
    return firsts; // the rule's own refusal is reported with its candidates
  }
  for (const lower::Step &step : program->plan.steps) {
    const auto *a = std::get_if<lower::AttentionStep>(&step);
    if (!a)
      continue;
    std::vector<size_t> members;
    for (const lower::AttentionOutput &o : a->outputs)
      for (size_t k = 0; k < stages.size(); ++k)
        if (stages[k].aggregate == o.stage.aggregate)
          members.push_back(k);
    std::sort(members.begin(), members.end());
    for (size_t m = 1; m < members.size(); ++m)
      if (members[m] != members.front())
        firsts[members[m]] = members.front();
  }
  return firsts;
}

} // namespace

std::vector<StageSpace> candidateSpaces(ProgramCache &programs, lower::Pass pass, const GraphFacts &facts,
                                        const RuleOptions &options, bool exhaustive) {
  const lower::LoweredLayer &lowered = programs.lowered();
  const std::vector<lower::AggregationStage> &stages = lower::stagesOf(lowered, pass);
  const lower::PassConfig rule = ruleConfig(lowered, pass, facts, options);
  std::vector<lower::PassConfig> answers;
  for (const RuleOptions &o : knobGrid(options))
    answers.push_back(ruleConfig(lowered, pass, facts, o));
  const std::map<size_t, size_t> tiedTo = sharedLoopFirsts(programs, pass, rule, stages);
  std::vector<StageSpace> spaces;
  for (size_t k = 0; k < stages.size(); ++k) {
    if (std::holds_alternative<std::monostate>(rule.stages[k]) || tiedTo.count(k))
      continue;
    StageSpace space;
    space.stage = k;
    space.what = stageText(stages[k]);
    for (const auto &[later, first] : tiedTo)
      if (first == k) {
        space.tied.push_back(later);
        space.what += " with " + stageText(stages[later]);
      }
    space.rule = {rule.stages[k], configLabel(rule.stages[k])};
    std::vector<StageConfig> configs{rule.stages[k]};
    for (const lower::PassConfig &a : answers) {
      configs.push_back(a.stages[k]);
      if (auto *s = std::get_if<lower::SpmmConfig>(&configs.back());
          s && s->backend == lower::SpmmConfig::Backend::Cusparse)
        for (int algorithm : {1, 2}) { // not ALG3: see exec/CusparseSpmm.h
          lower::SpmmConfig fixed = *s;
          fixed.cusparseAlgorithm = algorithm;
          configs.push_back(fixed);
        }
    }
    const bool over = llvm::cast<dsl::Aggregate>(stages[k].aggregate.get())->over() == dsl::Over::OutEdges;
    const DegreeFacts &degrees = over ? facts.out : facts.in;
    // The distinct configs the model keeps, planned in parallel (planning
    // and emitting is the cost here: over a millisecond each), then kept in
    // order unless their kernels repeat an earlier candidate's.
    std::vector<StageConfig> seen; // normalized
    std::vector<Candidate> toPlan;
    for (const StageConfig &c : configs) {
      if (std::find(seen.begin(), seen.end(), lower::normalized(c)) != seen.end())
        continue;
      seen.push_back(lower::normalized(c));
      Candidate candidate(c, configLabel(c));
      const bool isRule = &c == &configs.front();
      if (!isRule && !exhaustive)
        if (std::string why = hopeless(c, degrees, facts.nodes, stages[k].aggregate->shape().size()); !why.empty()) {
          space.pruned.push_back({candidate, why});
          continue;
        }
      toPlan.push_back(std::move(candidate));
    }
    struct Planned {
      std::string plan; ///< what runs: the steps and every module's source
      codegen::ProgramPtr program;
      std::string refused;
    };
    std::vector<Planned> planned(toPlan.size());
    llvm::parallelForEachN(0, toPlan.size(), [&](size_t i) {
      try {
        planned[i].program = programs.get(pass, space.with(rule, toPlan[i].config));
        planned[i].plan = planned[i].program->plan.describe();
        for (const codegen::GeneratedModule &m : planned[i].program->code.modules)
          planned[i].plan += m.source;
        if (const auto *spmm = std::get_if<lower::SpmmConfig>(&toPlan[i].config)) // chosen at launch, in no source
          planned[i].plan += fmt::format(" cusparse algorithm {}", spmm->cusparseAlgorithm);
      } catch (const std::exception &e) {
        planned[i].refused = e.what();
      }
    });
    std::set<std::string> plans;
    std::map<std::string, std::shared_ptr<const codegen::GeneratedModule>> modules; // by source: one object each
    for (size_t i = 0; i < toPlan.size(); ++i) {
      Candidate &candidate = toPlan[i];
      if (!planned[i].refused.empty()) {
        space.pruned.push_back({candidate, fmt::format("the planner refuses it: {}", planned[i].refused)});
        continue;
      }
      const bool isRule = i == 0 && candidate.config == rule.stages[k];
      if (!plans.insert(planned[i].plan).second && !isRule)
        continue; // a knob this stage does not read: the same kernels as an earlier candidate
      candidate.program = planned[i].program;
      for (const codegen::GeneratedModule &m : candidate.program->code.modules) {
        auto &shared = modules[m.source];
        if (!shared) // owned with its program
          shared = std::shared_ptr<const codegen::GeneratedModule>(candidate.program, &m);
        candidate.modules.push_back(shared);
      }
      space.kept.push_back(std::move(candidate));
    }
    spaces.push_back(std::move(space));
  }
  return spaces;
}

std::vector<StageSpace> candidateSpaces(const lower::LoweredLayer &lowered, lower::Pass pass, const GraphFacts &facts,
                                        const RuleOptions &options, bool exhaustive) {
  ProgramCache programs(lowered);
  return candidateSpaces(programs, pass, facts, options, exhaustive);
}

lower::PassConfig StageSpace::with(lower::PassConfig config, const StageConfig &c) const {
  config.stages[stage] = c;
  for (size_t k : tied)
    config.stages[k] = c;
  return config;
}

std::vector<PassVariant> passVariants(lower::Pass pass, const lower::PassConfig &rule) {
  std::vector<PassVariant> variants;
  const auto attention = std::find_if(rule.stages.begin(), rule.stages.end(), [](const StageConfig &s) {
    return std::holds_alternative<lower::AttentionConfig>(s);
  });
  if (pass != lower::Pass::Backward || attention == rule.stages.end())
    return variants;
  // The other setting than the rule's (fused unless the rule was told not to).
  const bool fuse = !std::get<lower::AttentionConfig>(*attention).fuseBackward;
  variants.push_back({fuse ? "every attention stage fused-backward" : "every attention stage unfused-backward",
                      [fuse](lower::PassConfig c) {
                        for (StageConfig &s : c.stages)
                          if (auto *a = std::get_if<lower::AttentionConfig>(&s))
                            a->fuseBackward = fuse;
                        return c;
                      }});
  return variants;
}

std::vector<lower::PassConfig> trialConfigs(const std::vector<StageSpace> &spaces, const lower::PassConfig &rule) {
  std::vector<lower::PassConfig> trials;
  for (const StageSpace &s : spaces)
    for (const Candidate &c : s.kept)
      trials.push_back(s.with(rule, c.config));
  return trials;
}

std::vector<std::shared_ptr<const codegen::GeneratedModule>> distinctModules(const std::vector<StageSpace> &spaces) {
  std::vector<std::shared_ptr<const codegen::GeneratedModule>> out;
  std::set<std::string> sources;
  for (const StageSpace &s : spaces)
    for (const Candidate &c : s.kept)
      for (const auto &m : c.modules)
        if (sources.insert(m->source).second)
          out.push_back(m);
  return out;
}

} // namespace gnnjit::autotune
