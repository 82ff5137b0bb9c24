// Planning and code generation of attention-family programs without a GPU:
// what each pass runs and saves, that the source is deterministic, and that
// NVRTC compiles every kernel of every attention layer for sm_90 across head
// shapes, heavy rows, int64 and unaligned inputs.
#include "autotune/Rule.h"
#include "codegen/Program.h"
#include "examples/DistanceAttention.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/KernelCache.h"

#include "exec/AttentionTestLayers.h"
#include "CompileModules.h"
#include "TestData.h"

#include <doctest/doctest.h>

using namespace gnnjit;
using namespace gnnjit::autotune;
using namespace gnnjit::exec;
using codegen::Program;
using codegen::planProgram;
using lower::Pass;

namespace {

GraphFacts factsOf(int64_t median, int64_t max, lower::IndexWidth index = lower::IndexWidth::I32) {
  GraphFacts facts;
  facts.index = index;
  facts.in = facts.out = DegreeFacts{static_cast<double>(median), 0.0, median, max};
  return facts;
}

Program plan(const lower::LoweredLayer &lowered, Pass pass, const GraphFacts &facts, bool aligned = true,
             bool fuseBackward = false) {
  RuleOptions rule;
  rule.aligned = aligned;
  rule.fuseAttentionBackward = fuseBackward;
  return planProgram(lowered, pass, ruleConfig(lowered, pass, facts, rule));
}

lower::LoweredLayer attentionLayer(const std::string &name, int64_t heads, int64_t dim, bool edgeFeatures = false) {
  if (name == "distance_attention")
    return lower::lowerLayer(examples::distanceAttention(heads, dim));
  if (name == "source_score")
    return lower::lowerLayer(test::sourceScoreAttention(heads, dim));
  layers::LayerOptions o;
  o.dim = dim;
  if (name != "agnn")
    o.heads = heads;
  o.edgeFeatures = edgeFeatures;
  return lower::lowerLayer(layers::buildLayer(name, o));
}

/// fn(lowered) for every attention layer at (heads, dim) (AGNN at one
/// head), with edge features too where the layer takes them.
template <typename Fn> void forEachAttentionLayer(int64_t heads, int64_t dim, Fn fn) {
  for (const char *name : {"gatv2", "gat", "transformer", "agnn", "distance_attention", "source_score"})
    for (bool edge : {false, true}) {
      const std::string layer = name;
      if (edge && layer != "gat" && layer != "gatv2" && layer != "transformer")
        continue;
      CAPTURE(layer);
      CAPTURE(edge);
      CAPTURE(heads);
      CAPTURE(dim);
      fn(attentionLayer(layer, heads, dim, edge));
    }
}

/// The attention steps of a plan in order: "head_sums", "edge_sum" (a sum
/// over edge ranges), or the CSR a sum walks ("in", "out").
std::vector<std::string> attentionKinds(const Program &p) {
  std::vector<std::string> kinds;
  for (const lower::Step &s : p.plan.steps)
    if (const auto *a = std::get_if<lower::AttentionStep>(&s))
      kinds.push_back(a->mode == lower::AttentionStep::Mode::EdgeSum    ? "edge_sum"
                      : a->mode == lower::AttentionStep::Mode::HeadSums ? "head_sums"
                      : a->direction == lower::Direction::Out          ? "out"
                                                                       : "in");
  return kinds;
}

} // namespace

