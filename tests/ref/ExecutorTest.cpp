#include "ref/Executor.h"

#include "support/Error.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

using namespace gnnjit;
using namespace gnnjit::dsl;
using ref::Tensor;
using ref::TensorMap;

namespace {

// The 5-node graph of most tests. Edge ids (src -> dst):
//   0: 0->1  1: 2->1  2: 3->1  3: 1->2  4: 0->2  5: 3->4  6: 4->0
// Node 3 has no incoming edge. CSR by destination stores row 2 as
// (0->2 id 4, 1->2 id 3): CSR order is not id order.
graph::Graph graphA(bool weighted = false, graph::SelfLoops loops = graph::SelfLoops::Keep) {
  graph::EdgeList e;
  e.numNodes = 5;
  const int64_t src[] = {0, 2, 3, 1, 0, 3, 4}, dst[] = {1, 1, 1, 2, 2, 4, 0};
  for (int k = 0; k < 7; ++k) {
    if (weighted)
      e.add(src[k], dst[k], static_cast<float>(k + 1)); // weight = id + 1
    else
      e.add(src[k], dst[k]);
  }
  return graph::Graph::fromEdges(e, {.selfLoops = loops});
}

Tensor tensor(std::vector<std::vector<double>> rows) {
  Tensor t(static_cast<int64_t>(rows.size()), rows.empty() ? 0 : static_cast<int64_t>(rows[0].size()));
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c)
      t.at(r, c) = rows[static_cast<size_t>(r)][static_cast<size_t>(c)];
  return t;
}

void checkTensor(const Tensor &got, std::vector<std::vector<double>> want) {
  REQUIRE(got.rows == static_cast<int64_t>(want.size()));
  for (int64_t r = 0; r < got.rows; ++r) {
    REQUIRE(got.cols == static_cast<int64_t>(want[static_cast<size_t>(r)].size()));
    for (int64_t c = 0; c < got.cols; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      CHECK(got.at(r, c) == doctest::Approx(want[static_cast<size_t>(r)][static_cast<size_t>(c)]).epsilon(1e-12));
    }
  }
}

/// x_v = (2v + 1, 2v + 2): [[1,2],[3,4],[5,6],[7,8],[9,10]].
Tensor xFeatures() { return tensor({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}}); }

template <typename E> std::string errorText(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const E &err) {
    return err.what();
  }
  return "(no error)";
}

Layer sumLayer(Reduce reduce, int64_t dim = 2) {
  LayerBuilder b("agg");
  auto x = b.srcInput("x", {dim});
  b.output("out", aggregate(reduce, x));
  return b.build();
}

} // namespace

TEST_CASE("sum aggregation gathers sources per destination") {
  const auto g = graphA();
  const auto out = ref::forward(sumLayer(Reduce::Sum), g, {{"x", xFeatures()}});
  REQUIRE(out.size() == 1);
  checkTensor(out.at("out"), {{9, 10}, {13, 16}, {4, 6}, {0, 0}, {7, 8}});
}

TEST_CASE("mean divides by the in-degree; a node without edges gets 0") {
  const auto out = ref::forward(sumLayer(Reduce::Mean), graphA(), {{"x", xFeatures()}});
  checkTensor(out.at("out"), {{9, 10}, {13.0 / 3, 16.0 / 3}, {2, 3}, {0, 0}, {7, 8}});
}

TEST_CASE("max and min, with ties and an empty row") {
  // Node 1 reads sources 0, 2, 3: column 0 ties at 5 (sources 0 and 2).
  const Tensor y = tensor({{5, 1}, {2, 7}, {5, 0}, {1, 7}, {-3, -4}});
  const auto g = graphA();
  checkTensor(ref::forward(sumLayer(Reduce::Max), g, {{"x", y}}).at("out"), {{-3, -4}, {5, 7}, {5, 7}, {0, 0}, {1, 7}});
  checkTensor(ref::forward(sumLayer(Reduce::Min), g, {{"x", y}}).at("out"), {{-3, -4}, {1, 0}, {2, 1}, {0, 0}, {1, 7}});
}

