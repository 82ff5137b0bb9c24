// The autotuner's CPU parts: graph fingerprints, tuning records on disk
// (round trip, concurrent writers, corrupt and foreign lines), and each
// family's candidate configs, pruned by the degree model and the planner.
#include "autotune/Candidates.h"
#include "autotune/ConfigJson.h"
#include "autotune/Fingerprint.h"
#include "autotune/Records.h"
#include "autotune/Tuner.h"
#include "codegen/Program.h"
#include "graph/GraphSource.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "support/Error.h"

#include "TestData.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>
#include <thread>

using namespace gnnjit;
using autotune::TuneKey;
using autotune::TuneRecord;

namespace {

graph::Graph load(const std::string &spec) { return graph::Graph::fromEdges(graph::loadGraphSource(spec).edges); }

TuneKey someKey(int64_t stage = 0) {
  TuneKey k;
  k.layer = "1d43088c8d8d32dd";
  k.pass = "bwd";
  k.stage = stage;
  k.graph = "n2708-e10556-180c47dba863698b";
  k.width = 128;
  k.heads = 4;
  k.gpu = "NVIDIA H200";
  k.arch = "sm_90";
  k.driver = 13000;
  k.generator = "gnnjit-codegen 0.1.0";
  return k;
}

lower::LoweredLayer libraryLayer(const std::string &name, int64_t dim, int64_t heads = 1,
                                 const std::string &aggregation = "") {
  layers::LayerOptions o;
  o.dim = dim;
  o.aggregation = aggregation;
  if (layers::takes(layers::findLayer(name), layers::Knob::Heads))
    o.heads = heads;
  return lower::lowerLayer(layers::buildLayer(name, o));
}

autotune::GraphFacts skewedFacts(int64_t median, int64_t max) {
  autotune::GraphFacts f;
  f.in = f.out = autotune::DegreeFacts{static_cast<double>(median) * 2, static_cast<double>(median) * 4, median, max};
  return f;
}

} // namespace

TEST_CASE("fingerprints agree across loads of the same graph and differ by one edge") {
  const graph::Graph a = load("rmat:scale=10,ef=8,seed=3"), b = load("rmat:scale=10,ef=8,seed=3");
  CHECK(autotune::fingerprint(a).key() == autotune::fingerprint(b).key());
  CHECK(autotune::fingerprint(a).key() != autotune::fingerprint(load("rmat:scale=10,ef=8,seed=4")).key());
  graph::EdgeList edges;
  edges.numNodes = 100;
  for (int64_t j = 0; j < 99; ++j)
    edges.add(j, j + 1);
  const std::string before = autotune::fingerprint(graph::Graph::fromEdges(edges)).key();
  edges.add(7, 3);
  const std::string after = autotune::fingerprint(graph::Graph::fromEdges(edges)).key();
  CHECK(before != after);
  // The same degrees and counts, one edge moved: only the CSR hash tells.
  graph::EdgeList moved = edges;
  moved.add(0, 50); // compare two graphs of one more edge each, to different rows of equal degree
  graph::EdgeList other = edges;
  other.add(0, 60);
  CHECK(autotune::fingerprint(graph::Graph::fromEdges(moved)).key() !=
        autotune::fingerprint(graph::Graph::fromEdges(other)).key());
  if (const auto folder = test::sharedFile("cora")) { // a dataset folder, by its path
    const graph::Graph c1 = load(folder->string()), c2 = load(folder->string());
    CHECK(autotune::fingerprint(c1).key() == autotune::fingerprint(c2).key());
  }
}

TEST_CASE("a tuning record of each family round-trips through its JSON line") {
  lower::SpmmConfig spmm;
  spmm.backend = lower::SpmmConfig::Backend::Cusparse;
  spmm.cusparseAlgorithm = 2;
  lower::ReductionConfig reduction;
  reduction.group = 8;
  reduction.heavyThreshold = 512;
  reduction.packedMerge = true;
  reduction.argScatter = false;
  lower::AttentionConfig attention;
  attention.group = 16;
  attention.chunks = 2;
  attention.segmentLength = 64;
  attention.fuseBackward = true;
  for (const lower::StageConfig &config : {lower::StageConfig{spmm}, lower::StageConfig{reduction},
                                           lower::StageConfig{attention}, lower::StageConfig{std::monostate{}}}) {
    TuneRecord r;
    r.key = someKey(3);
    r.config = config;
    r.ms = 1.25;
    r.ruleMs = 2.5;
    r.candidates = 17;
    const TuneRecord back = autotune::recordFromLine(autotune::recordLine(r));
    CHECK(back.key == r.key);
    CHECK(back.config == r.config);
    CHECK(back.ms == r.ms);
    CHECK(back.ruleMs == r.ruleMs);
    CHECK(back.candidates == r.candidates);
  }
}

TEST_CASE("a record naming cuSPARSE ALG3 (no longer used) is refused when read, so the stage is tuned again") {
  lower::SpmmConfig spmm;
  spmm.backend = lower::SpmmConfig::Backend::Cusparse;
  spmm.cusparseAlgorithm = 1;
  nlohmann::json j = autotune::configJson(spmm);
  CHECK(std::get<lower::SpmmConfig>(autotune::configFromJson(j)).cusparseAlgorithm == 1);
  j["cusparse_algorithm"] = 3;
  CHECK_THROWS_WITH_AS(autotune::configFromJson(j), "cuSPARSE algorithm 3 (0, 1 or 2)", std::invalid_argument);
}

