#include "DslTestLayers.h"
#include "GradientCheck.h"
#include "dsl/Differentiate.h"

#include <doctest/doctest.h>

#include <functional>

using namespace gnnjit;
using namespace gnnjit::dsl;

namespace {

/// 5 nodes: 0->1, 2->1, 1->0, 3->1, 4->4 (self loop), 0->2, 3->2, 0->1 again.
graph::Graph smallGraph() {
  graph::EdgeList e;
  e.numNodes = 6; // node 5 is isolated
  for (auto [s, d] : {std::pair{0, 1}, {2, 1}, {1, 0}, {3, 1}, {4, 4}, {0, 2}, {3, 2}, {0, 1}})
    e.add(s, d, 0.5f + 0.25f * static_cast<float>(s));
  return graph::Graph::fromEdges(e);
}

/// A hub (node 0 receives from everyone), isolated nodes, self loops, random rest.
graph::Graph hubGraph() {
  Rng rng(42);
  graph::EdgeList e;
  e.numNodes = 40;
  for (int64_t j = 1; j < 30; ++j)
    e.add(j, 0);
  for (int k = 0; k < 80; ++k)
    e.add(static_cast<int64_t>(rng.below(30)), static_cast<int64_t>(rng.below(30)));
  e.add(7, 7);
  e.add(8, 8);
  return graph::Graph::fromEdges(e); // nodes 30..39 isolated
}

void checkOnBothGraphs(const Layer &layer) {
  SUBCASE("small graph") { test::checkGradients(layer, smallGraph()); }
  SUBCASE("hub graph") { test::checkGradients(layer, hubGraph()); }
}

using Message = std::function<Expr(const NodeInput &x, const Expr &w)>;

Layer sumLayer(const char *name, const Message &message, Shape shape = Shape::vector(3)) {
  LayerBuilder b(name);
  auto x = b.nodeInput("x", shape);
  auto w = b.param("w", shape);
  b.output("out", aggregate(Reduce::Sum, message(x, w)));
  return b.build();
}

} // namespace

TEST_CASE("gradients of element-wise operations") {
  const std::pair<const char *, Message> cases[] = {
      {"add_sub", [](auto &x, auto &w) { return x.src() + w - x.dst(); }},
      {"mul_div", [](auto &x, auto &w) { return x.src() * w / (x.dst() * x.dst() + 1.5); }},
      {"neg", [](auto &x, auto &w) { return -(x.src() * w); }},
      {"exp_log", [](auto &x, auto &w) { return log(exp(x.src()) + w * w + 0.1); }},
      {"sqrt_rsqrt", [](auto &x, auto &w) { return sqrt(x.src() * x.src() + 0.5) * rsqrt(w * w + x.dst() * x.dst() + 1); }},
      {"relu", [](auto &x, auto &w) { return relu(x.src() + w * x.dst()); }},
      {"leaky_relu", [](auto &x, auto &w) { return leakyRelu(x.src() - x.dst(), 0.2) * w; }},
      {"elu", [](auto &x, auto &w) { return elu(x.src() + w, 1.3); }},
      {"sigmoid_tanh", [](auto &x, auto &w) { return sigmoid(x.src() * w) + tanh(x.dst() - w); }},
      {"abs", [](auto &x, auto &w) { return abs(x.src() - w); }},
      {"min_max", [](auto &x, auto &w) { return min(x.src(), x.dst()) + max(x.src() * w, x.dst()); }},
      {"scale", [](auto &x, auto &w) { return scale(x.src(), -2.5) * w; }},
  };
  for (const auto &[name, message] : cases) {
    CAPTURE(name);
    checkOnBothGraphs(sumLayer(name, message));
  }
}