TEST_CASE("GCN normalization with rsqrt of in-degrees (self loops added)") {
  LayerBuilder b("gcn");
  auto x = b.srcInput("x", {1});
  b.output("out", aggregate(Reduce::Sum, x * rsqrt(inDegree(Level::Src)) * rsqrt(inDegree(Level::Dst))));
  const Layer layer = b.build();
  const auto g = graphA(false, graph::SelfLoops::AddMissing); // in-degrees 2, 4, 3, 1, 2
  const auto out = ref::forward(layer, g, {{"x", tensor({{1}, {2}, {3}, {4}, {5}})}});
  using std::sqrt;
  checkTensor(out.at("out"), {{5 / sqrt(4.0) + 1 / sqrt(4.0)},
                              {1 / sqrt(8.0) + 3 / sqrt(12.0) + 4 / sqrt(4.0) + 2 / sqrt(16.0)},
                              {2 / sqrt(12.0) + 1 / sqrt(6.0) + 3 / sqrt(9.0)},
                              {4.0},
                              {4 / sqrt(2.0) + 5 / sqrt(4.0)}});
}

TEST_CASE("edge weights and weighted in-degree") {
  LayerBuilder b("weighted");
  auto x = b.srcInput("x", {1});
  b.output("out", aggregate(Reduce::Sum, edgeWeight() * x));
  b.output("wdeg", aggregate(Reduce::Sum, x * 0.0) + weightedInDegree(Level::Dst));
  const Layer layer = b.build();
  const TensorMap in{{"x", tensor({{1}, {2}, {3}, {4}, {5}})}};
  const auto weighted = ref::forward(layer, graphA(true), in);
  checkTensor(weighted.at("out"), {{35}, {19}, {13}, {0}, {24}});
  checkTensor(weighted.at("wdeg"), {{7}, {6}, {9}, {0}, {6}});
  const auto plain = ref::forward(layer, graphA(false), in); // weight 1 everywhere
  checkTensor(plain.at("out"), {{5}, {1 + 3 + 4}, {3}, {0}, {4}});
  checkTensor(plain.at("wdeg"), {{1}, {3}, {2}, {0}, {1}});
}

TEST_CASE("edge inputs are read in original edge order, not CSR order") {
  LayerBuilder b("edgeattr");
  auto x = b.srcInput("x", {1});
  auto a = b.edgeInput("a", {1});
  b.output("out", aggregate(Reduce::Sum, a * x));
  const auto g = graphA();
  REQUIRE(g.incoming().edgeId(4) == 4);
  REQUIRE(g.incoming().edgeId(5) == 3); // row 2 is stored out of id order
  REQUIRE(g.incoming().edgeId(0) == 6);
  const auto out = ref::forward(b.build(), g,
                                {{"x", tensor({{1}, {2}, {3}, {4}, {5}})},
                                 {"a", tensor({{0}, {10}, {20}, {30}, {40}, {50}, {60}})}});
  // node 2: a_3 * x_1 + a_4 * x_0; node 0: a_6 * x_4.
  checkTensor(out.at("out"), {{300}, {0 * 1 + 10 * 3 + 20 * 4}, {30 * 2 + 40 * 1}, {0}, {50 * 4}});
}

