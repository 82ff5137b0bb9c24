#include "dsl/Layer.h"
#include "layers/Library.h"
#include "lower/Canonicalize.h"
#include "lower/KernelPlan.h"
#include "lower/Pipeline.h"

#include <doctest/doctest.h>

#include <map>

using namespace gnnjit;
using namespace gnnjit::dsl;
using lower::Family;

namespace {

lower::LoweredLayer lowerLibrary(const std::string &name, layers::LayerOptions options = {}) {
  return lower::lowerLayer(layers::findLayer(name).build(options));
}

} // namespace

TEST_CASE("every library layer lowers into its family") {
  const std::map<std::string, Family> expected = {
      {"gcn", Family::SpMM},         {"graphconv", Family::SpMM},      {"sage", Family::SpMM},
      {"gin", Family::SpMM},         {"gat", Family::Attention},       {"gatv2", Family::Attention},
      {"transformer", Family::Attention}, {"agnn", Family::Attention}, {"edgeconv", Family::Reduction},
  };
  for (const layers::LayerInfo &info : layers::library()) {
    CAPTURE(info.name);
    REQUIRE(expected.count(info.name));
    layers::LayerOptions options;
    options.heads = layers::takes(info, layers::Knob::Heads) ? 4 : 1;
    const lower::LoweredLayer lowered = lowerLibrary(info.name, options);
    CHECK(lowered.family() == expected.at(info.name));
    CHECK_FALSE(lowered.forward.empty());
    CHECK_FALSE(lowered.backward.stages.empty());
    CHECK(lowered.print() == lowerLibrary(info.name, options).print()); // deterministic
  }
}

TEST_CASE("SAGE's aggregation picks the family") {
  layers::LayerOptions options;
  options.aggregation = "max";
  CHECK(lowerLibrary("sage", options).family() == Family::Reduction);
  options.aggregation = "mean";
  CHECK(lowerLibrary("sage", options).family() == Family::SpMM);
}

TEST_CASE("SpMM stages split the structural weight from the source value") {
  const lower::LoweredLayer gcn = lowerLibrary("gcn");
  REQUIRE(gcn.forward.size() == 1);
  const lower::AggregationStage &s = gcn.forward[0];
  CHECK(s.family == Family::SpMM);
  REQUIRE(s.value);
  CHECK(s.value->level() == Level::Src);
  REQUIRE(s.weight);
  CHECK(s.scalarWeight);
  // Its backward is an SpMM on the transpose (gathering d_out at destinations).
  bool transposeSpmm = false;
  for (const lower::AggregationStage &b : gcn.backward.stages)
    transposeSpmm |= b.family == Family::SpMM && llvm::cast<Aggregate>(b.aggregate.get())->over() == Over::OutEdges;
  CHECK(transposeSpmm);
}

TEST_CASE("attention stages expose score and value; their backward stays attention") {
  layers::LayerOptions options;
  options.heads = 2;
  const lower::LoweredLayer gatv2 = lowerLibrary("gatv2", options);
  REQUIRE(gatv2.forward.size() == 1);
  CHECK(gatv2.forward[0].score);
  CHECK(gatv2.forward[0].score->shape() == Shape{2, 1});
  CHECK(gatv2.forward[0].value);
  int attention = 0, transposed = 0;
  for (const lower::AggregationStage &b : gatv2.backward.stages) {
    attention += b.family == Family::Attention;
    transposed += llvm::cast<Aggregate>(b.aggregate.get())->over() == Over::OutEdges;
  }
  // Every backward aggregation of attention reads alpha: value, score and
  // parameter gradients all stay in the attention family.
  CHECK(attention == static_cast<int>(gatv2.backward.stages.size()));
  CHECK(transposed >= 1);
}