TEST_CASE("GATv2: one online-softmax pass forward, saving log-sum-exps; three edge loops backward") {
  const lower::LoweredLayer l = attentionLayer("gatv2", 4, 32);
  const Program forward = plan(l, Pass::Forward, factsOf(8, 10));
  REQUIRE(forward.plan.steps.size() == 1);
  const auto &step = std::get<lower::AttentionStep>(forward.plan.steps[0]);
  CHECK(step.mode == lower::AttentionStep::Mode::Softmax);
  REQUIRE(step.outputs.size() == 1);
  CHECK(step.outputs[0].target == "out"); // the concatenation of heads is fused
  CHECK(step.savedLse == "lse0");
  // The backward's <dO, O> reads O, which the output is (heads
  // concatenated): no copy of it is written or kept.
  CHECK(step.savedValue.empty());
  REQUIRE(forward.plan.saved.size() == 2);
  CHECK(forward.plan.saved[0].width == 4); // one log-sum-exp per head: O(N x H)
  CHECK(forward.plan.saved[0].aliasOf.empty());
  CHECK(forward.plan.saved[1].name == "value0");
  CHECK(forward.plan.saved[1].aliasOf == "out");
  const Program backward = plan(l, Pass::Backward, factsOf(8, 10));
  const std::vector<std::string> kinds = attentionKinds(backward);
  // <dO_i, O_i> per node first; the value's and the score's source
  // gradients merged into one pass over the transpose.
  CHECK(kinds == std::vector<std::string>{"head_sums", "out", "in", "edge_sum"});
  CHECK(std::get<lower::AttentionStep>(backward.plan.steps.front()).headSums.size() == 1);
  REQUIRE(backward.plan.saved.size() == 2);
  CHECK(backward.plan.saved[0].name == "lse0");
  CHECK(backward.plan.saved[1].aliasOf == "out"); // the backward reads the forward's output
}

TEST_CASE("GATv2 averaging its heads saves the aggregate: the output is not the aggregate") {
  layers::LayerOptions o;
  o.dim = 32;
  o.heads = 4;
  o.concat = false;
  const lower::LoweredLayer l = lower::lowerLayer(layers::buildLayer("gatv2", o));
  for (Pass pass : {Pass::Forward, Pass::Backward}) {
    const Program p = plan(l, pass, factsOf(8, 10));
    REQUIRE(p.plan.saved.size() == 2);
    CHECK(p.plan.saved[1].name == "value0");
    CHECK(p.plan.saved[1].aliasOf.empty());
  }
  const Program forward = plan(l, Pass::Forward, factsOf(8, 10));
  CHECK(std::get<lower::AttentionStep>(forward.plan.steps[0]).savedValue == "value0");
}

TEST_CASE("GATv2 with the fused backward: the attention vector's gradient in the destinations' pass") {
  const lower::LoweredLayer l = attentionLayer("gatv2", 4, 32);
  const Program backward = plan(l, Pass::Backward, factsOf(8, 10), true, true);
  const std::vector<std::string> kinds = attentionKinds(backward);
  // The attention vector's gradient (a sum over all edges) in the
  // destinations' pass.
  CHECK(kinds == std::vector<std::string>{"head_sums", "out", "in"});
  const auto &in = std::get<lower::AttentionStep>(backward.plan.steps.at(2));
  REQUIRE(in.outputs.size() == 2);
  CHECK(in.outputs[0].target == "xr");
  CHECK(!in.sumsAllEdges(0));
  CHECK(in.sumsAllEdges(1));
  CHECK(in.kernels.size() == 2); // strided rows, the finish of the sum
  const Program heavy = plan(l, Pass::Backward, factsOf(8, 5000), true, true);
  std::vector<lower::LaunchRule::Kind> launches;
  for (const lower::KernelEntry &e : std::get<lower::AttentionStep>(heavy.plan.steps.at(2)).kernels)
    launches.push_back(e.launch.kind);
  // Strided rows and segments (one partial per group), their combine, the finish of the sum.
  CHECK(launches == std::vector<lower::LaunchRule::Kind>{lower::LaunchRule::Kind::StridedRows,
                                                          lower::LaunchRule::Kind::StridedSegments,
                                                          lower::LaunchRule::Kind::SpmmCombine,
                                                          lower::LaunchRule::Kind::ElementBlocks});
}

TEST_CASE("GAT's per-head score gradients keep the lanes of their [heads, dim] sums") {
  const lower::LoweredLayer l = attentionLayer("gat", 4, 32);
  int perHead = 0;
  for (const lower::Step &s : plan(l, Pass::Backward, factsOf(8, 10)).plan.steps)
    if (const auto *a = std::get_if<lower::AttentionStep>(&s))
      for (size_t k = 0; k < a->outputs.size(); ++k)
        if (a->perHead(k)) {
          ++perHead;
          CHECK(a->lanes == dsl::Shape{4, 32});
          CHECK(a->outputs[k].stage.aggregate->shape() == dsl::Shape{4, 1});
        }
  CHECK(perHead == 2); // to the sources and to the destinations
}