TEST_CASE("edge inputs of a graph cleaning removed edges from: one row per edge id, removed rows unread") {
  // graphA with self loops at 1 (id 7) and 3 (id 8) removed, and one added
  // at every node (ids 9..13) by Replace: ids have a gap at 7 and 8.
  graph::EdgeList e;
  e.numNodes = 5;
  const int64_t src[] = {0, 2, 3, 1, 0, 3, 4, 1, 3}, dst[] = {1, 1, 1, 2, 2, 4, 0, 1, 3};
  for (int k = 0; k < 9; ++k)
    e.add(src[k], dst[k]);
  const graph::Graph g = graph::Graph::fromEdges(e, {.selfLoops = graph::SelfLoops::Replace});
  REQUIRE(g.numEdges() == 12);
  REQUIRE(g.numEdgeIds() == 14);
  LayerBuilder b("edgeattr");
  auto x = b.srcInput("x", {1});
  auto a = b.edgeInput("a", {1});
  const Layer layer = [&] {
    b.output("out", aggregate(Reduce::Sum, a * x));
    return b.build();
  }();
  Tensor weights(14, 1);
  for (int64_t id = 0; id < 14; ++id)
    weights.at(id, 0) = id == 7 || id == 8 ? 1e9 : static_cast<double>(id); // removed rows must not count
  const TensorMap in{{"x", tensor({{1}, {2}, {3}, {4}, {5}})}, {"a", weights}};
  // node 1: a_0 x_0 + a_1 x_2 + a_2 x_3 + a_10 x_1 (its loop, id 9 + 1).
  CHECK(ref::forward(layer, g, in).at("out").at(1, 0) == 0 * 1 + 1 * 3 + 2 * 4 + 10 * 2);
  // The gradient of a has every id's row: the removed ones 0.
  TensorMap backwardIn = in;
  backwardIn["d_out"] = tensor({{1}, {1}, {1}, {1}, {1}});
  const Tensor da = ref::backward(layer, differentiate(layer), g, backwardIn).at("a");
  REQUIRE(da.rows == 14);
  CHECK(da.at(7, 0) == 0);
  CHECK(da.at(8, 0) == 0);
  CHECK(da.at(10, 0) == 2); // x_1 along node 1's loop
  // numEdges() rows, as before edge ids could have gaps, is refused with what is expected.
  const std::string text = errorText<UserError>([&] {
    (void)ref::forward(layer, g, {{"x", in.at("x")}, {"a", Tensor(12, 1)}});
  });
  CHECK(text.find("one row per edge id") != std::string::npos);
}

TEST_CASE("int64 and int32 CSRs give the same results") {
  graph::EdgeList e;
  e.numNodes = 5;
  const int64_t src[] = {0, 2, 3, 1, 0, 3, 4}, dst[] = {1, 1, 1, 2, 2, 4, 0};
  for (int k = 0; k < 7; ++k)
    e.add(src[k], dst[k]);
  const auto wide = graph::Graph::fromEdges(e, {.index = graph::IndexChoice::Int64});
  REQUIRE(wide.indexType() == graph::IndexType::Int64);
  LayerBuilder b("wide");
  auto x = b.srcInput("x", {2});
  auto a = b.edgeInput("a", {1});
  b.output("out", aggregate(Reduce::Sum, a * x));
  const Layer layer = b.build();
  const TensorMap in{{"x", xFeatures()}, {"a", tensor({{0}, {10}, {20}, {30}, {40}, {50}, {60}})}};
  const auto narrow = ref::forward(layer, graphA(), in).at("out");
  CHECK(ref::forward(layer, wide, in).at("out").values == narrow.values);
}

TEST_CASE("heads: [h,1] * [h,d] broadcasting, sum over dim, concatHeads, meanHeads") {
  LayerBuilder b("heads");
  auto x = b.srcInput("x", {2, 2});
  auto s = b.param("s", {2, 1});
  b.output("scaled", aggregate(Reduce::Sum, s * x));
  b.output("dimsum", aggregate(Reduce::Sum, sum(x, Axis::Dim)));
  b.output("concat", concatHeads(aggregate(Reduce::Sum, x)));
  b.output("mean", meanHeads(aggregate(Reduce::Sum, x)));
  const Layer layer = b.build();
  Tensor x4(5, 4); // node v: head 0 = (v+1, 2(v+1)), head 1 = (3(v+1), 4(v+1))
  for (int64_t v = 0; v < 5; ++v)
    for (int64_t c = 0; c < 4; ++c)
      x4.at(v, c) = static_cast<double>((c + 1) * (v + 1));
  const auto out = ref::forward(layer, graphA(), {{"x", x4}, {"s", tensor({{2, 3}})}});
  // Node 2 sums sources 0 and 1: 3 * (1, 2, 3, 4).
  CHECK(out.at("scaled").cols == 4);
  checkTensor(out.at("scaled"), {{10, 20, 45, 60}, {16, 32, 72, 96}, {6, 12, 27, 36}, {0, 0, 0, 0}, {8, 16, 36, 48}});
  checkTensor(out.at("dimsum"), {{15, 35}, {24, 56}, {9, 21}, {0, 0}, {12, 28}});
  checkTensor(out.at("concat"), {{5, 10, 15, 20}, {8, 16, 24, 32}, {3, 6, 9, 12}, {0, 0, 0, 0}, {4, 8, 12, 16}});
  checkTensor(out.at("mean"), {{10, 15}, {16, 24}, {6, 9}, {0, 0}, {8, 12}});
}