TEST_CASE("records: corrupt and foreign lines are skipped and counted; the last record of a key wins") {
  test::TempDir dir;
  const autotune::RecordStore store(dir.path() / "tuning" / "records.jsonl");
  CHECK(store.load().records.empty()); // no file yet
  TuneRecord first;
  first.key = someKey();
  first.config = lower::AttentionConfig{};
  first.ms = 3;
  store.append(first);
  {
    std::ofstream out(store.file(), std::ios::app);
    out << "not json at all\n";
    out << R"({"format": 99, "key": {}})" << "\n";                        // another format
    out << R"({"format": 1, "key": {"layer": "x"}, "config": {}})" << "\n"; // fields missing
    out << R"({"format": 1, "key": )" << "\n";                              // cut short
  }
  TuneRecord second = first;
  second.ms = 2;
  store.append(second);
  const autotune::LoadedRecords loaded = store.load();
  CHECK(loaded.records.size() == 2);
  CHECK(loaded.skipped == 4);
  CHECK(loaded.firstProblem.find("line 2") != std::string::npos);
  REQUIRE(loaded.find(first.key));
  CHECK(loaded.find(first.key)->ms == 2);
  CHECK_FALSE(loaded.find(someKey(1)));
}

TEST_CASE("records: concurrent writers never interleave lines") {
  test::TempDir dir;
  const autotune::RecordStore store(dir.path() / "records.jsonl");
  constexpr int kWriters = 8, kEach = 40;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      for (int k = 0; k < kEach; ++k) {
        TuneRecord r;
        r.key = someKey(w * kEach + k);
        r.key.graph = std::string(200 + w, 'g'); // long lines
        r.config = lower::SpmmConfig{};
        store.append(r);
      }
    });
  for (std::thread &t : writers)
    t.join();
  const autotune::LoadedRecords loaded = store.load();
  CHECK(loaded.skipped == 0);
  REQUIRE(loaded.records.size() == kWriters * kEach);
  std::set<int64_t> stages;
  for (const TuneRecord &r : loaded.records)
    stages.insert(r.key.stage);
  CHECK(stages.size() == kWriters * kEach);
}

TEST_CASE("an unwritable records file is a UserError naming it") {
  test::TempDir dir;
  const std::filesystem::path file = dir.write("a-file", "x");
  const autotune::RecordStore store(file / "records.jsonl");
  TuneRecord r;
  r.key = someKey();
  r.config = lower::SpmmConfig{};
  CHECK_THROWS_WITH_AS(store.append(r), doctest::Contains("a-file"), UserError);
}

TEST_CASE("candidates: the rule's first, each family's own space, pruned by the degrees and by the planner") {
  const autotune::GraphFacts facts = skewedFacts(100, 100000);
  for (const char *name : {"gcn", "sage", "gatv2"}) {
    CAPTURE(std::string(name));
    const lower::LoweredLayer l = libraryLayer(name, 32, 4);
    for (lower::Pass pass : {lower::Pass::Forward, lower::Pass::Backward}) {
      const auto spaces = autotune::candidateSpaces(l, pass, facts, autotune::RuleOptions{}, false);
      REQUIRE_FALSE(spaces.empty());
      for (const autotune::StageSpace &s : spaces) {
        REQUIRE_FALSE(s.kept.empty());
        CHECK(s.kept.front().config == s.rule.config);
        CHECK(s.kept.size() > 3);
        std::set<std::string> labels;
        for (const autotune::Candidate &c : s.kept)
          CHECK(labels.insert(autotune::configJson(c.config).dump()).second); // no duplicates
        bool splitsTypical = false;
        for (const autotune::PrunedCandidate &p : s.pruned)
          splitsTypical |= p.why.find("splits typical rows") != std::string::npos;
        CHECK(splitsTypical); // thresholds 32 and 128 under a median degree of 100
        // Exhaustive keeps what the model pruned; only the planner still refuses.
        const auto all = autotune::candidateSpaces(l, pass, facts, autotune::RuleOptions{}, true);
        const auto same = std::find_if(all.begin(), all.end(), [&](const auto &x) { return x.stage == s.stage; });
        REQUIRE(same != all.end());
        CHECK(same->kept.size() > s.kept.size());
        for (const autotune::PrunedCandidate &p : same->pruned)
          CHECK(p.why.find("the planner refuses it") == 0);
      }
    }
  }
  // GCN's SpMM may go through cuSPARSE, each of its algorithms a candidate.
  const auto gcn = autotune::candidateSpaces(libraryLayer("gcn", 128), lower::Pass::Forward, facts, {}, false);
  std::set<int> algorithms;
  for (const autotune::Candidate &c : gcn.at(0).kept)
    if (const auto *s = std::get_if<lower::SpmmConfig>(&c.config); s && s->backend == lower::SpmmConfig::Backend::Cusparse)
      algorithms.insert(s->cusparseAlgorithm);
  CHECK(algorithms == std::set<int>{0, 1, 2}); // never ALG3 (exec/CusparseSpmm.h)
  // Attention tilings keep heads whole: at head dim 7 (vec 1) heads are
  // padded to 8 lanes, and no group splits a (padded) head unevenly.
  for (const auto &s : autotune::candidateSpaces(libraryLayer("gatv2", 7, 3), lower::Pass::Forward, facts, {}, true))
    for (const autotune::Candidate &c : s.kept) {
      const auto &a = std::get<lower::AttentionConfig>(c.config);
      CHECK(a.laneDim(7) == 8);
      CHECK((a.group % 8 == 0 || 8 % a.group == 0));
    }
}

