// Attention-family layers on the GPU, forward and every gradient, against the
// CPU reference executor: GAT, GATv2, the Graph Transformer with and without
// edge features, AGNN, and the user-written distance attention of
// examples/DistanceAttention.h; on every shared dataset and generated graphs
// (hubs that take the segment path, a grid, random and clustered graphs, a
// star with one node of in-degree 10^6, isolated nodes), heads 1 to 8, head
// dims 1 to 256, int32 and int64. The backward is the rule's default, fused
// (shared edge loops, RuleOptions::fuseAttentionBackward), with a case on
// graphs that give its strided groups several rows and segments each, and
// the unfused backward (a loop per sum, parameter sums over edge ranges) on
// a subset; heads padded to a power of two of lanes (122 floats in pairs);
// attention dropout under two seeds on each path. AGNN, which has one
// head, runs at heads 1 with each head dim of every sweep. Gradients are
// checked to be bitwise identical from run to run, and each sweep checks
// that it compared every output and gradient of every run it was given.
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "examples/DistanceAttention.h"
#include "graph/GraphSource.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
#include "support/Random.h"

#include "AttentionTestLayers.h"
#include "GpuLayerCheck.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <functional>
#include <memory>
#include <set>

using namespace gnnjit;
using namespace gnnjit::exec;
using autotune::RuleOptions;
using autotune::Variant;
using autotune::variantName;

namespace {

using test::checkAgainst;
using test::Expected;
using test::runAndCheck;

/// Inputs on a grid of 1/256 in [-1, 1): a dot product of two rows of up to
/// 256 of them is exact in float, so a score's sign at a LeakyReLU's kink is
/// the reference's (a near-zero score computed in float can land on the
/// other side, and the slopes differ 5x: a true disagreement, not an error).
ref::TensorMap gridInputs(const std::vector<dsl::InputPtr> &decls, const graph::Graph &g, uint64_t seed) {
  Rng rng(seed);
  ref::TensorMap t;
  for (const dsl::InputPtr &d : decls) {
    ref::Tensor x(ref::bindingRows(*d, g), d->shape.size());
    for (double &v : x.values)
      v = (static_cast<double>(rng.below(512)) - 256.0) / 256.0;
    t[d->name] = std::move(x);
  }
  return t;
}

/// The layer's reference results on `g`, from inputs on that grid.
Expected reference(const dsl::Layer &layer, const graph::Graph &g) { return test::reference(layer, g, gridInputs); }

struct AttentionCase {
  std::string label;
  std::function<dsl::Layer(int64_t heads, int64_t dim)> build;
  bool multiHead = true; ///< AGNN has one head
};

dsl::Layer library(const std::string &name, int64_t heads, int64_t dim, std::function<void(layers::LayerOptions &)> tweak) {
  layers::LayerOptions o;
  o.dim = dim;
  if (layers::takes(layers::findLayer(name), layers::Knob::Heads))
    o.heads = heads;
  tweak(o);
  return layers::buildLayer(name, o);
}

std::vector<AttentionCase> attentionCases() {
  const auto none = [](layers::LayerOptions &) {};
  return {
      {"gatv2", [=](int64_t h, int64_t d) { return library("gatv2", h, d, none); }},
      {"gatv2 mean heads edge",
       [](int64_t h, int64_t d) {
         return library("gatv2", h, d, [](layers::LayerOptions &o) {
           o.concat = false;
           o.edgeFeatures = true;
         });
       }},
      {"gat", [=](int64_t h, int64_t d) { return library("gat", h, d, none); }},
      {"gat edge", [](int64_t h, int64_t d) {
         return library("gat", h, d, [](layers::LayerOptions &o) { o.edgeFeatures = true; });
       }},
      {"gat bipartite", [](int64_t h, int64_t d) {
         return library("gat", h, d, [](layers::LayerOptions &o) { o.bipartite = true; });
       }},
      {"transformer", [=](int64_t h, int64_t d) { return library("transformer", h, d, none); }},
      {"transformer edge",
       [](int64_t h, int64_t d) {
         return library("transformer", h, d, [](layers::LayerOptions &o) { o.edgeFeatures = true; });
       }},
      {"agnn", [=](int64_t, int64_t d) { return library("agnn", 1, d, none); }, false},
      {"distance_attention", [](int64_t h, int64_t d) { return examples::distanceAttention(h, d); }},
      {"source_score", [](int64_t h, int64_t d) { return test::sourceScoreAttention(h, d); }},
  };
}


/// Every case (or those in `only`) at each (heads, dim); a single-head case
/// (AGNN) at heads 1 with each of the dims, once each. Checks that it
/// compared each output and gradient of every run it was given.
void sweep(const graph::Graph &g, const std::vector<std::pair<int64_t, int64_t>> &shapes,
           const std::vector<std::string> &only = {}, const RuleOptions &rule = {}) {
  const std::vector<AttentionCase> cases = attentionCases();
  std::vector<std::string> labels;
  for (const AttentionCase &c : cases)
    labels.push_back(c.label);
  test::checkLabels(only, labels);
  const auto chosen = [&](const AttentionCase &c) {
    return only.empty() || std::find(only.begin(), only.end(), c.label) != only.end();
  };
  std::set<int64_t> dims;
  for (const auto &shape : shapes)
    dims.insert(shape.second);
  int expected = 0;
  for (const AttentionCase &c : cases)
    if (chosen(c))
      expected += test::tensorsPerRun(c.build(1, 1)) * static_cast<int>(c.multiHead ? shapes.size() : dims.size());
  const int start = test::gpuChecks;
  std::set<std::pair<std::string, int64_t>> singleHeadRuns;
  for (const auto &[shapeHeads, dim] : shapes)
    for (const AttentionCase &c : cases) {
      if (!chosen(c))
        continue;
      if (!c.multiHead && !singleHeadRuns.emplace(c.label, dim).second)
        continue; // run at this dim already
      const int64_t heads = c.multiHead ? shapeHeads : 1;
      const std::string what =
          fmt::format("{} on {} heads={} dim={} {}", c.label, g.name(), heads, dim, graph::indexTypeName(g.indexType()));
      CAPTURE(what);
      runAndCheck(reference(c.build(heads, dim), g), g, what, rule);
    }
  test::checkCount(start, expected, "the attention sweep on " + g.name());
}

/// Every case on `g` with the caller's buffers, at `dim` (4 heads where the
/// layer has heads); checks that each compared its outputs and gradients.
void callerBuffersSweep(const graph::Graph &g, int64_t dim, const std::string &suffix) {
  const int start = test::gpuChecks;
  int expected = 0;
  for (const AttentionCase &c : attentionCases()) {
    const dsl::Layer layer = c.build(c.multiHead ? 4 : 1, dim);
    expected += test::tensorsPerRun(layer);
    test::runWithCallerBuffers(reference(layer, g), g, c.label + suffix, gridInputs);
  }
  test::checkCount(start, expected, "every attention case with the caller's buffers" + suffix);
}

} // namespace