TEST_CASE("edge softmax attention: rows sum to 1, a hand value, no overflow") {
  LayerBuilder b("att");
  auto score = b.srcInput("score", {1});
  auto v = b.srcInput("v", {2});
  auto alpha = edgeSoftmax(score);
  b.output("out", aggregate(Reduce::Sum, alpha * v));
  b.output("total", aggregate(Reduce::Sum, alpha * 1.0));
  const Layer layer = b.build();
  for (double shift : {0.0, 800.0}) { // exp(800) overflows a naive softmax
    CAPTURE(shift);
    Tensor s = tensor({{1}, {2}, {3}, {4}, {5}});
    for (double &val : s.values)
      val += shift;
    const auto out = ref::forward(layer, graphA(), {{"score", s}, {"v", xFeatures()}});
    checkTensor(out.at("total"), {{1}, {1}, {1}, {0}, {1}});
    // Node 1: sources 0, 2, 3 with scores 1, 3, 4.
    const double z = std::exp(1.0) + std::exp(3.0) + std::exp(4.0);
    const double a0 = std::exp(1.0) / z, a2 = std::exp(3.0) / z, a3 = std::exp(4.0) / z;
    CHECK(out.at("out").at(1, 0) == doctest::Approx(a0 * 1 + a2 * 5 + a3 * 7).epsilon(1e-12));
    CHECK(out.at("out").at(1, 1) == doctest::Approx(a0 * 2 + a2 * 6 + a3 * 8).epsilon(1e-12));
    CHECK(out.at("out").at(3, 0) == 0.0);
  }
}

TEST_CASE("multi-head edge softmax normalizes each head separately") {
  LayerBuilder b("gat");
  auto xl = b.dstInput("xl", {2, 3});
  auto xr = b.srcInput("xr", {2, 3});
  auto att = b.param("att", {2, 3});
  auto alpha = edgeSoftmax(sum(att * leakyRelu(xl + xr, 0.2), Axis::Dim));
  b.output("total", aggregate(Reduce::Sum, alpha * 1.0));
  b.output("out", aggregate(Reduce::Sum, alpha * xr));
  Tensor x(5, 6), a(1, 6);
  for (size_t k = 0; k < x.values.size(); ++k)
    x.values[k] = std::sin(static_cast<double>(k)) * 3;
  for (size_t k = 0; k < a.values.size(); ++k)
    a.values[k] = std::cos(static_cast<double>(k));
  const auto out = ref::forward(b.build(), graphA(), {{"xl", x}, {"xr", x}, {"att", a}});
  checkTensor(out.at("total"), {{1, 1}, {1, 1}, {1, 1}, {0, 0}, {1, 1}});
  // Node 0 and 4 have one incoming edge: alpha = 1, out = xr of the source.
  for (int64_t c = 0; c < 6; ++c) {
    CHECK(out.at("out").at(0, c) == doctest::Approx(x.at(4, c)));
    CHECK(out.at("out").at(4, c) == doctest::Approx(x.at(3, c)));
  }
}

TEST_CASE("select reads only the chosen side; comparisons give 1 or 0") {
  LayerBuilder b("sel");
  auto x = b.srcInput("x", {1});
  Expr positive = Binary::make(BinaryOp::Greater, x.node(), Expr(0.0).node());
  // log and sqrt of the negative side are NaN where they are not chosen.
  Expr safe = Select::make(positive.node(), log(x).node(), sqrt(x).node());
  Expr picked = Select::make(positive.node(), x.node(), (-x).node());
  b.output("safe", aggregate(Reduce::Sum, Expr(Select::make(positive.node(), safe.node(), Expr(0.0).node()))));
  b.output("abs", aggregate(Reduce::Sum, picked));
  b.output("ge", aggregate(Reduce::Sum, Expr(Binary::make(BinaryOp::GreaterEqual, x.node(), Expr(2.0).node()))));
  const auto out = ref::forward(b.build(), graphA(), {{"x", tensor({{1}, {-2}, {std::exp(1.0)}, {-4}, {2}})}});
  // Node 1: sources 0, 2, 3 -> log 1 + log e + 0; node 2: sources 0, 1.
  checkTensor(out.at("safe"), {{std::log(2.0)}, {1}, {0}, {0}, {0}});
  checkTensor(out.at("abs"), {{2}, {1 + std::exp(1.0) + 4}, {3}, {0}, {4}});
  checkTensor(out.at("ge"), {{1}, {1}, {0}, {0}, {0}});
}