TEST_CASE("candidates: tilings whose row loads fill less than a sector, in many chunks, are pruned") {
  // GATv2 4 x 122 (heads padded to 128 lanes of pairs): one or two lanes of
  // 8 bytes per head would walk it in 32 or 64 chunks.
  const autotune::GraphFacts facts = skewedFacts(100, 100000);
  for (lower::Pass pass : {lower::Pass::Forward, lower::Pass::Backward})
    for (const auto &s : autotune::candidateSpaces(libraryLayer("gatv2", 122, 4), pass, facts, {}, false)) {
      for (size_t k = 1; k < s.kept.size(); ++k) {
        const auto &a = std::get<lower::AttentionConfig>(s.kept[k].config);
        CHECK_FALSE((a.group * a.vec < 8 && a.chunks >= 4));
      }
      bool subSector = false;
      for (const autotune::PrunedCandidate &p : s.pruned)
        subSector |= p.why.find("sub-sector loads") == 0;
      CHECK(subSector);
    }
}

TEST_CASE("candidates: SpMM and reduction tilings that cover a row in four or more tiles are pruned") {
  const autotune::GraphFacts facts = skewedFacts(100, 100000);
  const auto tilesOf = [](const lower::RowTiling &t, int64_t width) {
    const int64_t perTile = static_cast<int64_t>(t.group) * t.vec * t.chunks;
    return (width + perTile - 1) / perTile;
  };
  for (const auto &[name, aggregation] : {std::pair{"gcn", ""}, std::pair{"sage", "max"}})
    for (int64_t width : {32, 128, 490}) {
      bool pruned = false;
      for (lower::Pass pass : {lower::Pass::Forward, lower::Pass::Backward})
        for (const auto &s :
             autotune::candidateSpaces(libraryLayer(name, width, 1, aggregation), pass, facts, {}, false)) {
          for (size_t k = 1; k < s.kept.size(); ++k)
            std::visit(
                [&](const auto &config) {
                  using Config = std::decay_t<decltype(config)>;
                  if constexpr (std::is_same_v<Config, lower::SpmmConfig>)
                    if (config.backend == lower::SpmmConfig::Backend::Cusparse)
                      return; // no tiles
                  if constexpr (std::is_base_of_v<lower::RowTiling, Config>)
                    CHECK(tilesOf(config, width) < 4);
                },
                s.kept[k].config);
          for (const autotune::PrunedCandidate &p : s.pruned)
            pruned |= p.why.find("tiles") != std::string::npos;
        }
      // At 490 floats the knob grid's narrow groups (4 lanes x 2 x 8 = 64 floats) take 8 tiles.
      if (width == 490)
        CHECK(pruned);
    }
  // Attention keeps its tiles of whole heads: GATv2 4 x 122 in 8 lanes (4 tiles) stays a candidate.
  bool fourTiles = false;
  for (const auto &s : autotune::candidateSpaces(libraryLayer("gatv2", 122, 4), lower::Pass::Forward, facts, {}, false))
    for (const autotune::Candidate &c : s.kept)
      if (const auto *a = std::get_if<lower::AttentionConfig>(&c.config))
        fourTiles |= a->group == 8;
  CHECK(fourTiles);
}

TEST_CASE("candidates: splitting typical rows is pruned only when the rows fill the GPU") {
  const lower::LoweredLayer l = libraryLayer("gatv2", 32, 4);
  const auto splitsTypical = [&](int64_t nodes) {
    autotune::GraphFacts facts = skewedFacts(100, 100000);
    facts.nodes = nodes;
    int kept = 0, pruned = 0;
    for (const autotune::StageSpace &s : autotune::candidateSpaces(l, lower::Pass::Forward, facts, {}, false)) {
      for (const autotune::Candidate &c : s.kept)
        if (const auto *a = std::get_if<lower::AttentionConfig>(&c.config); a && a->heavyThreshold == 32)
          ++kept;
      for (const autotune::PrunedCandidate &p : s.pruned)
        pruned += p.why.find("splits typical rows") != std::string::npos ? 1 : 0;
    }
    return std::pair{kept, pruned};
  };
  // tolokers-like: 11,758 rows of a warp each are under two waves of an H200.
  CHECK(splitsTypical(11758).first > 0);
  CHECK(splitsTypical(11758).second == 0);
  // Four million rows fill it many times over; so do rows of unknown count.
  CHECK(splitsTypical(1 << 22).first == 0);
  CHECK(splitsTypical(1 << 22).second > 0);
  CHECK(splitsTypical(0).second > 0);
}

