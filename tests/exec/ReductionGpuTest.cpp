// Reduction-family layers on the GPU, forward and backward, against the CPU
// reference executor: SAGE max/min, EdgeConv with every aggregation, the
// README's gated_difference and user layers that read edge inputs and
// parameters per edge; on every shared dataset and generated graphs (hubs
// that take the segment path, a star with one node of in-degree 10^6),
// widths 1 to 512, int32 and int64. SAGE's arg positions are checked exactly
// against a direct computation (ties and NaN included), gradients are
// checked to be bitwise identical from run to run.
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "graph/GraphSource.h"
#include "lower/Pipeline.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
#include "support/Random.h"

#include "ReductionTestLayers.h"
#include "GpuLayerCheck.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <memory>

using namespace gnnjit;
using namespace gnnjit::exec;
using autotune::RuleOptions;
using autotune::Variant;
using autotune::variantName;

namespace {

using test::checkAgainst;
using test::Expected;
using test::runAndCheck;

/// Inputs on a grid of 1/1024 in [-1, 1): a sum or product of two of them
/// is exact in float, so the GPU's max picks the edge the fp64 reference
/// picks (and ties, frequent on such a grid, exercise the first-wins rule).
ref::TensorMap gridInputs(const std::vector<dsl::InputPtr> &decls, const graph::Graph &g, uint64_t seed) {
  Rng rng(seed);
  ref::TensorMap t;
  for (const dsl::InputPtr &d : decls) {
    ref::Tensor x(ref::bindingRows(*d, g), d->shape.size());
    for (double &v : x.values)
      v = (static_cast<double>(rng.below(2048)) - 1024.0) / 1024.0;
    t[d->name] = std::move(x);
  }
  return t;
}

/// The layer's reference results on `g`, from inputs on that grid.
Expected reference(const dsl::Layer &layer, const graph::Graph &g) { return test::reference(layer, g, gridInputs); }


/// Whether a case's layer takes a max or a min (run on three paths).
bool extreme(const std::string &label) {
  return label.find("max") != std::string::npos || label.find("min") != std::string::npos;
}

/// Every case (or those in `only`) at every width; max and min layers also
/// with their backward over the transpose instead of the arg scatter, and
/// with heavy rows merged by a second pass instead of packed atomics. Checks
/// that it compared each output and gradient of every run it was given.
void sweep(const graph::Graph &g, const std::vector<int64_t> &widths, const std::vector<std::string> &only = {}) {
  const std::vector<test::ReductionLayerCase> cases = test::reductionLayerCases();
  std::vector<std::string> labels;
  for (const test::ReductionLayerCase &c : cases)
    labels.push_back(c.label);
  test::checkLabels(only, labels);
  const auto chosen = [&](const test::ReductionLayerCase &c) {
    return only.empty() || std::find(only.begin(), only.end(), c.label) != only.end();
  };
  int expected = 0;
  for (const test::ReductionLayerCase &c : cases)
    if (chosen(c))
      expected += test::tensorsPerRun(c.build(1)) * (extreme(c.label) ? 3 : 1) * static_cast<int>(widths.size());
  const int start = test::gpuChecks;
  for (int64_t F : widths)
    for (const test::ReductionLayerCase &c : cases) {
      if (!chosen(c))
        continue;
      const Expected e = reference(c.build(F), g);
      const std::string what =
          fmt::format("{} on {} F={} {}", c.label, g.name(), F, graph::indexTypeName(g.indexType()));
      runAndCheck(e, g, what);
      if (extreme(c.label)) {
        RuleOptions transposed, secondPass;
        transposed.argScatter = false;
        secondPass.packedMerge = false;
        runAndCheck(e, g, what + " (transposed backward)", transposed);
        runAndCheck(e, g, what + " (second-pass merge)", secondPass);
      }
    }
  test::checkCount(start, expected, "the reduction sweep on " + g.name());
}

} // namespace