TEST_CASE("duplicate edges count twice, self loops are ordinary edges") {
  graph::EdgeList e;
  e.numNodes = 3;
  e.add(0, 1);
  e.add(0, 1);
  e.add(2, 2);
  LayerBuilder b("dup");
  auto x = b.srcInput("x", {1});
  b.output("sum", aggregate(Reduce::Sum, x));
  b.output("mean", aggregate(Reduce::Mean, x));
  const auto out = ref::forward(b.build(), graph::Graph::fromEdges(e), {{"x", tensor({{3}, {5}, {7}})}});
  checkTensor(out.at("sum"), {{0}, {6}, {7}});
  checkTensor(out.at("mean"), {{0}, {3}, {7}});
}

TEST_CASE("binding errors name the input, the shapes and what rows mean") {
  LayerBuilder b("bind");
  auto x = b.srcInput("x", {2, 3});
  auto a = b.edgeInput("a", {1});
  auto p = b.param("p", {3});
  b.output("out", aggregate(Reduce::Sum, x * a + p));
  const Layer layer = b.build();
  const auto g = graphA();
  const TensorMap good{{"x", Tensor(5, 6)}, {"a", Tensor(7, 1)}, {"p", Tensor(1, 3)}};
  CHECK_NOTHROW(ref::forward(layer, g, good));

  auto missing = good;
  missing.erase("a");
  const std::string m = errorText<UserError>([&] { ref::forward(layer, g, missing); });
  CHECK(m.find("'a' is not bound") != std::string::npos);
  CHECK(m.find("7 x 1") != std::string::npos);
  CHECK(m.find("one row per edge") != std::string::npos);

  auto extra = good;
  extra["y"] = Tensor(5, 6);
  const std::string x2 = errorText<UserError>([&] { ref::forward(layer, g, extra); });
  CHECK(x2.find("'y'") != std::string::npos);
  CHECK(x2.find("x, a, p") != std::string::npos);

  auto wrong = good;
  wrong["x"] = Tensor(5, 3);
  const std::string w = errorText<UserError>([&] { ref::forward(layer, g, wrong); });
  CHECK(w.find("'x'") != std::string::npos);
  CHECK(w.find("5 x 3") != std::string::npos);
  CHECK(w.find("5 x 6") != std::string::npos);
  CHECK(w.find("one row per node") != std::string::npos);
  CHECK(w.find("[2, 3]") != std::string::npos);

  auto param = good;
  param["p"] = Tensor(5, 3); // a per-node tensor given for a parameter
  const std::string p2 = errorText<UserError>([&] { ref::forward(layer, g, param); });
  CHECK(p2.find("'p'") != std::string::npos);
  CHECK(p2.find("single row") != std::string::npos);

  auto broken = good;
  broken["x"].values.pop_back();
  CHECK(errorText<UserError>([&] { ref::forward(layer, g, broken); }).find("holds 29 values") != std::string::npos);
}

// ---- backward plans built by hand -------------------------------------------

namespace {

/// A layer for the hand-made plans below: x, y node inputs [1, 2], an edge
/// input a [1, 2], a param p [1, 2]. Its forward is only there for bindings.
struct Probe {
  Layer layer;
  InputPtr x, y, a, p, dOut;
  ExprPtr maxY; ///< aggregate(Max, y_j)
  Probe() {
    LayerBuilder b("probe");
    NodeInput xi = b.nodeInput("x", {2});
    NodeInput yi = b.nodeInput("y", {2});
    Expr ae = b.edgeInput("a", {2});
    Expr pe = b.param("p", {2});
    Expr m = aggregate(Reduce::Max, yi.src());
    b.output("out", aggregate(Reduce::Sum, xi.src() * pe + ae) + m);
    layer = b.build();
    x = layer.findInput("x");
    y = layer.findInput("y");
    a = layer.findInput("a");
    p = layer.findInput("p");
    maxY = m.node();
    dOut = std::make_shared<const InputDecl>(InputDecl{"d_out", InputKind::Node, Shape::vector(2), DType::F32});
  }
  BackwardPlan plan(std::vector<InputGradient> gradients) const { return BackwardPlan{{dOut}, std::move(gradients)}; }
  TensorMap inputs() const {
    return {{"x", xFeatures()},
            {"y", tensor({{5, 1}, {2, 7}, {5, 0}, {1, 7}, {-3, -4}})},
            {"a", Tensor(7, 2)},
            {"p", tensor({{0.5, -1}})},
            {"d_out", Tensor(5, 2)}};
  }
};

} // namespace