TEST_CASE("the backward merges attention sums of one input over the same edges into one") {
  layers::LayerOptions options;
  options.heads = 2;
  const lower::LoweredLayer gatv2 = lowerLibrary("gatv2", options);
  // xl's gradient through the value and through the score: one sum over
  // out-edges (plus xr's over in-edges and att's over all edges).
  REQUIRE(gatv2.backward.stages.size() == 3);
  int outEdges = 0;
  for (const lower::AggregationStage &b : gatv2.backward.stages)
    outEdges += llvm::cast<Aggregate>(b.aggregate.get())->over() == Over::OutEdges;
  CHECK(outEdges == 1);
  for (const InputGradient &g : gatv2.backward.plan.gradients)
    if (g.input->name == "xl") {
      REQUIRE(g.terms.size() == 1);
      CHECK(llvm::isa<Aggregate>(g.terms[0].get()));
    }
  // SpMM layers keep their terms as differentiation wrote them (merging
  // would lose the weight x value form).
  const lower::LoweredLayer gin = lowerLibrary("gin");
  CHECK(gin.family() == Family::SpMM);
  for (const lower::AggregationStage &b : gin.backward.stages)
    CHECK(b.family != Family::Attention);
}

TEST_CASE("an attention layer's concatenated heads are element-wise in its aggregate") {
  layers::LayerOptions options;
  options.heads = 4;
  const lower::LoweredLayer gat = lowerLibrary("gat", options);
  const ExprPtr &out = gat.layer.outputs().front().value; // reshape of [4, D] into [1, 4D]
  CHECK(llvm::isa<Reshape>(out.get()));
  CHECK(lower::isElementwiseIn(out, *gat.forward[0].aggregate));
  // A mean over heads reads several elements of the aggregate per element.
  options.concat = false;
  const lower::LoweredLayer mean = lowerLibrary("gat", options);
  CHECK_FALSE(lower::isElementwiseIn(mean.layer.outputs().front().value, *mean.forward[0].aggregate));
}

TEST_CASE("GAT's per-head score gradients take the lanes of their [heads, dim] sums") {
  layers::LayerOptions options;
  options.heads = 4;
  options.dim = 8;
  const lower::LoweredLayer gat = lowerLibrary("gat", options);
  int perHead = 0;
  for (const lower::AggregationStage &b : gat.backward.stages)
    if (b.family == Family::Attention && b.aggregate->shape() == Shape{4, 1}) {
      ++perHead;
      CHECK(lower::attentionLanes(b) == Shape{4, 8});
    }
  CHECK(perHead == 2);
  CHECK(lower::attentionLanes(gat.forward[0]) == Shape{4, 8});
}

TEST_CASE("a sum of a message with destination data is a reduction") {
  LayerBuilder b("dst_message");
  auto x = b.nodeInput("x", {8});
  b.output("out", aggregate(Reduce::Sum, relu(x.src() - x.dst())));
  const lower::LoweredLayer l = lower::lowerLayer(b.build());
  CHECK(l.family() == Family::Reduction);
  CHECK(l.forward[0].reason.find("reads edge values") != std::string::npos);
  REQUIRE(l.nodes.prologue.empty()); // only leaves feed the message
}

TEST_CASE("per-node work is hoisted out of the edge loop") {
  LayerBuilder b("hoist");
  auto x = b.nodeInput("x", {8});
  auto w = b.param("w", {8});
  b.output("out", aggregate(Reduce::Sum, tanh(x.src() * w) * x.dst()));
  const lower::LoweredLayer l = lower::lowerLayer(b.build());
  REQUIRE(l.nodes.prologue.size() == 1);
  CHECK(l.nodes.prologue[0]->level() == Level::Src);
}

TEST_CASE("canonicalize folds constants, drops identities and shares equal nodes") {
  LayerBuilder b("canon");
  auto x = b.nodeInput("x", {4});
  auto scaled = x.src() * (Expr(2.0) * 0.5) + 0.0;
  b.output("a", aggregate(Reduce::Sum, scaled));
  b.output("b", aggregate(Reduce::Sum, x.src() * 1.0));
  const Layer canonical = lower::canonicalize(b.build());
  // Both outputs become the same aggregate of x@src.
  CHECK(canonical.outputs()[0].value == canonical.outputs()[1].value);
  CHECK(canonical.print().find("mul") == std::string::npos);
  CHECK(canonical.print().find("add") == std::string::npos);
}
