// Planning and code generation of attention-family programs without a GPU:
// what each pass runs and saves, that the source is deterministic, and that
// NVRTC compiles every kernel of every attention layer for sm_90 across head
// shapes, heavy rows, int64 and unaligned inputs.
#include "exec/Program.h"
#include "examples/DistanceAttention.h"
#include "exec/KernelSource.h"
#include "exec/Tuning.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/KernelCache.h"

#include "TestData.h"

#include <doctest/doctest.h>

using namespace gnnjit;
using namespace gnnjit::exec;

namespace {

GraphFacts factsOf(int64_t median, int64_t max, lower::IndexWidth index = lower::IndexWidth::I32) {
  GraphFacts facts;
  facts.index = index;
  facts.in = facts.out = DegreeFacts{static_cast<double>(median), 0.0, median, max};
  return facts;
}

Program plan(const lower::LoweredLayer &lowered, Pass pass, const GraphFacts &facts, bool aligned = true) {
  RuleOptions rule;
  rule.aligned = aligned;
  return planProgram(lowered, pass, ruleConfig(lowered, pass, facts, rule));
}

lower::LoweredLayer attentionLayer(const std::string &name, int64_t heads, int64_t dim, bool edgeFeatures = false) {
  if (name == "distance_attention")
    return lower::lowerLayer(examples::distanceAttention(heads, dim));
  layers::LayerOptions o;
  o.dim = dim;
  if (name != "agnn")
    o.heads = heads;
  o.edgeFeatures = edgeFeatures;
  return lower::lowerLayer(layers::buildLayer(name, o));
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
  CHECK(step.savedValue == "value0"); // the backward's <dO, O>
  REQUIRE(forward.plan.saved.size() == 2);
  CHECK(forward.plan.saved[0].width == 4); // one log-sum-exp per head: O(N x H)
  const Program backward = plan(l, Pass::Backward, factsOf(8, 10));
  std::vector<std::string> kinds;
  for (const lower::Step &s : backward.plan.steps)
    if (const auto *a = std::get_if<lower::AttentionStep>(&s))
      kinds.push_back(a->mode == lower::AttentionStep::Mode::EdgeSum    ? "edge_sum"
                      : a->mode == lower::AttentionStep::Mode::HeadSums ? "head_sums"
                      : a->direction == lower::Direction::Out          ? "out"
                                                                       : "in");
  // <dO_i, O_i> per node first; the value's and the score's source
  // gradients merged into one pass over the transpose.
  CHECK(kinds == std::vector<std::string>{"head_sums", "out", "in", "edge_sum"});
  CHECK(std::get<lower::AttentionStep>(backward.plan.steps.front()).headSums.size() == 1);
  REQUIRE(backward.plan.saved.size() == 2);
  CHECK(backward.plan.saved[0].name == "lse0");
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

TEST_CASE("the attention tiling keeps heads whole in a group for any head dim") {
  for (int64_t dim : {1, 3, 7, 24, 32, 64, 96, 256})
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
        const int64_t lanes = dim / t.vec;
        CHECK(dim % t.vec == 0);
        CHECK((t.group % lanes == 0 || (lanes % t.group == 0 && t.chunks % (lanes / t.group) == 0)));
        CHECK(t.tileWidth() % dim == 0);
      }
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
                                             {1, 64, factsOf(30, 40), false}};
  int compiled = 0;
  for (const Variation &v : variations)
    for (const char *name : {"gatv2", "gat", "transformer", "agnn", "distance_attention"})
      for (bool edge : {false, true}) {
        const std::string layer = name;
        if (edge && layer != "gat" && layer != "gatv2" && layer != "transformer")
          continue;
        CAPTURE(layer);
        CAPTURE(edge);
        CAPTURE(v.heads);
        CAPTURE(v.dim);
        const lower::LoweredLayer l = attentionLayer(layer, v.heads, v.dim, edge);
        for (Pass pass : {Pass::Forward, Pass::Backward})
          for (const codegen::GeneratedModule &m : plan(l, pass, v.facts, v.aligned).code.modules) {
            CAPTURE(m.name);
            auto result = cache.tryCompile(kernelSource(m), runtime::CompileOptions{});
            REQUIRE_MESSAGE(result.ok(), std::string(result.ok() ? "" : result.error().what()));
            ++compiled;
          }
      }
  MESSAGE(compiled << " modules compiled");
  CHECK(compiled > 100);
}