namespace {

/// A fake pass time: each attention stage costs 10 / its group (wider
/// groups faster) plus its segment length / 1000 (shorter segments faster).
double fakeMs(const lower::PassConfig &config) {
  double ms = 0;
  for (const lower::StageConfig &s : config.stages)
    if (const auto *a = std::get_if<lower::AttentionConfig>(&s))
      ms += 10.0 / a->group + static_cast<double>(a->segmentLength) / 1000.0;
  return ms;
}

struct Search {
  lower::LoweredLayer layer = libraryLayer("transformer", 32, 4);
  autotune::GraphFacts facts = skewedFacts(8, 1000);
  lower::PassConfig rule = autotune::ruleConfig(layer, lower::Pass::Backward, facts, {});
  std::vector<autotune::StageSpace> spaces =
      autotune::candidateSpaces(layer, lower::Pass::Backward, facts, autotune::RuleOptions{}, false);
};

const lower::AttentionConfig *attentionOf(const lower::StageConfig &c) { return std::get_if<lower::AttentionConfig>(&c); }

autotune::SearchOptions budgetOnly(double seconds) {
  autotune::SearchOptions o;
  o.budgetSeconds = seconds;
  return o;
}

} // namespace

TEST_CASE("candidates: stages the rule runs in one edge loop are tuned as one, and recorded each") {
  // GATv2's fused backward sums over in-edges and over all edges in one
  // loop, which a config of either stage alone would split.
  const lower::LoweredLayer l = libraryLayer("gatv2", 8, 4);
  const autotune::GraphFacts facts = skewedFacts(8, 40000);
  const lower::PassConfig rule = autotune::ruleConfig(l, lower::Pass::Backward, facts, {});
  const auto spaces = autotune::candidateSpaces(l, lower::Pass::Backward, facts, {}, false);
  const auto attentionSteps = [&](const lower::PassConfig &c) {
    const codegen::Program p = codegen::planProgram(l, lower::Pass::Backward, c);
    return std::count_if(p.plan.steps.begin(), p.plan.steps.end(),
                         [](const lower::Step &s) { return std::holds_alternative<lower::AttentionStep>(s); });
  };
  std::vector<size_t> tiedStages;
  for (const autotune::StageSpace &s : spaces)
    tiedStages.insert(tiedStages.end(), s.tied.begin(), s.tied.end());
  REQUIRE(tiedStages.size() == 1);
  const auto tied = std::find_if(spaces.begin(), spaces.end(), [](const auto &s) { return !s.tied.empty(); });
  CHECK(tied->what.find(" with ") != std::string::npos);
  for (const autotune::StageSpace &s : spaces)
    CHECK(s.stage != tiedStages[0]); // no space of its own
  // Every candidate of the tied space keeps the loops as few as the rule's.
  const auto ruleSteps = attentionSteps(rule);
  for (const lower::PassConfig &trial : autotune::trialConfigs({*tied}, rule)) {
    CHECK(trial.stages[tiedStages[0]] == trial.stages[tied->stage]);
    CHECK(attentionSteps(trial) == ruleSteps);
  }
  // Setting the one stage alone splits the loop: what the tie avoids.
  lower::PassConfig alone = rule;
  alone.stages[tied->stage] = tied->kept.back().config;
  CHECK(attentionSteps(alone) > ruleSteps);
  // The search sets both; the records carry both.
  const autotune::TunedPass tuned = autotune::searchPass(
      {*tied}, rule, [&](const lower::PassConfig &c) { return c == rule ? 2.0 : fakeMs(c) / 1e3; },
      [](const lower::PassConfig &) { return std::string(); }, [] { return 0.0; });
  REQUIRE(tuned.config != rule);
  CHECK(tuned.config.stages[tiedStages[0]] == tuned.config.stages[tied->stage]);
  std::set<int64_t> recorded;
  for (const TuneRecord &r : autotune::recordsOf(tuned, someKey())) {
    CHECK(r.config == tuned.config.stages[tied->stage]);
    recorded.insert(r.key.stage);
  }
  CHECK(recorded == std::set<int64_t>{static_cast<int64_t>(tied->stage), static_cast<int64_t>(tiedStages[0])});
  // SpMM and reduction stages share no loops.
  for (const char *name : {"gcn", "sage"})
    for (const auto &s : autotune::candidateSpaces(libraryLayer(name, 32), lower::Pass::Backward, facts, {}, false))
      CHECK(s.tied.empty());
}

TEST_CASE("search: the fastest candidate per stage, stage by stage; a tie keeps the rule's") {
  Search s;
  REQUIRE(s.spaces.size() >= 2);
  double clock = 0;
  std::vector<lower::PassConfig> seen;
  const autotune::TunedPass tuned = autotune::searchPass(
      s.spaces, s.rule,
      [&](const lower::PassConfig &c) {
        seen.push_back(c);
        return fakeMs(c);
      },
      [](const lower::PassConfig &) { return std::string(); }, [&] { return clock; });
  REQUIRE(tuned.stages.size() == s.spaces.size());
  for (const autotune::TunedStage &stage : tuned.stages) {
    const auto *best = attentionOf(stage.timed[stage.best].candidate.config);
    REQUIRE(best);
    CHECK(best->group == 32);
    for (const autotune::TimedCandidate &t : stage.timed) {
      CHECK(t.ms >= stage.timed[stage.best].ms);
      if (attentionOf(t.candidate.config)->group == 32)
        CHECK(attentionOf(t.candidate.config)->segmentLength >= best->segmentLength);
    }
    CHECK(stage.timed[stage.best].ms <= stage.ruleMs);
  }
  // Later stages were timed with the earlier stages at their winners.
  const size_t first = s.spaces[0].stage;
  CHECK(seen.back().stages[first] == tuned.config.stages[first]);
  // All candidates equally fast: the rule's config stays.
  const autotune::TunedPass flat = autotune::searchPass(
      s.spaces, s.rule, [](const lower::PassConfig &) { return 1.0; },
      [](const lower::PassConfig &) { return std::string(); }, [] { return 0.0; });
  for (const autotune::TunedStage &stage : flat.stages)
    CHECK(stage.best == 0);
  CHECK(flat.config == s.rule);
}