TEST_CASE("gradients through shape changes and broadcasting") {
  checkOnBothGraphs(sumLayer("per_head", [](auto &x, auto &w) { return sum(x.src() * w, Axis::Dim) * x.src(); },
                             Shape{2, 3}));
  LayerBuilder b("shapes");
  auto x = b.nodeInput("x", {2, 3});
  auto v = b.param("v", {3});        // broadcast over heads
  auto s = b.param("s", {});         // broadcast over everything
  auto hs = b.param("hs", {2, 1});   // one per head
  auto msg = x.src() * v + s * x.dst() + hs;
  b.output("flat", concatHeads(aggregate(Reduce::Sum, msg)));
  b.output("mean_heads", meanHeads(aggregate(Reduce::Sum, tanh(msg))) * x.dst());
  b.output("split", splitHeads(aggregate(Reduce::Sum, concatHeads(x.src())), 3));
  checkOnBothGraphs(b.build());
}

TEST_CASE("gradients of every reduction") {
  for (Reduce r : {Reduce::Sum, Reduce::Mean, Reduce::Max, Reduce::Min}) {
    CAPTURE(reduceName(r));
    LayerBuilder b("reduce");
    auto x = b.nodeInput("x", {2, 3});
    auto w = b.param("w", {2, 3});
    b.output("out", aggregate(r, x.src() * w + x.dst()) * x.dst());
    checkOnBothGraphs(b.build());
  }
}

TEST_CASE("gradients of attention (edge softmax)") {
  checkOnBothGraphs(test::gatv2Layer(2, 3));

  // Two aggregations share one softmax; one output is used after aggregation.
  LayerBuilder b("shared_softmax");
  auto q = b.dstInput("q", {2, 3});
  auto k = b.srcInput("k", {2, 3});
  auto v = b.srcInput("v", {2, 3});
  auto alpha = edgeSoftmax(dot(q, k) * (1.0 / std::sqrt(3.0)));
  b.output("a", aggregate(Reduce::Sum, alpha * v));
  b.output("b", relu(aggregate(Reduce::Sum, alpha * k)) * q);
  checkOnBothGraphs(b.build());
}

TEST_CASE("gradients of edge inputs, degrees and edge weights") {
  LayerBuilder b("edge_things");
  auto x = b.srcInput("x", {3});
  auto e = b.edgeInput("e", {3});
  auto msg = (x + e) * rsqrt(inDegree(Level::Src) + 1.0) * rsqrt(inDegree(Level::Dst)) * edgeWeight() *
             outDegree(Level::Src) / weightedInDegree(Level::Dst);
  b.output("out", aggregate(Reduce::Sum, msg));
  checkOnBothGraphs(b.build());
}

TEST_CASE("a parameter used after aggregation (GIN's eps)") {
  LayerBuilder b("gin_like");
  auto x = b.nodeInput("x", {4});
  auto eps = b.param("eps", {});
  b.output("out", (1.0 + eps) * x.dst() + aggregate(Reduce::Sum, x.src()));
  checkOnBothGraphs(b.build());
}

TEST_CASE("a backward plan's gradients are printed stably") {
  const Layer layer = test::gatv2Layer(2, 3);
  const std::string text = differentiate(layer).print();
  CHECK(text == differentiate(layer).print());
  CHECK(text.find("node d_out : [2, 3] f32") != std::string::npos);
  CHECK(text.find("saved[softmax_prob]") != std::string::npos);
  CHECK(text.find("aggregate[sum, out_edges]") != std::string::npos);
  CHECK(text.find("aggregate[sum, all_edges]") != std::string::npos);
  CHECK(text.find("grad xr = ") != std::string::npos);
}

TEST_CASE("an input used only in a comparison has no gradient terms") {
  LayerBuilder b("flat_grad");
  auto x = b.srcInput("x", {3});
  auto y = b.dstInput("y", {3});
  b.output("out", aggregate(Reduce::Sum, x * Binary::make(BinaryOp::Greater, y.node(), Constant::make(0))));
  const BackwardPlan plan = differentiate(b.build());
  REQUIRE(plan.gradients.size() == 2);
  CHECK(plan.gradients[0].terms.size() == 1);
  CHECK(plan.gradients[1].terms.empty());
}