/// The outputs of the backward's attention steps over out-edges, by target
/// (or "agg<k>"), one string per step.
std::vector<std::string> outEdgeSteps(const Program &p) {
  std::vector<std::string> found;
  for (const lower::Step &s : p.plan.steps)
    if (const auto *a = std::get_if<lower::AttentionStep>(&s);
        a && a->mode == lower::AttentionStep::Mode::Sum && a->direction == lower::Direction::Out) {
      std::string outputs;
      for (const lower::AttentionOutput &o : a->outputs)
        outputs += (outputs.empty() ? "" : " ") + (o.target.empty() ? "agg" + std::to_string(o.aggregate) : o.target);
      found.push_back(outputs);
    }
  return found;
}

TEST_CASE("with the fused backward, sums over the same edges share one edge loop") {
  // The Transformer's key and value gradients: one pass over the transpose
  // (alpha and the gathers of q_i and dO_i computed once per edge).
  const Program transformer = plan(attentionLayer("transformer", 4, 32), Pass::Backward, factsOf(8, 10), true, true);
  CHECK(outEdgeSteps(transformer) == std::vector<std::string>{"k v"});
  // GAT's [heads, dim] source aggregate and its per-head score gradient.
  const Program gat = plan(attentionLayer("gat", 4, 32), Pass::Backward, factsOf(8, 10), true, true);
  const std::vector<std::string> gatSteps = outEdgeSteps(gat);
  REQUIRE(gatSteps.size() == 1);
  CHECK(gatSteps[0].find(' ') != std::string::npos); // two outputs
  // GATv2 has one sum per CSR: nothing to share.
  const Program gatv2 = plan(attentionLayer("gatv2", 4, 32), Pass::Backward, factsOf(8, 10), true, true);
  CHECK(outEdgeSteps(gatv2) == std::vector<std::string>{"xl"});
  // Off (the default): one step per sum.
  const Program separate = plan(attentionLayer("transformer", 4, 32), Pass::Backward, factsOf(8, 10));
  CHECK(outEdgeSteps(separate) == std::vector<std::string>{"k", "v"});
}

TEST_CASE("a sum over all edges with no pass over in-edges to join keeps its edge ranges") {
  const Program p = plan(attentionLayer("source_score", 4, 32), Pass::Backward, factsOf(8, 10), true, true);
  const std::vector<std::string> kinds = attentionKinds(p);
  INFO(p.plan.describe());
  CHECK(kinds == std::vector<std::string>{"head_sums", "out", "edge_sum"});
}

TEST_CASE("heavy rows give attention steps segment and combine entries; the source is deterministic") {
  const lower::LoweredLayer l = attentionLayer("transformer", 2, 16, true);
  const Program a = plan(l, Pass::Forward, factsOf(8, 5000)), b = plan(l, Pass::Forward, factsOf(8, 5000));
  const auto &step = std::get<lower::AttentionStep>(a.plan.steps.at(0));
  CHECK(step.kernels.size() == 3);
  CHECK(step.config.heavyThreshold > 0);
  REQUIRE(a.code.modules.size() == b.code.modules.size());
  for (size_t m = 0; m < a.code.modules.size(); ++m)
    CHECK(a.code.modules[m].source == b.code.modules[m].source);
}