namespace {

/// A fake module key: what an attention stage's kernels are built from (its
/// lanes, vector width and chunks); the heavy-row threshold and segment
/// length are launch parameters, as in the generated modules.
std::string fakeModule(const lower::StageConfig &c) {
  const auto *a = std::get_if<lower::AttentionConfig>(&c);
  return a ? fmt::format("group {} vec {} chunks {}", a->group, a->vec, a->chunks) : "";
}

} // namespace

TEST_CASE("search: compiled candidates first, one per set of modules before the others, fastest modules first") {
  const lower::LoweredLayer layer = libraryLayer("transformer", 32, 4);
  const autotune::GraphFacts facts = skewedFacts(8, 1000);
  const lower::PassConfig rule = autotune::ruleConfig(layer, lower::Pass::Forward, facts, {});
  const auto spaces = autotune::candidateSpaces(layer, lower::Pass::Forward, facts, {}, false);
  REQUIRE(spaces.size() == 1);
  const autotune::StageSpace &space = spaces[0];
  const size_t stage = space.stage;
  // Module sets, and each set's first candidate (the rest share its kernels).
  std::map<std::string, size_t> firstOf;
  for (size_t c = 0; c < space.kept.size(); ++c)
    firstOf.emplace(fakeModule(space.kept[c].config), c);
  REQUIRE(firstOf.size() > 2);
  REQUIRE(space.kept.size() > firstOf.size() + 2);
  // The rule's modules are compiled (it ran first); the others compile one
  // per wait of the search, in the reverse of the space's order.
  std::set<std::string> done{fakeModule(space.rule.config)};
  std::vector<std::string> toCompile;
  for (const autotune::Candidate &c : space.kept)
    if (!done.count(fakeModule(c.config)) &&
        std::find(toCompile.begin(), toCompile.end(), fakeModule(c.config)) == toCompile.end())
      toCompile.insert(toCompile.begin(), fakeModule(c.config));
  std::set<std::string> timedConfigs;
  std::map<std::string, double> setMs; // the best time of each set so far
  const auto untimed = [&](bool firstsOnly) {
    std::vector<size_t> out;
    for (size_t c = 1; c < space.kept.size(); ++c)
      if (!timedConfigs.count(autotune::configJson(space.kept[c].config).dump()) &&
          (!firstsOnly || firstOf[fakeModule(space.kept[c].config)] == c))
        out.push_back(c);
    return out;
  };
  const auto ready = [&](size_t c) { return done.count(fakeModule(space.kept[c].config)) > 0; };
  autotune::SearchOptions options;
  options.budgetSeconds = 1e9;
  options.modulesOf = [&](const autotune::Candidate &c) { return std::vector<std::string>{fakeModule(c.config)}; };
  options.compiled = [&](const std::vector<std::string> &keys) { return done.count(keys.at(0)) > 0; };
  int waits = 0;
  options.waitForProgress = [&](double) {
    ++waits;
    for (size_t c : untimed(false))
      CHECK_FALSE(ready(c)); // never waits while something compiled is untimed
    if (toCompile.empty())
      return false;
    done.insert(toCompile.back());
    toCompile.pop_back();
    return true;
  };
  int timings = 0;
  autotune::searchPass(
      spaces, rule,
      [&](const lower::PassConfig &config) {
        const std::string set = fakeModule(config.stages[stage]);
        if (timings++ > 0) { // the rule's is always first
          CHECK(done.count(set) > 0);
          const size_t c = static_cast<size_t>(
              std::find_if(space.kept.begin(), space.kept.end(),
                           [&](const autotune::Candidate &k) { return k.config == config.stages[stage]; }) -
              space.kept.begin());
          REQUIRE(c < space.kept.size());
          const bool first = firstOf[set] == c;
          if (!first) { // no compiled set is left untried, and no ready set is faster
            for (size_t f : untimed(true))
              CHECK_FALSE(ready(f));
            for (size_t o : untimed(false))
              if (ready(o) && setMs.count(fakeModule(space.kept[o].config)))
                CHECK(setMs[set] <= setMs[fakeModule(space.kept[o].config)]);
          }
        }
        timedConfigs.insert(autotune::configJson(config.stages[stage]).dump());
        const double ms = fakeMs(config);
        setMs[set] = setMs.count(set) ? std::min(setMs[set], ms) : ms;
        return ms;
      },
      [](const lower::PassConfig &) { return std::string(); }, [] { return 0.0; }, options);
  CHECK(waits > 0);
  CHECK(timings == static_cast<int>(space.kept.size())); // no budget: all
}

