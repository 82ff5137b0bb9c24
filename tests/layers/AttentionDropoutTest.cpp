// Attention dropout (dsl::attentionDropout, LayerOptions::attentionDropout):
// the draw keeps 1 - p of the coefficients and scales them by 1 / (1 - p);
// the reference executor's layer equals the same layer with the mask given
// as an explicit edge input (rows by edge id), forward and every gradient;
// a seed gives the same result every time and another seed another one;
// gradients hold against finite differences; misuse is a UserError.
#include "GradientCheck.h"
#include "UserErrorText.h"

#include "dsl/AttentionDropout.h"
#include "dsl/Differentiate.h"
#include "dsl/Layer.h"
#include "dsl/Ops.h"
#include "graph/GraphSource.h"
#include "layers/Library.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace gnnjit;
using namespace gnnjit::dsl;

namespace {

graph::Graph generated(const std::string &spec, graph::SelfLoops loops = graph::SelfLoops::Replace) {
  graph::BuildOptions options;
  options.selfLoops = loops;
  return graph::Graph::fromEdges(graph::loadGraphSource(spec).edges, options);
}

/// GAT with its value scaled by `scale`: attentionDropout(p, H) when
/// `maskInput` is false, else an edge input "m" of shape [H, 1].
Layer gatWithMask(int64_t heads, int64_t dim, double p, bool maskInput) {
  LayerBuilder b("masked_gat");
  const NodeInput x = b.nodeInput("x", {heads, dim});
  const Expr attSrc = b.param("att_src", {heads, dim});
  const Expr attDst = b.param("att_dst", {heads, dim});
  const Expr score = leakyRelu(dot(x.src(), attSrc) + dot(x.dst(), attDst), 0.2);
  const Expr mask = maskInput ? b.edgeInput("m", {heads, 1}) : attentionDropout(p, heads);
  b.output("out", concatHeads(aggregate(Reduce::Sum, edgeSoftmax(score) * (mask * x.src()))));
  return b.build();
}

void checkClose(const ref::Tensor &a, const ref::Tensor &b, double tol, const std::string &what) {
  REQUIRE(a.values.size() == b.values.size());
  double worst = 0;
  for (size_t k = 0; k < a.values.size(); ++k)
    worst = std::max(worst, std::abs(a.values[k] - b.values[k]));
  CHECK_MESSAGE(worst <= tol, what << " differs by " << worst);
}

layers::LayerOptions attentionOptions(int64_t heads, int64_t dim, double p) {
  layers::LayerOptions o;
  o.heads = heads;
  o.dim = dim;
  o.attentionDropout = p;
  return o;
}

} // namespace

TEST_CASE("the draw drops a fraction p, keeps the rest scaled by 1 / (1 - p), and depends on seed, edge and head") {
  CHECK(dropoutThreshold(0.0) == 0u);
  CHECK(dropoutThreshold(0.5) == 0x80000000u);
  CHECK(dropoutThreshold(1.0) == 0xFFFFFFFFu);
  for (double p : {0.1, 0.5, 0.6, 0.9}) {
    const int64_t draws = 400000, heads = 4;
    int64_t dropped = 0;
    for (int64_t k = 0; k < draws; ++k) {
      const double f = dropoutFactor(12345, static_cast<uint64_t>(k / heads), heads, k % heads, p);
      CHECK_MESSAGE((f == 0.0 || f == 1.0 / (1.0 - p)), "factor " << f);
      dropped += f == 0.0;
    }
    // Binomial standard deviation at 400000 draws is below 0.0008.
    CHECK(std::abs(static_cast<double>(dropped) / draws - p) < 0.004);
  }
  int64_t seedDiffers = 0, headDiffers = 0, edgeDiffers = 0;
  for (uint64_t e = 0; e < 1000; ++e) {
    seedDiffers += dropoutBits(1, e, 2, 0) != dropoutBits(2, e, 2, 0);
    headDiffers += dropoutBits(1, e, 2, 0) != dropoutBits(1, e, 2, 1);
    edgeDiffers += dropoutBits(1, e, 2, 0) != dropoutBits(1, e + 1, 2, 0);
  }
  CHECK(seedDiffers == 1000);
  CHECK(headDiffers == 1000);
  CHECK(edgeDiffers == 1000);
}