TEST_CASE("every attention layer on every shared dataset") {
  for (const char *name : {"cora", "citeseer", "pubmed", "squirrel", "tolokers", "email-Eu-core"}) {
    if (!test::sharedFile(name))
      return;
    sweep(*test::loadGraph(name), {{4, 32}, {1, 7}});
  }
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("heads 1, 2, 4, 8 by head dims 1, 7, 32, 64, 128, 256") {
  const auto g = test::loadGraph("rmat:scale=9,ef=8,seed=4");
  for (int64_t heads : {1, 2, 4, 8})
    for (int64_t dim : {1, 7, 32, 64, 128, 256})
      sweep(*g, {{heads, dim}}, {"gatv2", "transformer edge"});
  sweep(*g, {{2, 64}, {8, 1}}, {"gat", "agnn", "distance_attention", "source_score"});
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("generated graphs: hubs in segments, grid, random, clustered; int64") {
  sweep(*test::loadGraph("rmat:scale=11,ef=16,seed=1"), {{4, 32}, {3, 7}, {2, 128}});
  sweep(*test::loadGraph("rmat:scale=11,ef=16,seed=1", graph::IndexChoice::Int64), {{4, 32}, {3, 7}});
  const std::vector<std::string> some = {"gatv2", "gat", "transformer edge", "distance_attention", "source_score"};
  sweep(*test::loadGraph("grid:side=40"), {{4, 32}}, some);
  sweep(*test::loadGraph("er:n=3000,deg=12,seed=2"), {{4, 32}}, some);
  sweep(*test::loadGraph("sbm:n=2000,blocks=8,din=10,dout=2,seed=3"), {{4, 32}}, some);
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("edge ids with gaps: self loops replaced, duplicates removed; edge inputs and their gradients by id") {
  graph::BuildOptions cleaning;
  cleaning.selfLoops = graph::SelfLoops::Replace;
  cleaning.removeDuplicates = true;
  graph::Graph g = graph::Graph::fromEdges(graph::loadGraphSource("rmat:scale=9,ef=8,seed=4").edges, cleaning);
  g.setName("rmat 9 cleaned");
  REQUIRE(g.numEdgeIds() > g.numEdges()); // removed loops and duplicates keep their (unread) rows
  sweep(g, {{4, 32}, {2, 7}}, {"gatv2 mean heads edge", "gat edge", "transformer edge"});
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("the caller's buffers: results, saved softmax states and aliased outputs, forwards before backwards") {
  callerBuffersSweep(*test::loadGraph("rmat:scale=9,ef=8,seed=4"), 32, " on rmat 9");
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("forced heavy rows: segments merge softmax states and sums in order") {
  // Threshold 16 edges and segments of 8: most rows of the R-MAT graph are split.
  RuleOptions rule;
  rule.heavyThreshold = 16;
  rule.segmentLength = 8;
  sweep(*test::loadGraph("rmat:scale=10,ef=16,seed=7"), {{4, 32}, {2, 7}, {1, 256}}, {}, rule);
}

TEST_CASE("the fused backward: shared edge loops, parameter sums in the pass over in-edges") {
  RuleOptions fused;
  fused.fuseAttentionBackward = true;
  for (const char *name : {"cora", "squirrel", "tolokers"})
    if (test::sharedFile(name))
      sweep(*test::loadGraph(name), {{4, 32}, {1, 7}}, {}, fused);
  sweep(*test::loadGraph("rmat:scale=11,ef=16,seed=1"), {{4, 32}, {3, 7}, {2, 128}}, {}, fused);
  sweep(*test::loadGraph("rmat:scale=9,ef=8,seed=4"), {{8, 256}, {2, 1}, {1, 64}}, {"gatv2", "gat", "transformer edge"},
        fused);
  // More rows (a grid of 14400 nodes) and more segments (rmat 13 in
  // segments of 8) than the strided kernels' 8192 groups: groups take
  // several rows and segments each.
  sweep(*test::loadGraph("grid:side=120"), {{4, 32}}, {"gatv2", "gat", "transformer", "source_score"}, fused);
  RuleOptions heavy = fused;
  heavy.heavyThreshold = 16;
  heavy.segmentLength = 8;
  sweep(*test::loadGraph("rmat:scale=10,ef=16,seed=7"), {{4, 32}, {2, 7}}, {}, heavy);
  sweep(*test::loadGraph("rmat:scale=13,ef=16,seed=5"), {{4, 32}}, {"gatv2", "source_score"}, heavy);
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("the unfused backward: an edge loop per sum, parameter sums over edge ranges") {
  RuleOptions unfused;
  unfused.fuseAttentionBackward = false;
  for (const char *name : {"cora", "squirrel"})
    if (test::sharedFile(name))
      sweep(*test::loadGraph(name), {{4, 32}, {1, 7}}, {}, unfused);
  sweep(*test::loadGraph("rmat:scale=11,ef=16,seed=1"), {{4, 32}, {3, 7}}, {}, unfused);
  sweep(*test::loadGraph("grid:side=120"), {{4, 32}}, {"gatv2", "gat", "transformer", "source_score"}, unfused);
  RuleOptions heavy = unfused;
  heavy.heavyThreshold = 16;
  heavy.segmentLength = 8;
  sweep(*test::loadGraph("rmat:scale=10,ef=16,seed=7"), {{4, 32}, {2, 7}}, {}, heavy);
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("padded heads: head dims whose lanes have an odd factor (122 in pairs, 61, 5) on every path") {
  RuleOptions heavy, unfused;
  heavy.heavyThreshold = 16;
  heavy.segmentLength = 8;
  unfused.fuseAttentionBackward = false;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{4, 122}, {2, 61}, {3, 5}};
  if (test::sharedFile("cora"))
    sweep(*test::loadGraph("cora"), shapes);
  sweep(*test::loadGraph("rmat:scale=11,ef=16,seed=1", graph::IndexChoice::Int64), shapes);
  sweep(*test::loadGraph("rmat:scale=10,ef=16,seed=7"), shapes, {}, heavy);
  sweep(*test::loadGraph("grid:side=40"), shapes, {"gatv2", "gat edge", "transformer edge", "source_score"}, unfused);
  callerBuffersSweep(*test::loadGraph("rmat:scale=9,ef=8,seed=4"), 122, " 122 on rmat 9");
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("attention dropout: both passes drop what the reference drops, for any seed, path and index type") {
  const std::vector<std::pair<std::string, std::function<dsl::Layer(int64_t, int64_t)>>> cases = {
      {"gat dropout 0.6",
       [](int64_t h, int64_t d) { return library("gat", h, d, [](layers::LayerOptions &o) { o.attentionDropout = 0.6; }); }},
      {"gatv2 mean heads edge dropout 0.5",
       [](int64_t h, int64_t d) {
         return library("gatv2", h, d, [](layers::LayerOptions &o) {
           o.concat = false;
           o.edgeFeatures = true;
           o.attentionDropout = 0.5;
         });
       }},
      {"transformer edge dropout 0.3",
       [](int64_t h, int64_t d) {
         return library("transformer", h, d, [](layers::LayerOptions &o) {
           o.edgeFeatures = true;
           o.attentionDropout = 0.3;
         });
       }},
  };
  RuleOptions heavy, unfused;
  heavy.heavyThreshold = 16;
  heavy.segmentLength = 8;
  unfused.fuseAttentionBackward = false;
  std::vector<std::pair<std::unique_ptr<graph::Graph>, RuleOptions>> graphs;
  if (test::sharedFile("cora"))
    graphs.emplace_back(test::loadGraph("cora"), RuleOptions{});
  graphs.emplace_back(test::loadGraph("rmat:scale=11,ef=16,seed=1", graph::IndexChoice::Int64), RuleOptions{});
  graphs.emplace_back(test::loadGraph("rmat:scale=10,ef=16,seed=7"), heavy);
  graphs.emplace_back(test::loadGraph("grid:side=40"), unfused);
  const std::vector<uint64_t> seeds = {0, 0x9e3779b97f4a7c15ull};
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{4, 32}, {3, 7}};
  int perShape = 0;
  for (const auto &c : cases)
    perShape += test::tensorsPerRun(c.second(1, 1));
  const int start = test::gpuChecks;
  for (uint64_t seed : seeds)
    for (const auto &[g, rule] : graphs)
      for (const auto &[label, build] : cases)
        for (const auto &[heads, dim] : shapes) {
          const std::string what = fmt::format("{} on {} heads={} dim={} seed={:x}", label, g->name(), heads, dim, seed);
          CAPTURE(what);
          runAndCheck(test::reference(build(heads, dim), *g, gridInputs, seed), *g, what, rule);
        }
  const auto g = test::loadGraph("rmat:scale=9,ef=8,seed=4");
  for (const auto &[label, build] : cases)
    test::runWithCallerBuffers(test::reference(build(4, 32), *g, gridInputs, 77), *g, label + " on rmat 9", gridInputs);
  test::checkCount(start,
                   perShape * static_cast<int>(seeds.size() * graphs.size() * shapes.size()) + perShape,
                   "attention dropout");
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("a star with one node of in-degree 10^6, isolated nodes, and a graph without edges") {
  graph::EdgeList star;
  star.numNodes = 1'000'001;
  for (int64_t j = 1; j < star.numNodes; ++j)
    star.add(j, 0);
  graph::EdgeList none;
  none.numNodes = 50;
  graph::EdgeList sparse; // most nodes without in-edges
  sparse.numNodes = 500;
  for (int64_t j = 0; j < 100; ++j)
    sparse.add(j, (j * 7) % 40);
  for (graph::EdgeList *edges : {&star, &none, &sparse}) {
    graph::Graph g = graph::Graph::fromEdges(*edges);
    g.setName(fmt::format("{} nodes {} edges", g.numNodes(), g.numEdges()));
    sweep(g, {{2, 4}}, {"gatv2", "transformer edge", "agnn"});
  }
}

TEST_CASE("isolated nodes give 0 and a log-sum-exp of -inf") {
  graph::EdgeList edges;
  edges.numNodes = 6;
  edges.add(0, 1);
  edges.add(2, 1);
  edges.add(1, 3);
  const graph::Graph g = graph::Graph::fromEdges(edges);
  const lower::LoweredLayer lowered = lower::lowerLayer(library("gatv2", 2, 4, [](layers::LayerOptions &) {}));
  DeviceGraph dg(g);
  LayerRunner runner(lowered, dg, autotune::rulePrograms(lowered, g));
  const ref::TensorMap inputs = gridInputs(lowered.layer.inputs(), g, 5);
  const UploadedTensors in(inputs);
  const ref::Tensor out = download(runner.forward(in.tensors()).at("out"));
  for (int64_t i : {0, 2, 4, 5})
    for (int64_t f = 0; f < 8; ++f)
      CHECK(out.at(i, f) == 0.0);
  const runtime::DeviceMemory *lse = runner.saved("lse0");
  REQUIRE(lse != nullptr);
  std::vector<float> values(12);
  lse->copyToHost(values.data(), values.size() * sizeof(float));
  CHECK(std::isinf(values[0]));
  CHECK(values[0] < 0);
  CHECK(std::isfinite(values[2])); // node 1 has two in-edges
}