TEST_CASE("search: a candidate that fails or disagrees scores infinity with why; the search goes on") {
  Search s;
  const autotune::TunedPass tuned = autotune::searchPass(
      s.spaces, s.rule,
      [](const lower::PassConfig &c) {
        for (const lower::StageConfig &st : c.stages)
          if (const auto *a = attentionOf(st); a && a->group == 8)
            throw std::runtime_error("NVRTC could not compile it");
        return fakeMs(c);
      },
      [](const lower::PassConfig &c) {
        for (const lower::StageConfig &st : c.stages)
          if (const auto *a = attentionOf(st); a && a->group == 16)
            return std::string("out off by 3e-2");
        return std::string();
      },
      [] { return 0.0; });
  int failed = 0, disagreed = 0;
  for (const autotune::TunedStage &stage : tuned.stages)
    for (const autotune::TimedCandidate &t : stage.timed) {
      const auto *a = attentionOf(t.candidate.config);
      if (a->group == 8) {
        CHECK(t.ms == autotune::kUntimed);
        CHECK(t.failure.find("failed: NVRTC") == 0);
        ++failed;
      } else if (a->group == 16) {
        CHECK(t.ms == autotune::kUntimed);
        CHECK(t.failure.find("disagrees") == 0);
        ++disagreed;
      } else {
        CHECK(t.ms < autotune::kUntimed);
      }
    }
  CHECK(failed > 0);
  CHECK(disagreed > 0);
}

TEST_CASE("search: the budget is shared by the stages, past it the rest are untimed; records replay the winners") {
  Search s;
  REQUIRE(s.spaces.size() >= 2);
  for (const autotune::StageSpace &space : s.spaces)
    REQUIRE(space.kept.size() > 2);
  // A second per timing and a budget of 2 s per stage and half a second:
  // each stage's share ends between 2 and 2.5 s after it starts. The first
  // times its rule and one candidate, and starts no second one, which would
  // end past its share (a budget spent by the first stage would leave the
  // others their rule only); each later stage starts from the previous
  // one's winner, timed already, so its two seconds time two candidates.
  const double budget = 2.0 * static_cast<double>(s.spaces.size()) + 0.5;
  double clock = 0;
  std::vector<lower::PassConfig> seen;
  const autotune::TunedPass tuned = autotune::searchPass(
      s.spaces, s.rule,
      [&](const lower::PassConfig &c) {
        CHECK(std::find(seen.begin(), seen.end(), c) == seen.end()); // no config is timed twice
        seen.push_back(c);
        clock += 1.0; // a second per timing
        return fakeMs(c);
      },
      [](const lower::PassConfig &) { return std::string(); }, [&] { return clock; }, budgetOnly(budget));
  for (size_t k = 0; k < tuned.stages.size(); ++k) {
    const autotune::TunedStage &stage = tuned.stages[k];
    int timed = 0, untimed = 0;
    for (const autotune::TimedCandidate &t : stage.timed) {
      (t.ms < autotune::kUntimed ? timed : untimed) += 1;
      if (t.ms == autotune::kUntimed)
        CHECK(t.failure.find("budget") != std::string::npos);
    }
    // Each timing's wall seconds are kept, 0 for one answered from memory
    // (a later stage's start) or never started.
    for (size_t c = 0; c < stage.timed.size(); ++c) {
      const autotune::TimedCandidate &t = stage.timed[c];
      CHECK(t.seconds == (t.ms == autotune::kUntimed || (k > 0 && c == 0) ? 0.0 : 1.0));
      if (t.seconds > 0)
        CHECK(t.began < budget);
    }
    const int expected = k == 0 ? 2 : 3; // with the rule's (a later stage's known already)
    CHECK(timed == expected);
    CHECK(untimed == static_cast<int>(stage.timed.size()) - expected);
    CHECK(stage.ruleMs < autotune::kUntimed);
  }
  // The winners as records, back through a file, replayed over the rule.
  test::TempDir dir;
  const autotune::RecordStore store(dir.path() / "records.jsonl");
  TuneKey base = someKey();
  for (const TuneRecord &r : autotune::recordsOf(tuned, base))
    store.append(r);
  const autotune::Replayed replayed = autotune::replay(s.rule, store.load(), base);
  size_t recordedStages = 0; // each tuned stage, and those tied to it
  for (const autotune::TunedStage &stage : tuned.stages)
    recordedStages += 1 + stage.tied.size();
  CHECK(recordedStages > tuned.stages.size());
  CHECK(replayed.fromRecords == static_cast<int>(recordedStages));
  CHECK(replayed.config == tuned.config);
  // Another GPU's records do not apply.
  TuneKey other = base;
  other.gpu = "NVIDIA A100";
  CHECK(autotune::replay(s.rule, store.load(), other).fromRecords == 0);
}

