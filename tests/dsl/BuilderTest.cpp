#include "DslTestLayers.h"
#include "dsl/Differentiate.h"
#include "dsl/Layer.h"

#include <doctest/doctest.h>

using namespace gnnjit;
using namespace gnnjit::dsl;

TEST_CASE("shapes broadcast per axis") {
  CHECK(broadcast({4, 32}, {4, 1}) == Shape{4, 32});
  CHECK(broadcast({1, 32}, {4, 32}) == Shape{4, 32});
  CHECK(broadcast({1, 1}, {4, 32}) == Shape{4, 32});
  CHECK(broadcast({4, 1}, {1, 32}) == Shape{4, 32});
  CHECK_FALSE(broadcast({4, 32}, {2, 32}).has_value());
  CHECK_FALSE(broadcast({1, 16}, {1, 32}).has_value());
}

TEST_CASE("levels join to the finer one") {
  CHECK(join(Level::Global, Level::Src) == Level::Src);
  CHECK(join(Level::Src, Level::Dst) == Level::Edge);
  CHECK(join(Level::Dst, Level::Dst) == Level::Dst);
  CHECK(join(Level::Edge, Level::Global) == Level::Edge);
}

TEST_CASE("a GATv2 layer builds with the expected types") {
  const Layer layer = test::gatv2Layer(4, 32);
  REQUIRE(layer.outputs().size() == 1);
  const ExprNode &out = *layer.outputs()[0].value;
  CHECK(llvm::isa<Aggregate>(&out));
  CHECK(out.shape() == Shape{4, 32});
  CHECK(out.level() == Level::Dst);
  CHECK(out.aggregated());
  const auto *agg = llvm::cast<Aggregate>(&out);
  CHECK(agg->message()->level() == Level::Edge);
  CHECK(layer.inputs().size() == 3);
  CHECK(layer.findInput("att")->kind == InputKind::Param);
  CHECK(layer.findInput("nope") == nullptr);
}

TEST_CASE("printing is readable and stable, and the hash follows structure") {
  const Layer a = test::gatv2Layer(4, 32), b = test::gatv2Layer(4, 32), c = test::gatv2Layer(2, 32);
  const std::string text = a.print();
  CHECK(text == b.print());
  CHECK(a.hash() == b.hash());
  CHECK(a.hash() != c.hash());
  CHECK(text.find("layer gatv2") == 0);
  CHECK(text.find("node xl : [4, 32] f32") != std::string::npos);
  CHECK(text.find("param att : [4, 32] f32") != std::string::npos);
  CHECK(text.find("leaky_relu[0.2]") != std::string::npos);
  CHECK(text.find("edge_softmax") != std::string::npos);
  CHECK(text.find("aggregate[sum, in_edges]") != std::string::npos);
  CHECK(text.find("output out = %") != std::string::npos);
  // Golden: a change to printing or hashing shows up here (and in cache keys).
  CHECK(a.hashHex() == "1202d090a407102b");
}

TEST_CASE("declared values let a layer be written in reading order") {
  LayerBuilder b("ordered");
  auto x = b.srcInput("x", {8});
  auto w = b.declare("w", {});
  b.output("out", aggregate(Reduce::Sum, w * x));
  b.define(w, 0.5);
  const Layer layer = b.build();
  CHECK(layer.print().find("placeholder") == std::string::npos);
  CHECK(layer.print().find("= 0.5 :") != std::string::npos);
}

TEST_CASE("dtypes: f32 yields to the narrower type") {
  LayerBuilder b("halves");
  auto x = b.srcInput("x", {8}, DType::F16);
  auto w = b.param("w", {8});
  b.output("out", aggregate(Reduce::Sum, w * x));
  const Layer layer = b.build();
  CHECK(layer.outputs()[0].value->dtype() == DType::F16);
}

TEST_CASE("multiple outputs, concatenated heads, graph values") {
  LayerBuilder b("multi");
  auto x = b.nodeInput("x", {2, 4});
  auto msg = x.src() * rsqrt(inDegree(Level::Src)) * edgeWeight();
  b.output("summed", concatHeads(aggregate(Reduce::Sum, msg)));
  b.output("biggest", aggregate(Reduce::Max, x.src() - x.dst()));
  const Layer layer = b.build();
  CHECK(layer.outputs()[0].value->shape() == Shape{1, 8});
  CHECK(layer.outputs()[1].value->shape() == Shape{2, 4});
  const BackwardPlan plan = differentiate(layer);
  CHECK(plan.outputGradients.size() == 2);
  CHECK(plan.outputGradients[0]->name == "d_summed");
}