TEST_CASE("the attention tiling keeps heads whole in a group for any head dim, padding heads of odd lane counts") {
  for (int64_t dim : {1, 3, 5, 7, 24, 32, 61, 64, 96, 122, 256})
    for (int64_t heads : {1, 2, 4, 8})
      for (bool aligned : {true, false}) {
        CAPTURE(dim);
        CAPTURE(heads);
        AttentionInputs in;
        in.heads = heads;
        in.dim = dim;
        in.aligned = aligned;
        in.degrees = DegreeFacts{8, 0, 8, 1000};
        lower::PassConfig config;
        config.stages.emplace_back(chooseAttention(in, {}));
        if (!aligned)
          config = unalignedConfig(config);
        const auto &t = std::get<lower::AttentionConfig>(config.stages[0]);
        const int64_t laneDim = t.laneDim(dim), lanes = laneDim / t.vec;
        CHECK(dim % t.vec == 0); // a vector never straddles a head or its padding
        CHECK(laneDim % t.vec == 0);
        CHECK((t.group % lanes == 0 || (lanes % t.group == 0 && t.chunks % (lanes / t.group) == 0)));
        CHECK(t.tileWidth() % laneDim == 0);
        // Padded only where the real lanes (61 for 122 floats in pairs, 7,
        // 5, 3) leave a group reading less than 32 bytes of a row; then the
        // group grows. Power-of-two lane counts, multiples of 32 and 24
        // floats (6 lanes of 16 bytes: groups of 2, a full sector) never pad.
        const int64_t realLanes = dim / (aligned ? t.vec : 1);
        if ((realLanes & (realLanes - 1)) == 0 || realLanes % 32 == 0 || dim == 24 || dim == 96)
          CHECK(t.paddedDim == 0);
        if (dim == 61 || dim == 122 || dim == 7)
          CHECK((t.paddedDim > 0) == (heads * dim > 1));
        if (t.paddedDim > 0) {
          CHECK(t.paddedDim > dim);
          CHECK(t.group >= std::min<int64_t>(8, heads * lanes));
        }
      }
}

TEST_CASE("the forward and the backward list the same saved buffers, padded heads or not") {
  for (const auto &[heads, dim] : std::vector<std::pair<int64_t, int64_t>>{{4, 32}, {2, 7}, {4, 122}, {3, 5}})
    forEachAttentionLayer(heads, dim, [](const lower::LoweredLayer &l) {
      for (bool fused : {false, true}) {
        const Program f = plan(l, Pass::Forward, factsOf(8, 1000), true, fused);
        const Program b = plan(l, Pass::Backward, factsOf(8, 1000), true, fused);
        REQUIRE(f.plan.saved.size() == b.plan.saved.size());
        for (size_t k = 0; k < f.plan.saved.size(); ++k) {
          CHECK(f.plan.saved[k].name == b.plan.saved[k].name);
          CHECK(f.plan.saved[k].width == b.plan.saved[k].width); // one layout: the backward reads what the forward wrote
        }
      }
    });
  // Mean heads keep a copy of the aggregate: real columns, not the padded lanes'.
  layers::LayerOptions o;
  o.heads = 2;
  o.dim = 7;
  o.concat = false;
  const Program f = plan(lower::lowerLayer(layers::gatv2(o)), Pass::Forward, factsOf(8, 1000));
  bool copied = false;
  for (const lower::SavedBuffer &saved : f.plan.saved)
    if (saved.aliasOf.empty() && saved.name.rfind("value", 0) == 0) {
      CHECK(saved.width == 14);
      copied = true;
    }
  CHECK(copied);
}

TEST_CASE("NVRTC compiles every generated kernel of every attention layer for sm_90") {
  test::TempDir dir;
  runtime::KernelCache cache(runtime::KernelCacheConfig{dir.path(), "attention-plan-test"});
  struct Variation {
    int64_t heads, dim;
    GraphFacts facts;
    bool aligned = true;
  };
  const std::vector<Variation> variations = {{4, 32, factsOf(8, 10)},
                                             {3, 7, factsOf(16, 2000, lower::IndexWidth::I64)},
                                             {8, 256, factsOf(8, 600)},
                                             {2, 1, factsOf(4, 10), false},
                                             {1, 64, factsOf(30, 40), false},
                                             {4, 122, factsOf(16, 3000)}}; // heads padded to 128
  int compiled = 0;
  for (const Variation &v : variations)
    forEachAttentionLayer(v.heads, v.dim, [&](const lower::LoweredLayer &l) {
      for (Pass pass : {Pass::Forward, Pass::Backward})
        for (bool fuse : {false, true}) { // the backward's edge loops separate, then shared
          if (fuse && pass == Pass::Forward)
            continue;
          CAPTURE(fuse);
          compiled += test::compileModules(cache, plan(l, pass, v.facts, v.aligned, fuse));
        }
    });
  MESSAGE(compiled << " modules compiled");
  CHECK(compiled > 100);
}
