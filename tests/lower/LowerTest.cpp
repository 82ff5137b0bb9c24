#include "dsl/Layer.h"
#include "layers/Library.h"
#include "lower/Canonicalize.h"
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