TEST_CASE("backward: OutEdges groups by source, terms of a node input add up") {
  Probe pr;
  ExprPtr xDst = InputRef::make(pr.x, Level::Dst);
  ExprPtr outSum = Aggregate::make(Reduce::Sum, xDst, Over::OutEdges);
  ExprPtr outMean = Aggregate::make(Reduce::Mean, xDst, Over::OutEdges);
  const auto g = graphA();
  // Out-edges: 0 -> {1, 2}, 1 -> {2}, 2 -> {1}, 3 -> {1, 4}, 4 -> {0}.
  auto grads = ref::backward(pr.layer, pr.plan({{pr.x, {outSum}}}), g, pr.inputs());
  checkTensor(grads.at("x"), {{8, 10}, {5, 6}, {3, 4}, {12, 14}, {1, 2}});
  grads = ref::backward(pr.layer, pr.plan({{pr.x, {outMean, xDst}}}), g, pr.inputs());
  checkTensor(grads.at("x"), {{4 + 1, 5 + 2}, {5 + 3, 6 + 4}, {3 + 5, 4 + 6}, {6 + 7, 7 + 8}, {1 + 9, 2 + 10}});
  // Inputs without terms get zeros shaped as their binding.
  checkTensor(grads.at("a"), std::vector<std::vector<double>>(7, {0, 0}));
  checkTensor(grads.at("p"), {{0, 0}});
  CHECK(grads.size() == 4);
}

TEST_CASE("backward: AllEdges and AllNodes sums for a parameter") {
  Probe pr;
  ExprPtr xSrc = InputRef::make(pr.x, Level::Src);
  ExprPtr xDst = InputRef::make(pr.x, Level::Dst);
  ExprPtr pRef = InputRef::make(pr.p, Level::Global);
  ExprPtr allEdges = Aggregate::make(Reduce::Sum, xSrc, Over::AllEdges);  // sum_j outdeg(j) x_j
  ExprPtr allNodes = Aggregate::make(Reduce::Sum, xDst, Over::AllNodes);  // sum_v x_v
  ExprPtr nTimes = Aggregate::make(Reduce::Sum, pRef, Over::AllNodes);    // 5 p
  ExprPtr maxEdges = Aggregate::make(Reduce::Max, xSrc, Over::AllEdges);
  const auto g = graphA();
  auto grads = ref::backward(pr.layer, pr.plan({{pr.p, {allEdges}}}), g, pr.inputs());
  checkTensor(grads.at("p"), {{33, 40}});
  grads = ref::backward(pr.layer, pr.plan({{pr.p, {allNodes, nTimes}}}), g, pr.inputs());
  checkTensor(grads.at("p"), {{25 + 2.5, 30 - 5}});
  grads = ref::backward(pr.layer, pr.plan({{pr.p, {maxEdges}}}), g, pr.inputs());
  checkTensor(grads.at("p"), {{9, 10}});
}

TEST_CASE("backward: Saved ArgMatch marks the first arg in CSR order, at original edge rows") {
  Probe pr;
  ExprPtr argMatch = Saved::make(SavedKind::ArgMatch, pr.maxY);
  const auto grads = ref::backward(pr.layer, pr.plan({{pr.a, {argMatch}}}), graphA(), pr.inputs());
  // Node 1, column 0 ties between edge 0 (source 0) and edge 1 (source 2):
  // edge 0 comes first in CSR order. Node 2: edge 4 (0->2) wins column 0,
  // edge 3 (1->2) column 1. One-edge rows (edges 5, 6) win both columns.
  checkTensor(grads.at("a"), {{1, 0}, {0, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 1}, {1, 1}});
}

