// The layer library: every layer builds and validates; hand-computed values
// for GCN and GATv2 on a 5-node graph; head layout; max/min conventions;
// gradients against central finite differences on the 5-node graph, on
// random graphs with isolated nodes, self loops, duplicates and a hub, and on
// Cora (a random subset of coordinates).
#include "LayerTestSupport.h"
#include "TestData.h"

#include "dsl/IRVisitor.h"
#include "graph/GraphSource.h"
#include "support/Error.h"

#include <doctest/doctest.h>

#include <cmath>

#include <set>

using namespace gnnjit;
using gnnjit::test::LayerCase;

namespace {

// ---- graphs -------------------------------------------------------------------

/// Five nodes, nine edges (src -> dst), no self loops:
///   into 0: 1, 3, 4      into 1: 0, 2, 3      into 2: 0, 1, 4
///   3 and 4 have no in-edges (sources only).
graph::Graph fiveNodeGraph(graph::SelfLoops loops) {
  graph::EdgeList e;
  e.numNodes = 5;
  for (auto [s, d] : std::vector<std::pair<int, int>>{{1, 0}, {3, 0}, {4, 0}, {0, 1}, {2, 1}, {3, 1}, {0, 2},
                                                      {1, 2}, {4, 2}})
    e.add(s, d);
  graph::BuildOptions options;
  options.selfLoops = loops;
  return graph::Graph::fromEdges(e, options);
}

/// 40 nodes: node 0 a hub (30 in-edges, 20 out-edges), 60 random edges
/// among 1..35 into 1..32 (so 33..35 have no in-edges), self loops (one
/// doubled), a duplicate edge, and isolated nodes 36..39.
graph::Graph messyGraph(uint64_t seed, bool weighted, graph::SelfLoops loops) {
  Rng rng(seed);
  graph::EdgeList e;
  e.numNodes = 40;
  const auto add = [&](int64_t s, int64_t d) {
    if (weighted)
      e.add(s, d, static_cast<float>(0.5 + 1.5 * rng.uniform()));
    else
      e.add(s, d);
  };
  for (int64_t j = 1; j <= 30; ++j)
    add(j, 0);
  for (int64_t j = 1; j <= 20; ++j)
    add(0, j);
  for (int k = 0; k < 60; ++k)
    add(1 + static_cast<int64_t>(rng.below(35)), 1 + static_cast<int64_t>(rng.below(32)));
  add(5, 5);
  add(7, 7);
  add(7, 7);
  add(0, 0);
  add(3, 4);
  add(3, 4);
  graph::BuildOptions options;
  options.selfLoops = loops;
  return graph::Graph::fromEdges(e, options);
}

std::optional<graph::Graph> coraGraph(graph::SelfLoops loops) {
  const auto file = test::sharedFile("cora/graph.mtx");
  if (!file)
    return std::nullopt;
  graph::Dataset d = graph::loadGraphSource(file->string());
  graph::BuildOptions options;
  options.selfLoops = loops;
  return graph::Graph::fromEdges(d.edges, options);
}

ref::Tensor rows(std::initializer_list<std::initializer_list<double>> values) {
  ref::Tensor t(static_cast<int64_t>(values.size()), static_cast<int64_t>(values.begin()->size()));
  size_t k = 0;
  for (const auto &row : values)
    for (double v : row)
      t.values[k++] = v;
  return t;
}

void checkClose(const ref::Tensor &got, const ref::Tensor &want, double tol = 1e-12) {
  REQUIRE(got.rows == want.rows);
  REQUIRE(got.cols == want.cols);
  for (int64_t r = 0; r < want.rows; ++r)
    for (int64_t c = 0; c < want.cols; ++c) {
      INFO("row " << r << ", col " << c);
      CHECK(got.at(r, c) == doctest::Approx(want.at(r, c)).epsilon(tol));
    }
}

std::string userError(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const UserError &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

// ---- the registry -------------------------------------------------------------

TEST_CASE("every library layer builds, validates and is listed once") {
  const auto &lib = layers::library();
  REQUIRE(lib.size() == 9);
  std::set<std::string> names;
  for (const layers::LayerInfo &info : lib) {
    INFO(info.name);
    CHECK(names.insert(info.name).second);
    CHECK(info.pygClass.rfind("torch_geometric.nn.", 0) == 0);
    CHECK_FALSE(info.summary.empty());
    CHECK_FALSE(info.familyHint.empty());
    const dsl::Layer layer = info.build({});
    CHECK(layer.name() == info.name);
    CHECK(layer.outputs().size() == 1);
    CHECK(&layers::findLayer(info.name) == &info);
    if (layers::takes(info, layers::Knob::Heads)) {
      layers::LayerOptions o;
      o.heads = 3;
      o.dim = 5;
      CHECK(info.build(o).outputs()[0].value->shape() == dsl::Shape{1, 15});
      o.concat = false;
      CHECK(info.build(o).outputs()[0].value->shape() == dsl::Shape{1, 5});
    }
  }
  for (const LayerCase &c : test::allLayerCases(4, 2)) {
    INFO(c.label);
    CHECK_NOTHROW((void)layers::buildLayer(c.layer, c.options));
  }
  CHECK(layers::layerNames() ==
        std::vector<std::string>{"gcn", "graphconv", "sage", "gin", "gat", "gatv2", "transformer", "agnn", "edgeconv"});
}

TEST_CASE("bad names and options are user errors that say what is allowed") {
  const std::string unknown = userError([] { (void)layers::findLayer("gatv3"); });
  CHECK(unknown.find("'gatv3'") != std::string::npos);
  for (const std::string &name : layers::layerNames())
    CHECK(unknown.find(name) != std::string::npos);

  layers::LayerOptions heads;
  heads.heads = 2;
  CHECK(userError([&] { (void)layers::gcn(heads); }).find("no attention heads") != std::string::npos);
  layers::LayerOptions aggr;
  aggr.aggregation = "softmax";
  const std::string e = userError([&] { (void)layers::sage(aggr); });
  CHECK(e.find("mean, max, min, sum") != std::string::npos);
  aggr.aggregation = "max";
  CHECK(userError([&] { (void)layers::graphConv(aggr); }).find("sum, mean") != std::string::npos);
  layers::LayerOptions dim;
  dim.dim = 0;
  CHECK(userError([&] { (void)layers::gatv2(dim); }).find("dim must be at least 1") != std::string::npos);

  // Sizes whose product overflows, settings a layer does not read, and
  // numbers that are not finite are refused before anything is built.
  layers::LayerOptions huge;
  huge.dim = int64_t{1} << 62;
  CHECK(userError([&] { (void)layers::agnn(huge); }).find("more features per row") != std::string::npos);
  huge.dim = 4;
  huge.heads = int64_t{1} << 62;
  huge.concat = false;
  CHECK(userError([&] { (void)layers::gat(huge); }).find("more features per row") != std::string::npos);
  layers::LayerOptions unread;
  unread.aggregation = "bogus";
  CHECK(userError([&] { (void)layers::gcn(unread); }).find("does not read aggregation") != std::string::npos);
  layers::LayerOptions nan;
  nan.negativeSlope = std::nan("");
  CHECK(userError([&] { (void)layers::gat(nan); }).find("negativeSlope must be a finite number") != std::string::npos);
  layers::LayerOptions inf;
  inf.trainEps = false;
  inf.eps = INFINITY;
  CHECK(userError([&] { (void)layers::gin(inf); }).find("eps must be a finite number") != std::string::npos);
}

TEST_CASE("inputs are read where PyG reads them") {
  layers::LayerOptions o;
  o.dim = 8;
  o.heads = 4;
  const auto readAt = [](const dsl::Layer &layer) {
    std::map<std::string, std::set<dsl::Level>> at;
    std::vector<dsl::ExprPtr> roots;
    for (const auto &out : layer.outputs())
      roots.push_back(out.value);
    for (const dsl::ExprPtr &n : dsl::postOrder(roots))
      if (const auto *ref = llvm::dyn_cast<dsl::InputRef>(n.get()))
        at[ref->input()->name].insert(ref->level());
    return at;
  };
  using L = dsl::Level;
  // GATv2Conv: propagate(x=(x_l, x_r)): x_j = lin_l(x)[source], x_i = lin_r(x)[destination].
  const dsl::Layer v2 = layers::gatv2(o);
  CHECK(readAt(v2)["xl"] == std::set<L>{L::Src});
  CHECK(readAt(v2)["xr"] == std::set<L>{L::Dst});
  CHECK(v2.findInput("att")->shape == dsl::Shape{4, 8});
  CHECK(v2.outputs()[0].value->shape() == dsl::Shape{1, 32});
  // TransformerConv: query at the destination, key/value at the source.
  const dsl::Layer t = layers::transformer(o);
  CHECK(readAt(t)["q"] == std::set<L>{L::Dst});
  CHECK(readAt(t)["k"] == std::set<L>{L::Src});
  CHECK(readAt(t)["v"] == std::set<L>{L::Src});
  // GATConv: one projected x, read at both ends.
  CHECK(readAt(layers::gat(o))["x"] == std::set<L>{L::Src, L::Dst});
  // EdgeConv: a at the destination, b at the source.
  layers::LayerOptions plain;
  plain.dim = 8;
  const dsl::Layer ec = layers::edgeConv(plain);
  CHECK(readAt(ec)["a"] == std::set<L>{L::Dst});
  CHECK(readAt(ec)["b"] == std::set<L>{L::Src});
  CHECK(layers::gin(plain).findInput("eps")->kind == dsl::InputKind::Param);
  plain.trainEps = false;
  CHECK(layers::gin(plain).findInput("eps") == nullptr);
  // A fixed eps is GIN's alone: AGNN refuses it rather than ignore it.
  CHECK(userError([&] { (void)layers::agnn(plain); }).find("does not read eps") != std::string::npos);
  plain.trainEps = true;
  CHECK(layers::agnn(plain).findInput("beta")->shape == dsl::Shape::scalar());
}

// ---- hand-computed values -------------------------------------------------------

TEST_CASE("GCN on the 5-node graph matches the hand-computed normalization") {
  layers::LayerOptions o;
  o.dim = 2;
  const dsl::Layer layer = layers::gcn(o);
  const ref::Tensor x = rows({{1, 2}, {3, -1}, {0.5, 4}, {-2, 1}, {2, -3}});

  SUBCASE("with self loops added (as GCNConv does)") {
    // In-degrees with the added loops: d = (4, 4, 4, 1, 1), so an edge between
    // two of {0, 1, 2} weighs 1/sqrt(4*4) = 1/4, an edge from 3 or 4 into
    // them 1/sqrt(1*4) = 1/2, and the loops of 3 and 4 weigh 1.
    //   out_0 = (x0 + x1)/4 + (x3 + x4)/2     = [4, 1]/4 + [0, -2]/2     = [1, -0.75]
    //   out_1 = (x0 + x1 + x2)/4 + x3/2       = [4.5, 5]/4 + [-1, 0.5]   = [0.125, 1.75]
    //   out_2 = (x0 + x1 + x2)/4 + x4/2       = [1.125, 1.25] + [1, -1.5] = [2.125, -0.25]
    //   out_3 = x3, out_4 = x4
    const graph::Graph g = fiveNodeGraph(graph::SelfLoops::AddMissing);
    const ref::TensorMap out = ref::forward(layer, g, {{"x", x}});
    checkClose(out.at("out"), rows({{1, -0.75}, {0.125, 1.75}, {2.125, -0.25}, {-2, 1}, {2, -3}}));
  }
  SUBCASE("without self loops: zero in-degree masks the source to 0, as PyG") {
    // d = (3, 3, 3, 0, 0): 3 and 4 have d^-1/2 = inf masked to 0, so their
    // messages vanish; edges among {0, 1, 2} weigh 1/3.
    //   out_0 = x1/3 = [1, -1/3];  out_1 = (x0 + x2)/3 = [0.5, 2];  out_2 = (x0 + x1)/3 = [4/3, 1/3]
    //   out_3 = out_4 = 0 (no in-edges)
    const graph::Graph g = fiveNodeGraph(graph::SelfLoops::Keep);
    const ref::TensorMap out = ref::forward(layer, g, {{"x", x}});
    checkClose(out.at("out"), rows({{1, -1.0 / 3}, {0.5, 2}, {4.0 / 3, 1.0 / 3}, {0, 0}, {0, 0}}));
  }
  SUBCASE("weighted: degrees are sums of weights at the destination") {
    // Edge 1 -> 0 weight 3, 3 -> 0 weight 1, everything else weight 1, loops
    // added with weight 1: d_0 = 3 + 1 + 1 + 1 = 6, d_1 = 4 (1 -> 0 does not
    // count at 1: in-degrees only), d_3 = 1.
    //   edge 1 -> 0: 3 / sqrt(d_1 d_0) = 3/sqrt(24);  3 -> 0: 1/sqrt(6);  4 -> 0: 1/sqrt(6);  0 -> 0: 1/6
    graph::EdgeList e;
    e.numNodes = 5;
    for (auto [s, d, w] : std::vector<std::tuple<int, int, float>>{
             {1, 0, 3}, {3, 0, 1}, {4, 0, 1}, {0, 1, 1}, {2, 1, 1}, {3, 1, 1}, {0, 2, 1}, {1, 2, 1}, {4, 2, 1}})
      e.add(s, d, w);
    graph::BuildOptions bo;
    bo.selfLoops = graph::SelfLoops::AddMissing;
    const graph::Graph g = graph::Graph::fromEdges(e, bo);
    layers::LayerOptions wo = o;
    wo.weighted = true;
    const ref::TensorMap out = ref::forward(layers::gcn(wo), g, {{"x", x}});
    const double out00 = 3 / std::sqrt(24.0) * 3 + (-2 + 2) / std::sqrt(6.0) + 1.0 / 6;
    const double out01 = 3 / std::sqrt(24.0) * -1 + (1 - 3) / std::sqrt(6.0) + 2.0 / 6;
    CHECK(out.at("out").at(0, 0) == doctest::Approx(out00).epsilon(1e-12));
    CHECK(out.at("out").at(0, 1) == doctest::Approx(out01).epsilon(1e-12));
    // Node 3 has only its loop (d_3 = 1): out_3 = x3 whatever the weights.
    CHECK(out.at("out").at(3, 0) == doctest::Approx(-2).epsilon(1e-12));
    CHECK(out.at("out").at(3, 1) == doctest::Approx(1).epsilon(1e-12));
  }
}

TEST_CASE("GATv2 on the 5-node graph matches the hand-computed attention") {
  // One head, C = 2, slope 0.2, att = [1, -0.5], self loops added (as GATv2Conv).
  // s_ji = att . leaky_relu(xl_j + xr_i); out_i = sum_j softmax_j(s_ji) xl_j.
  layers::LayerOptions o;
  o.dim = 2;
  const dsl::Layer layer = layers::gatv2(o);
  const graph::Graph g = fiveNodeGraph(graph::SelfLoops::AddMissing);
  const ref::Tensor xl = rows({{1, 0}, {0, 1}, {-1, 1}, {2, -1}, {0.5, 0.5}});
  const ref::Tensor xr = rows({{0, -1}, {1, 1}, {-0.5, 0}, {1, 0}, {0, 0}});
  const ref::TensorMap out = ref::forward(layer, g, {{"xl", xl}, {"xr", xr}, {"att", rows({{1, -0.5}})}});

  // Softmax-weighted sum of xl over (source, score) pairs.
  const auto attend = [&](std::vector<std::pair<int, double>> scored) {
    double den = 0, o0 = 0, o1 = 0;
    for (auto [j, s] : scored) {
      den += std::exp(s);
      o0 += std::exp(s) * xl.at(j, 0);
      o1 += std::exp(s) * xl.at(j, 1);
    }
    return std::pair{o0 / den, o1 / den};
  };
  // Node 0 (xr_0 = [0, -1]), sources 0 (loop), 1, 3, 4:
  //   j=0: z = [1, -1]     -> lrelu [1, -0.2]   -> s = 1 + 0.1  = 1.1
  //   j=1: z = [0, 0]      -> [0, 0]            -> s = 0
  //   j=3: z = [2, -2]     -> [2, -0.4]         -> s = 2 + 0.2  = 2.2
  //   j=4: z = [0.5, -0.5] -> [0.5, -0.1]       -> s = 0.5 + 0.05 = 0.55
  //   alpha = (0.2035, 0.0677, 0.6114, 0.1174); out_0 = [1.484905652947037, -0.484905652947037]
  // Node 1 (xr_1 = [1, 1]), sources 0, 1 (loop), 2, 3:
  //   j=0: z = [2, 1] -> s = 2 - 0.5 = 1.5;  j=1: z = [1, 2] -> s = 1 - 1 = 0
  //   j=2: z = [0, 2] -> s = 0 - 1 = -1;     j=3: z = [3, 0] -> s = 3
  //   out_1 = [1.7075266413336267, -0.7217112546215018]
  // Node 2 (xr_2 = [-0.5, 0]), sources 0, 1, 2 (loop), 4:
  //   j=0: z = [0.5, 0] -> s = 0.5;  j=1: z = [-0.5, 1] -> [-0.1, 1] -> s = -0.1 - 0.5 = -0.6
  //   j=2: z = [-1.5, 1] -> [-0.3, 1] -> s = -0.8;  j=4: z = [0, 0.5] -> s = -0.25
  //   out_2 = [0.46379134742629413, 0.4050430914829726]
  // Nodes 3 and 4 have only their loop: alpha = 1, out = xl.
  const ref::Tensor want = rows({{1.484905652947037, -0.484905652947037},
                                 {1.7075266413336267, -0.7217112546215018},
                                 {0.46379134742629413, 0.4050430914829726},
                                 {2, -1},
                                 {0.5, 0.5}});
  checkClose(out.at("out"), want, 1e-13);
  // The same numbers from the scores written above (guards the arithmetic).
  const auto n0 = attend({{0, 1.1}, {1, 0.0}, {3, 2.2}, {4, 0.55}});
  const auto n1 = attend({{0, 1.5}, {1, 0.0}, {2, -1.0}, {3, 3.0}});
  const auto n2 = attend({{0, 0.5}, {1, -0.6}, {2, -0.8}, {4, -0.25}});
  CHECK(n0.first == doctest::Approx(want.at(0, 0)).epsilon(1e-13));
  CHECK(n0.second == doctest::Approx(want.at(0, 1)).epsilon(1e-13));
  CHECK(n1.first == doctest::Approx(want.at(1, 0)).epsilon(1e-13));
  CHECK(n1.second == doctest::Approx(want.at(1, 1)).epsilon(1e-13));
  CHECK(n2.first == doctest::Approx(want.at(2, 0)).epsilon(1e-13));
  CHECK(n2.second == doctest::Approx(want.at(2, 1)).epsilon(1e-13));
}

TEST_CASE("heads are laid out head-major, as PyG's out.view(-1, H * C)") {
  // A two-head run equals two one-head runs on the column halves, side by side.
  const graph::Graph g = messyGraph(3, false, graph::SelfLoops::AddMissing);
  for (const std::string name : {"gat", "gatv2", "transformer"}) {
    INFO(name);
    layers::LayerOptions two;
    two.dim = 3;
    two.heads = 2;
    layers::LayerOptions one = two;
    one.heads = 1;
    const dsl::Layer l2 = layers::buildLayer(name, two), l1 = layers::buildLayer(name, one);
    const ref::TensorMap in2 = test::randomInputs(l2, g, 11);
    const ref::Tensor out2 = ref::forward(l2, g, in2).at("out");
    REQUIRE(out2.cols == 6);
    for (int64_t h = 0; h < 2; ++h) {
      ref::TensorMap in1;
      for (const auto &[key, t] : in2) {
        ref::Tensor half(t.rows, 3);
        for (int64_t r = 0; r < t.rows; ++r)
          for (int64_t c = 0; c < 3; ++c)
            half.at(r, c) = t.at(r, h * 3 + c);
        in1[key] = half;
      }
      const ref::Tensor out1 = ref::forward(l1, g, in1).at("out");
      for (int64_t r = 0; r < g.numNodes(); ++r)
        for (int64_t c = 0; c < 3; ++c)
          CHECK(out2.at(r, h * 3 + c) == doctest::Approx(out1.at(r, c)).epsilon(1e-14));
    }
    // concat=False is the mean of the heads.
    layers::LayerOptions mean = two;
    mean.concat = false;
    const ref::Tensor outMean = ref::forward(layers::buildLayer(name, mean), g, in2).at("out");
    for (int64_t r = 0; r < g.numNodes(); ++r)
      for (int64_t c = 0; c < 3; ++c)
        CHECK(outMean.at(r, c) == doctest::Approx((out2.at(r, c) + out2.at(r, 3 + c)) / 2).epsilon(1e-14));
  }
}

TEST_CASE("max/min: nodes without in-edges get 0, ties send the gradient to the first edge") {
  // Edges 0 -> 2, 1 -> 2 with x_0 == x_1 (an exact tie), 3 -> 2 smaller; node 0 has no in-edge.
  graph::EdgeList e;
  e.numNodes = 4;
  e.add(1, 2);
  e.add(0, 2);
  e.add(3, 2);
  const graph::Graph g = graph::Graph::fromEdges(e);
  layers::LayerOptions o;
  o.dim = 1;
  o.aggregation = "max";
  const dsl::Layer layer = layers::sage(o);
  const ref::TensorMap inputs = {{"x", rows({{0.5}, {0.5}, {2}, {-1}})}};
  const ref::Tensor out = ref::forward(layer, g, inputs).at("out");
  CHECK(out.at(0, 0) == 0); // no in-edge
  CHECK(out.at(2, 0) == 0.5);
  const dsl::BackwardPlan plan = dsl::differentiate(layer);
  ref::TensorMap b = inputs;
  b["d_out"] = rows({{0}, {0}, {1}, {0}});
  const ref::Tensor dx = ref::backward(layer, plan, g, b).at("x");
  // dsl::differentiate's convention: the first edge in CSR order (lowest
  // source id) takes it all. (torch's scatter_reduce amax would give 0.5 each.)
  CHECK(dx.at(0, 0) == 1);
  CHECK(dx.at(1, 0) == 0);
  CHECK(dx.at(3, 0) == 0);
}

// ---- gradients against finite differences ---------------------------------------

TEST_CASE("gradients match finite differences on the 5-node graph") {
  for (const graph::SelfLoops loops : {graph::SelfLoops::AddMissing, graph::SelfLoops::Keep}) {
    const graph::Graph g = fiveNodeGraph(loops);
    uint64_t seed = 100;
    for (const LayerCase &c : test::allLayerCases(3, 2)) {
      const dsl::Layer layer = layers::buildLayer(c.layer, c.options);
      ++seed;
      (void)test::checkGradients(c.label + (loops == graph::SelfLoops::Keep ? " (no loops)" : " (loops)"), layer, g,
                                 test::randomInputs(layer, g, seed), seed);
    }
  }
}

TEST_CASE("gradients match finite differences on random graphs with isolated nodes, self loops and a hub") {
  for (const uint64_t graphSeed : {1u, 2u}) {
    for (const bool weighted : {false, true}) {
      for (const graph::SelfLoops loops : {graph::SelfLoops::Keep, graph::SelfLoops::AddMissing}) {
        const graph::Graph g = messyGraph(graphSeed, weighted, loops);
        CHECK(g.numNodes() == 40);
        uint64_t seed = 1000 * graphSeed + (weighted ? 500 : 0) + (loops == graph::SelfLoops::Keep ? 0 : 250);
        for (const LayerCase &c : test::allLayerCases(2, 2)) {
          const dsl::Layer layer = layers::buildLayer(c.layer, c.options);
          ++seed;
          // Every coordinate of small inputs; 40 random ones of the larger.
          (void)test::checkGradients(c.label + " on messy graph", layer, g, test::randomInputs(layer, g, seed), seed,
                                     40);
        }
      }
    }
  }
}

TEST_CASE("gradients match finite differences on Cora") {
  const auto plain = coraGraph(graph::SelfLoops::Keep);
  if (!plain)
    return;
  const auto looped = coraGraph(graph::SelfLoops::AddMissing);
  CHECK(plain->numNodes() == 2708);
  CHECK(plain->numEdges() == 10556);
  CHECK(looped->numEdges() == 10556 + 2708);
  uint64_t seed = 7000;
  for (const LayerCase &c : test::allLayerCases(3, 2)) {
    const graph::Graph &g = c.pygAddsSelfLoops ? *looped : *plain;
    const dsl::Layer layer = layers::buildLayer(c.layer, c.options);
    ++seed;
    const auto r = test::checkGradients(c.label + " on cora", layer, g, test::randomInputs(layer, g, seed), seed, 24);
    MESSAGE(c.label << " on cora: worst relative gradient error " << r.worstRelativeError << " ("
                    << r.worstInput << ", " << r.coordinates << " coordinates)");
  }
}