TEST_CASE("search: a resumed search answers what the pass timed from memory, with no time left too, and goes on") {
  Search s;
  REQUIRE(s.spaces.size() >= 2);
  double clock = 0;
  std::vector<lower::PassConfig> seen;
  const autotune::PassTimer timer = [&](const lower::PassConfig &c) {
    CHECK(std::find(seen.begin(), seen.end(), c) == seen.end()); // no config is timed twice, across searches
    seen.push_back(c);
    clock += 1.0;
    return fakeMs(c);
  };
  const auto agree = [&](const lower::PassConfig &) {
    clock += 0.25; // a check: a quarter of a timing
    return std::string();
  };
  autotune::SearchMemory memory;
  autotune::SearchOptions o = budgetOnly(4.5);
  o.memory = &memory;
  const autotune::TunedPass first = autotune::searchPass(s.spaces, s.rule, timer, agree, [&] { return clock; }, o);
  REQUIRE(autotune::leftUntimed(first));
  size_t candidates = 0;
  for (const auto &space : s.spaces)
    candidates += space.kept.size();
  REQUIRE(memory.timed.size() == seen.size());
  CHECK(memory.longestSeconds == 1.25);
  for (const auto &[config, t] : memory.timed) // the rule's config is timed unchecked
    CHECK(t.checkSeconds == (config == s.rule ? 0.0 : 0.25));
  const auto timedCount = [](const autotune::TunedPass &t) {
    size_t n = 0;
    for (const autotune::TunedStage &stage : t.stages)
      for (const autotune::TimedCandidate &c : stage.timed)
        n += c.ms < autotune::kUntimed ? 1 : 0;
    return n;
  };
  CHECK(autotune::untimedCount(first) + timedCount(first) == candidates); // each timed, or left
  // No time left: the same pass again times nothing and keeps all it knew.
  o.budgetSeconds = clock;
  const autotune::TunedPass again = autotune::searchPass(s.spaces, s.rule, timer, agree, [&] { return clock; }, o);
  CHECK(again.config == first.config);
  CHECK(timedCount(again) == timedCount(first));
  for (const autotune::TunedStage &stage : again.stages)
    for (const autotune::TimedCandidate &c : stage.timed)
      CHECK(c.seconds == 0.0); // answered from memory
  // With time: it goes on from there, never slower than before.
  o.budgetSeconds = clock + 1000.0;
  const size_t before = seen.size();
  const autotune::TunedPass resumed = autotune::searchPass(s.spaces, s.rule, timer, agree, [&] { return clock; }, o);
  CHECK(seen.size() > before);
  CHECK_FALSE(autotune::leftUntimed(resumed));
  CHECK(timedCount(resumed) > timedCount(first));
  CHECK(fakeMs(resumed.config) <= fakeMs(first.config));
}

TEST_CASE("the passes share the budget by need: one needing less than an equal part gets its need") {
  using autotune::shareByNeed;
  // A forward of 8 timings of 0.13 s beside a backward of 24: the forward
  // is searched whole, the backward gets the rest.
  const std::vector<double> er = shareByNeed({8 * 0.13, 24 * 0.13}, 2.3);
  CHECK(er[0] == doctest::Approx(1.04));
  CHECK(er[1] == doctest::Approx(1.26));
  // Both needing more than half: halves. Both less: the larger need gets the rest.
  CHECK(shareByNeed({5.0, 4.0}, 3.0) == std::vector<double>{1.5, 1.5});
  const std::vector<double> small = shareByNeed({0.5, 0.2}, 3.0);
  CHECK(small[1] == doctest::Approx(0.2));
  CHECK(small[0] == doctest::Approx(2.8));
  // Three passes, in any order; nothing left, nothing shared; no need, no time but the rest.
  const std::vector<double> three = shareByNeed({2.0, 0.3, 2.0}, 3.0);
  CHECK(three[1] == doctest::Approx(0.3));
  CHECK(three[0] == doctest::Approx(1.35));
  CHECK(three[2] == doctest::Approx(1.35));
  CHECK(shareByNeed({1.0, 2.0}, -1.0) == std::vector<double>{0.0, 0.0});
  CHECK(shareByNeed({0.0, 0.0}, 2.0) == std::vector<double>{0.0, 2.0});
  CHECK(shareByNeed({}, 2.0).empty());
}

TEST_CASE("search: before any timing, the timer's estimate decides what starts; the estimate gives way to timings") {
  Search s;
  // An estimate past the whole budget: not even the rule's config starts,
  // so every stage keeps the rule, untimed.
  autotune::SearchOptions o = budgetOnly(3.0);
  o.expectedTimingSeconds = 4.0;
  int timings = 0;
  const auto counting = [&](const lower::PassConfig &c) {
    ++timings;
    return fakeMs(c);
  };
  const auto agree = [](const lower::PassConfig &) { return std::string(); };
  const autotune::TunedPass none = autotune::searchPass(s.spaces, s.rule, counting, agree, [] { return 0.0; }, o);
  CHECK(timings == 0);
  CHECK(none.config == s.rule);
  CHECK(autotune::recordsOf(none, someKey()).empty());
  // An estimate of a second where timings take a tenth: after the first,
  // the measured cost decides, and the stages time far more than 3 s / 1 s.
  double clock = 0;
  o.expectedTimingSeconds = 1.0;
  const autotune::TunedPass timed = autotune::searchPass(
      s.spaces, s.rule,
      [&](const lower::PassConfig &c) {
        clock += 0.1;
        return counting(c);
      },
      agree, [&] { return clock; }, o);
  CHECK(timings > 3 + static_cast<int>(s.spaces.size()));
  CHECK(clock <= 3.0 + 1e-9);
  CHECK(timed.stages.front().ruleMs < autotune::kUntimed);
}