TEST_CASE("a layer with attention dropout equals the same layer with its mask as an edge input, both passes") {
  const graph::Graph g = generated("rmat:scale=7,ef=8,seed=3");
  const int64_t heads = 3, dim = 5;
  const double p = 0.4;
  const uint64_t seed = 0xfeedbeefull;
  const Layer dropped = gatWithMask(heads, dim, p, false), explicitMask = gatWithMask(heads, dim, p, true);
  ref::TensorMap inputs = test::randomInputs(dropped, g, 5);
  ref::TensorMap withMask = inputs;
  ref::Tensor m(g.numEdgeIds(), heads);
  for (int64_t e = 0; e < g.numEdgeIds(); ++e)
    for (int64_t h = 0; h < heads; ++h)
      m.at(e, h) = dropoutFactor(seed, static_cast<uint64_t>(e), heads, h, p);
  withMask["m"] = m;
  checkClose(ref::forward(dropped, g, inputs, seed).at("out"), ref::forward(explicitMask, g, withMask).at("out"),
             1e-14, "forward");

  const BackwardPlan planDropped = differentiate(dropped), planMask = differentiate(explicitMask);
  for (auto &[name, t] : test::randomOutputGradients(planDropped, g, 9)) {
    inputs[name] = t;
    withMask[name] = t;
  }
  const ref::TensorMap a = ref::backward(dropped, planDropped, g, inputs, seed);
  const ref::TensorMap b = ref::backward(explicitMask, planMask, g, withMask);
  for (const char *name : {"x", "att_src", "att_dst"})
    checkClose(a.at(name), b.at(name), 1e-12, std::string("gradient of ") + name);
}

TEST_CASE("one seed gives one result every time, another seed another; p = 0 is the layer without dropout") {
  const graph::Graph g = generated("grid:side=9");
  const Layer layer = layers::gatv2(attentionOptions(2, 4, 0.5));
  CHECK(layer.dropsAttention());
  const ref::TensorMap in = test::randomInputs(layer, g, 3);
  const ref::Tensor first = ref::forward(layer, g, in, 7).at("out");
  CHECK(ref::forward(layer, g, in, 7).at("out").values == first.values);
  CHECK(ref::forward(layer, g, in, 8).at("out").values != first.values);

  const Layer none = layers::gatv2(attentionOptions(2, 4, 0.0));
  CHECK_FALSE(none.dropsAttention());
  layers::LayerOptions plain;
  plain.heads = 2;
  plain.dim = 4;
  CHECK(none.hash() == layers::gatv2(plain).hash());
  CHECK(layer.hash() != none.hash());
  CHECK(layers::gatv2(attentionOptions(2, 4, 0.25)).hash() != layer.hash());
  CHECK(layer.print().find("attention_dropout[0.5]@edge") != std::string::npos);
}

TEST_CASE("gradients of GAT, GATv2 and the Transformer with attention dropout against finite differences") {
  const graph::Graph g = generated("rmat:scale=6,ef=6,seed=11");
  for (const char *name : {"gat", "gatv2", "transformer"}) {
    layers::LayerOptions o = attentionOptions(2, 3, 0.5);
    o.edgeFeatures = std::string(name) != "gat";
    const Layer layer = layers::buildLayer(name, o);
    (void)test::checkGradients(std::string(name) + " with attention dropout", layer, g,
                               test::randomInputs(layer, g, 21), 21, 60);
  }
}

TEST_CASE("attention dropout outside the value of a softmax-weighted message is refused") {
  const auto inScore = [] {
    LayerBuilder b("dropout_in_score");
    const NodeInput x = b.nodeInput("x", {2, 4});
    const Expr score = dot(x.src(), x.dst()) * attentionDropout(0.5, 2);
    b.output("out", concatHeads(aggregate(Reduce::Sum, edgeSoftmax(score) * x.src())));
    (void)b.build();
  };
  CHECK(test::userErrorText(inScore).find("attention dropout inside an edgeSoftmax's score") != std::string::npos);
  const auto inSum = [] {
    LayerBuilder b("dropout_in_sum");
    const NodeInput x = b.nodeInput("x", {2, 4});
    b.output("out", concatHeads(aggregate(Reduce::Sum, attentionDropout(0.5, 2) * x.src())));
    (void)b.build();
  };
  CHECK(test::userErrorText(inSum).find("no edgeSoftmax weights") != std::string::npos);
  const auto badP = [] {
    LayerBuilder b("dropout_p");
    const NodeInput x = b.nodeInput("x", {2, 4});
    const Expr score = dot(x.src(), x.dst());
    b.output("out", concatHeads(aggregate(Reduce::Sum, edgeSoftmax(score) * (attentionDropout(1.0, 2) * x.src()))));
    (void)b.build();
  };
  CHECK(test::userErrorText(badP).find("probability in (0, 1)") != std::string::npos);
  CHECK(attentionDropout(0.0, 2).node()->kind() == NodeKind::Constant);

  layers::LayerOptions gcn;
  gcn.attentionDropout = 0.5;
  CHECK(test::userErrorText([&] { (void)layers::gcn(gcn); }).find("does not read attentionDropout") !=
        std::string::npos);
  CHECK(test::userErrorText([] { (void)layers::gat(attentionOptions(1, 4, 1.5)); })
            .find("attentionDropout is a probability in [0, 1)") != std::string::npos);
}