TEST_CASE("the caller's buffers: results and saved arg positions, forwards before backwards; int32 and int64") {
  for (graph::IndexChoice index : {graph::IndexChoice::Int32, graph::IndexChoice::Int64}) {
    const auto g = test::loadGraph("rmat:scale=9,ef=8,seed=4", index);
    const int start = test::gpuChecks;
    int expected = 0;
    for (const test::ReductionLayerCase &c : test::reductionLayerCases()) {
      const dsl::Layer layer = c.build(33);
      expected += test::tensorsPerRun(layer);
      test::runWithCallerBuffers(reference(layer, *g), *g,
                                 fmt::format("{} on rmat 9 {}", c.label, graph::indexTypeName(g->indexType())),
                                 gridInputs);
    }
    test::checkCount(start, expected, "every reduction case with the caller's buffers");
  }
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("every reduction layer on every shared dataset") {
  for (const char *name : {"cora", "citeseer", "pubmed", "squirrel", "tolokers", "email-Eu-core"}) {
    if (!test::sharedFile(name))
      return;
    sweep(*test::loadGraph(name), {3, 32});
  }
  sweep(*test::loadGraph("cora"), {1, 128, 130, 512});
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("generated graphs: hubs in segments, grid, random, clustered; int64") {
  const std::vector<std::string> some = {"sage max", "edgeconv max", "edgeconv mean", "gated_difference",
                                         "edge_gate max", "edge_affine"};
  sweep(*test::loadGraph("rmat:scale=11,ef=16,seed=1"), {1, 3, 32, 128, 130, 512});
  sweep(*test::loadGraph("rmat:scale=11,ef=16,seed=1", graph::IndexChoice::Int64), {3, 130});
  sweep(*test::loadGraph("grid:side=40"), {1, 32, 130}, some);
  sweep(*test::loadGraph("er:n=3000,deg=12,seed=2"), {1, 32, 130}, some);
  sweep(*test::loadGraph("sbm:n=2000,blocks=8,din=10,dout=2,seed=3"), {1, 32, 130}, some);
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("a star with one node of in-degree 10^6, and a graph without edges") {
  graph::EdgeList star;
  star.numNodes = 1'000'001;
  for (int64_t j = 1; j < star.numNodes; ++j)
    star.add(j, 0);
  graph::EdgeList none;
  none.numNodes = 50;
  for (graph::EdgeList *edges : {&star, &none}) {
    const graph::Graph g = graph::Graph::fromEdges(*edges);
    sweep(g, {3}, {"sage max", "sage min", "edgeconv max", "edgeconv mean", "edge_gate max"});
  }
}

TEST_CASE("SAGE max and min: arg positions exactly the first extreme in CSR order, NaN winning") {
  // With heavy rows (above 16 edges) merged by the second pass and by packed atomics.
  // Duplicate edges and a coarse value grid give ties; a few NaN inputs.
  graph::EdgeList edges = graph::loadGraphSource("rmat:scale=10,ef=8,seed=5").edges;
  const int64_t extra = edges.numEdges() / 4;
  for (int64_t k = 0; k < extra; ++k)
    edges.add(edges.src[static_cast<size_t>(k)], edges.dst[static_cast<size_t>(k)]);
  const graph::Graph g = graph::Graph::fromEdges(edges);
  for (const bool packedMerge : {false, true})
  for (const char *aggregation : {"max", "min"}) {
    CAPTURE(packedMerge);
    layers::LayerOptions o;
    o.dim = 33;
    o.aggregation = aggregation;
    const lower::LoweredLayer lowered = lower::lowerLayer(layers::buildLayer("sage", o));
    ref::TensorMap inputs;
    ref::Tensor x(g.numNodes(), 33);
    Rng rng(9);
    for (double &v : x.values)
      v = static_cast<double>(rng.below(8)) - 4.0; // few distinct values: many ties
    for (int64_t k = 0; k < 40; ++k)
      x.values[static_cast<size_t>(rng.below(x.values.size()))] = NAN;
    inputs["x"] = x;
    const ref::TensorMap expected = ref::forward(lowered.layer, g, inputs);
    DeviceGraph dg(g);
    autotune::RuleOptions rule;
    rule.heavyThreshold = 16;
    rule.packedMerge = packedMerge;
    LayerRunner runner(lowered, dg, autotune::rulePrograms(lowered, g, rule));
    const auto &step = std::get<lower::ReductionStep>(runner.program(Pass::Forward).plan.steps.at(0));
    REQUIRE(step.config.heavyThreshold == 16);
    REQUIRE(step.config.packedMerge == packedMerge);
    const UploadedTensors in(inputs);
    checkAgainst(expected, runner.forward(in.tensors()), fmt::format("sage {} with ties and NaN", aggregation));
    const runtime::DeviceMemory *saved = runner.saved("args0");
    REQUIRE(saved != nullptr);
    std::vector<int32_t> args(static_cast<size_t>(g.numNodes() * 33));
    saved->copyToHost(args.data(), args.size() * sizeof(int32_t));
    const bool isMax = std::string(aggregation) == "max";
    int64_t wrong = 0;
    for (int64_t i = 0; i < g.numNodes(); ++i)
      for (int64_t f = 0; f < 33; ++f) {
        int64_t want = -1;
        double best = 0;
        for (int64_t p = g.incoming().rowBegin(i); p < g.incoming().rowEnd(i); ++p) {
          const double v = x.at(g.incoming().index(p), f);
          if (want < 0 || (isMax ? v > best : v < best) || (std::isnan(v) && !std::isnan(best))) {
            want = p;
            best = v;
          }
        }
        wrong += args[static_cast<size_t>(i * 33 + f)] != want;
      }
    CHECK(wrong == 0);
  }
}

TEST_CASE("the arg scatter carries NaN and infinite gradients to the arg sources only, as their float sum") {
  // The reference multiplies every edge's d_out by its 0/1 arg match, so a
  // NaN output gradient reaches every source of the row there (0 x NaN);
  // the scatter, like PyTorch's max backward, sends it to the arg source
  // alone. Expected values are summed here, per arg edge, in double.
  const graph::Graph g = graph::Graph::fromEdges(graph::loadGraphSource("rmat:scale=9,ef=16,seed=6").edges);
  const int64_t F = 8, n = g.numNodes();
  layers::LayerOptions o;
  o.dim = F;
  o.aggregation = "max";
  const lower::LoweredLayer lowered = lower::lowerLayer(layers::buildLayer("sage", o));
  ref::TensorMap inputs = gridInputs(lowered.layer.inputs(), g, 3);
  ref::Tensor dout = gridInputs(lowered.backward.plan.outputGradients, g, 4).at("d_out");
  // Plant them at rows that have in-edges (an empty row has no arg edge).
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n && rows.size() < 3; ++i)
    if (g.incoming().degree(i) > 0)
      rows.push_back(i);
  REQUIRE(rows.size() == 3);
  dout.at(rows[0], 0) = NAN;
  dout.at(rows[1], 1) = INFINITY;
  dout.at(rows[1], 2) = INFINITY;
  dout.at(rows[2], 3) = -INFINITY;
  dout.at(rows[2], 4) = INFINITY;
  const ref::Tensor &x = inputs.at("x");
  ref::Tensor expected(n, F);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < F; ++f) {
      int64_t arg = -1;
      for (int64_t p = g.incoming().rowBegin(i); p < g.incoming().rowEnd(i); ++p)
        if (arg < 0 || x.at(g.incoming().index(p), f) > x.at(g.incoming().index(arg), f))
          arg = p;
      if (arg >= 0)
        expected.at(g.incoming().index(arg), f) += dout.at(i, f);
    }
  DeviceGraph dg(g);
  LayerRunner runner(lowered, dg, autotune::rulePrograms(lowered, g));
  REQUIRE(std::holds_alternative<lower::ArgScatterStep>(runner.program(Pass::Backward).plan.steps.at(0)));
  const UploadedTensors in(inputs);
  runner.forward(in.tensors());
  ref::TensorMap backwardInputs = inputs;
  backwardInputs["d_out"] = dout;
  const UploadedTensors bin(backwardInputs);
  checkAgainst({{"x", expected}}, runner.backward(bin.tensors()), "sage max with non-finite output gradients");
  int64_t nonFinite = 0;
  for (double v : expected.values)
    nonFinite += !std::isfinite(v);
  CHECK(nonFinite >= 3); // the test reached every kind of flag
}

TEST_CASE("the backward of a max needs the forward's saved arg positions first") {
  const graph::Graph g = graph::Graph::fromEdges(graph::loadGraphSource("grid:side=4").edges);
  layers::LayerOptions o;
  o.aggregation = "max";
  const lower::LoweredLayer lowered = lower::lowerLayer(layers::buildLayer("sage", o));
  DeviceGraph dg(g);
  LayerRunner runner(lowered, dg, autotune::rulePrograms(lowered, g));
  ref::TensorMap inputs = gridInputs(lowered.layer.inputs(), g, 1);
  for (auto &[name, t] : gridInputs(lowered.backward.plan.outputGradients, g, 2))
    inputs[name] = t;
  CHECK_THROWS_WITH_AS(runner.backward(UploadedTensors(inputs).tensors()),
                       doctest::Contains("run forward on this runner first"), UserError);
}