TEST_CASE("backward: Saved ArgMatch of a min aggregation and ArgMatch * d_out scattered by OutEdges") {
  Probe pr;
  ExprPtr minY = Aggregate::make(Reduce::Min, InputRef::make(pr.y, Level::Src));
  ExprPtr argMatch = Saved::make(SavedKind::ArgMatch, minY);
  // Max backward as a differentiator writes it: d y_j = sum over out-edges of argmatch * d_out_i.
  ExprPtr dOut = InputRef::make(pr.dOut, Level::Dst);
  ExprPtr dY = Aggregate::make(Reduce::Sum, Binary::make(BinaryOp::Mul, argMatch, dOut), Over::OutEdges);
  auto in = pr.inputs();
  in["d_out"] = tensor({{1, 2}, {10, 20}, {100, 200}, {1000, 2000}, {1e4, 2e4}});
  const auto grads = ref::backward(pr.layer, pr.plan({{pr.a, {argMatch}}, {pr.y, {dY}}}), graphA(), in);
  // Min of node 1 (sources 0, 2, 3): column 0 from 3 (1), column 1 from 2 (0).
  // Node 2 (sources 0, 1): column 0 from 1 (2), column 1 from 0 (1).
  checkTensor(grads.at("a"), {{0, 0}, {0, 1}, {1, 0}, {1, 0}, {0, 1}, {1, 1}, {1, 1}});
  checkTensor(grads.at("y"), {{0, 200}, {100, 0}, {0, 20}, {10 + 1e4, 2e4}, {1, 2}});
}

TEST_CASE("backward: Saved SoftmaxProb and Saved Value") {
  Probe pr;
  ExprPtr xSrc = InputRef::make(pr.x, Level::Src);
  ExprPtr softmax = EdgeSoftmax::make(SumAxis::make(xSrc, Axis::Dim)); // scores 3, 7, 11, 15, 19
  ExprPtr prob = BroadcastTo::make(Saved::make(SavedKind::SoftmaxProb, softmax), Shape::vector(2));
  ExprPtr sumX = Aggregate::make(Reduce::Sum, xSrc);
  ExprPtr saved = Saved::make(SavedKind::Value, sumX);
  const auto grads = ref::backward(pr.layer, pr.plan({{pr.a, {prob}}, {pr.x, {saved}}}), graphA(), pr.inputs());
  const double z1 = std::exp(3.0) + std::exp(11.0) + std::exp(15.0); // node 1: sources 0, 2, 3
  const double z2 = std::exp(3.0) + std::exp(7.0);                   // node 2: sources 0, 1
  const double e0 = std::exp(3.0) / z1, e1 = std::exp(11.0) / z1, e2 = std::exp(15.0) / z1;
  const double e3 = std::exp(7.0) / z2, e4 = std::exp(3.0) / z2;
  checkTensor(grads.at("a"), {{e0, e0}, {e1, e1}, {e2, e2}, {e3, e3}, {e4, e4}, {1, 1}, {1, 1}});
  checkTensor(grads.at("x"), {{9, 10}, {13, 16}, {4, 6}, {0, 0}, {7, 8}});
}

TEST_CASE("backward: binding and plan errors") {
  Probe pr;
  const auto g = graphA();
  auto in = pr.inputs();
  in.erase("d_out");
  const std::string missing =
      errorText<UserError>([&] { ref::backward(pr.layer, pr.plan({}), g, in); });
  CHECK(missing.find("output gradient 'd_out' is not bound") != std::string::npos);

  // A term smaller than the input's shape is the differentiator's bug.
  ExprPtr small = Aggregate::make(Reduce::Sum, SumAxis::make(InputRef::make(pr.x, Level::Src), Axis::Dim),
                                  Over::AllEdges);
  const std::string shape =
      errorText<InternalError>([&] { ref::backward(pr.layer, pr.plan({{pr.p, {small}}}), g, pr.inputs()); });
  CHECK(shape.find("'p'") != std::string::npos);
  CHECK(shape.find("[1, 1]") != std::string::npos);
  CHECK(shape.find("[1, 2]") != std::string::npos);

  // A node input's term must not be per edge.
  ExprPtr perEdge = InputRef::make(pr.a, Level::Edge);
  CHECK(errorText<InternalError>([&] { ref::backward(pr.layer, pr.plan({{pr.x, {perEdge}}}), g, pr.inputs()); })
            .find("per edge") != std::string::npos);
}