TEST_CASE("run's configs from records: the recorded stages over the rule's; one the planner refuses is not used") {
  const lower::LoweredLayer l = libraryLayer("gatv2", 32, 4);
  const autotune::GraphFacts facts = skewedFacts(8, 1000);
  const lower::PassConfig rule = autotune::ruleConfig(l, lower::Pass::Backward, facts, {});
  TuneKey base = someKey();
  autotune::LoadedRecords records;
  autotune::ProgramCache programs(l);
  CHECK_FALSE(autotune::recordedConfig(programs, lower::Pass::Backward, rule, records, base).config); // none: the rule's
  size_t stage = 0;
  while (!std::holds_alternative<lower::AttentionConfig>(rule.stages[stage]))
    ++stage;
  lower::AttentionConfig faster = std::get<lower::AttentionConfig>(rule.stages[stage]);
  faster.segmentLength = 64;
  TuneRecord r;
  r.key = base;
  r.key.pass = "bwd";
  r.key.stage = static_cast<int64_t>(stage);
  r.config = faster;
  records.records.push_back(r);
  const autotune::RecordedConfig used = autotune::recordedConfig(programs, lower::Pass::Backward, rule, records, base);
  REQUIRE(used.config);
  CHECK(used.stages == 1);
  CHECK(used.config->stages[stage] == lower::StageConfig{faster});
  CHECK(used.program == programs.get(lower::Pass::Backward, *used.config)); // planned once, there
  CHECK_FALSE(autotune::recordedConfig(programs, lower::Pass::Forward, autotune::ruleConfig(l, lower::Pass::Forward, facts, {}),
                                       records, base)
                  .config); // the backward's record is not the forward's
  lower::AttentionConfig broken = faster;
  broken.vec = 3; // a vector width no kernel takes
  records.records.back().config = broken;
  const autotune::RecordedConfig refused = autotune::recordedConfig(programs, lower::Pass::Backward, rule, records, base);
  CHECK_FALSE(refused.config);
  CHECK_FALSE(refused.refused.empty());
}

TEST_CASE("search: the fused attention backward is a pass variant, adopted only when the whole pass is faster") {
  for (bool ruleFuses : {true, false}) { // the default, then a rule told to keep separate loops
    CAPTURE(ruleFuses);
    Search s;
    autotune::RuleOptions options;
    options.fuseAttentionBackward = ruleFuses;
    s.rule = autotune::ruleConfig(s.layer, lower::Pass::Backward, s.facts, options);
    s.spaces = autotune::candidateSpaces(s.layer, lower::Pass::Backward, s.facts, options, false);
    const auto allFused = [](const lower::PassConfig &c) {
      for (const lower::StageConfig &st : c.stages)
        if (const auto *a = attentionOf(st); a && !a->fuseBackward)
          return false;
      return true;
    };
    const auto noneFused = [](const lower::PassConfig &c) {
      for (const lower::StageConfig &st : c.stages)
        if (const auto *a = attentionOf(st); a && a->fuseBackward)
          return false;
      return true;
    };
    // Per-stage candidates keep the rule's setting: alone in one stage the
    // knob shares nothing.
    for (const autotune::StageSpace &space : s.spaces)
      for (const autotune::Candidate &c : space.kept)
        CHECK(attentionOf(c.config)->fuseBackward == ruleFuses);
    const auto variants = autotune::passVariants(lower::Pass::Backward, s.rule);
    REQUIRE(variants.size() == 1);
    CHECK(autotune::passVariants(lower::Pass::Forward, autotune::ruleConfig(s.layer, lower::Pass::Forward, s.facts, {}))
              .empty());
    const lower::PassConfig flipped = variants[0].apply(s.rule);
    CHECK((ruleFuses ? noneFused(flipped) : allFused(flipped)));
    for (double variantFactor : {0.5, 2.0}) { // the other setting twice as fast, then twice as slow
      CAPTURE(variantFactor);
      const auto isVariant = [&](const lower::PassConfig &c) { return ruleFuses ? noneFused(c) : allFused(c); };
      const autotune::TunedPass tuned = autotune::searchPass(
          s.spaces, s.rule,
          [&](const lower::PassConfig &c) { return fakeMs(c) * (isVariant(c) ? variantFactor : 1.0); },
          [](const lower::PassConfig &) { return std::string(); }, [] { return 0.0; }, {}, variants);
      REQUIRE(tuned.variants.size() == 1);
      CHECK(tuned.variants[0].ms == doctest::Approx(tuned.stagesMs * variantFactor));
      const bool adopted = variantFactor < 1;
      CHECK(allFused(tuned.config) == (ruleFuses != adopted));
      // The records carry what won.
      for (const TuneRecord &r : autotune::recordsOf(tuned, someKey()))
        CHECK(attentionOf(r.config)->fuseBackward == (ruleFuses != adopted));
    }
    // A variant whose kernels do not compile in time stays untimed (and
    // may be resumed); the hook is asked for the variant of the winners.
    for (bool compiles : {true, false}) {
      CAPTURE(compiles);
      autotune::SearchOptions o;
      std::vector<lower::PassConfig> asked;
      o.compileBy = [&](const lower::PassConfig &c, double deadline) {
        CHECK(deadline <= o.budgetSeconds);
        asked.push_back(c);
        return compiles;
      };
      const autotune::TunedPass tuned = autotune::searchPass(
          s.spaces, s.rule, [&](const lower::PassConfig &c) { return fakeMs(c); },
          [](const lower::PassConfig &) { return std::string(); }, [] { return 0.0; }, o, variants);
      REQUIRE(asked.size() == 1);
      CHECK(asked[0] == variants[0].apply(tuned.config));
      REQUIRE(tuned.variants.size() == 1);
      CHECK((tuned.variants[0].ms < autotune::kUntimed) == compiles);
      CHECK(autotune::leftUntimed(tuned) == !compiles);
    }
  }
}
