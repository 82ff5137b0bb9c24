// SpMM-family layers on the GPU, forward and backward, against the CPU
// reference executor: every shared dataset and generated graphs (hubs that
// take the heavy-row path, grids, random, clustered), feature widths 1 to
// 512, int32 and int64 indices, the generated kernel and cuSPARSE, strided
// inputs, empty graphs, and bad bindings.
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "graph/GraphSource.h"
#include "lower/Pipeline.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
#include "support/Random.h"

#include "GpuLayerCheck.h"
#include "SpmmTestLayers.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace gnnjit;
using namespace gnnjit::exec;
using autotune::RuleOptions;
using autotune::Variant;
using autotune::variantName;

namespace {

constexpr double kTolerance = 1e-4;
/// A single global sum (a parameter's gradient, such as GIN's eps: a sum
/// over every node and feature) may cancel to a value far below its terms;
/// its float rounding is then measured against the sum of |terms|. GIN's
/// eps on cora at F = 512 (1.4 M terms, bipartite) came within about 4e-10
/// of it on an H100 (1.4e-4 off a value of -0.34: 4e-4 relative); this bound
/// leaves a margin of 250 and still sees one row of terms missing (about 7).
constexpr double kGlobalSumTolerance = 1e-7;

struct GraphCase {
  std::string spec;
  graph::BuildOptions build;
};

/// The graph of `spec`; with random positive weights when `weighted`.
std::unique_ptr<graph::Graph> makeGraph(const GraphCase &c, bool weighted, graph::IndexChoice index) {
  graph::Dataset d = graph::loadGraphSource(c.spec);
  if (weighted) {
    Rng rng(3);
    d.edges.weight.resize(static_cast<size_t>(d.edges.numEdges()));
    for (float &w : d.edges.weight)
      w = 0.5f + 1.5f * static_cast<float>(rng.uniform());
  }
  graph::BuildOptions options = c.build;
  options.index = index;
  auto g = std::make_unique<graph::Graph>(graph::Graph::fromEdges(d.edges, options));
  g->setName(c.spec);
  return g;
}

ref::TensorMap randomInputs(const std::vector<dsl::InputPtr> &decls, const graph::Graph &g, uint64_t seed) {
  Rng rng(seed);
  ref::TensorMap t;
  for (const dsl::InputPtr &d : decls) {
    ref::Tensor x(ref::bindingRows(*d, g), d->shape.size());
    for (double &v : x.values)
      v = 2 * rng.uniform() - 1;
    t[d->name] = std::move(x);
  }
  return t;
}

/// Reference results of one layer on one graph, computed once and checked
/// against every variant and index type.
struct Expected {
  lower::LoweredLayer lowered;
  ref::TensorMap inputs, backwardInputs, outputs, gradients;
  /// The gradients of the inputs' absolute values: for these layers (linear
  /// in each input), each element is the sum of |terms| it adds up. Made
  /// only when some gradient has one element.
  ref::TensorMap gradientScales;
};

ref::TensorMap absolute(ref::TensorMap tensors) {
  for (auto &[name, t] : tensors)
    for (double &v : t.values)
      v = std::abs(v);
  return tensors;
}

Expected reference(const test::SpmmLayerCase &c, const graph::Graph &g) {
  Expected e{lower::lowerLayer(layers::buildLayer(c.layer, c.options)), {}, {}, {}, {}, {}};
  e.inputs = randomInputs(e.lowered.layer.inputs(), g, 17);
  e.outputs = ref::forward(e.lowered.layer, g, e.inputs);
  e.backwardInputs = e.inputs;
  for (auto &[name, t] : randomInputs(e.lowered.backward.plan.outputGradients, g, 29))
    e.backwardInputs[name] = std::move(t);
  e.gradients = ref::backward(e.lowered.layer, e.lowered.backward.plan, g, e.backwardInputs);
  // Only one-element gradients (global sums) are measured against them.
  const auto oneElement = [](const auto &entry) { return entry.second.values.size() == 1; };
  if (std::any_of(e.gradients.begin(), e.gradients.end(), oneElement))
    e.gradientScales = ref::backward(e.lowered.layer, e.lowered.backward.plan, g, absolute(e.backwardInputs));
  return e;
}

/// Whether a one-element result `a` of `name` is within float rounding of a
/// global sum whose |terms| add up to its entry in `scales`.
bool withinGlobalSumRounding(const ref::Tensor &t, const Agreement &a, const std::string &name,
                             const ref::TensorMap *scales) {
  if (scales == nullptr || t.values.size() != 1)
    return false;
  const auto it = scales->find(name);
  return it != scales->end() && std::abs(a.actual - a.expected) <= kGlobalSumTolerance * it->second.values.at(0);
}

void checkAgainst(const ref::TensorMap &expected, const DeviceTensors &actual, const std::string &what,
                  const ref::TensorMap *scales = nullptr) {
  for (const auto &[name, t] : expected) {
    const auto it = actual.find(name);
    REQUIRE_MESSAGE(it != actual.end(), what << ": no result " << name);
    const Agreement a = compare(t, download(it->second));
    ++test::gpuChecks;
    if (a.worst > kTolerance && !withinGlobalSumRounding(t, a, name, scales))
      FAIL_CHECK(what << ": " << name << " off by " << a.worst << " at [" << a.row << ", " << a.col << "]: expected "
                      << a.expected << ", got " << a.actual);
  }
}

/// Runs forward and backward with `variant` and checks both.
void runAndCheck(const Expected &e, graph::Graph &g, Variant variant, int64_t padding, const std::string &what) {
  DeviceGraph dg(g);
  autotune::RuleOptions rule;
  rule.variant = variant;
  LayerRunner runner(e.lowered, dg, autotune::rulePrograms(e.lowered, g, rule));
  const UploadedTensors in(e.inputs, padding);
  checkAgainst(e.outputs, runner.forward(in.tensors()), what + " forward");
  const UploadedTensors bin(e.backwardInputs, padding);
  checkAgainst(e.gradients, runner.backward(bin.tensors()), what + " backward", &e.gradientScales);
}

/// Every case at every width on every graph, unweighted and weighted, with
/// both variants on int32 and int64 (int64 on one variant of two unless
/// `bothIndexTypes`). Checks that it compared each output and gradient of
/// every run it was given.
void sweep(const std::vector<GraphCase> &graphs, const std::vector<int64_t> &widths, bool bothIndexTypes) {
  // Each case is weighted or not, so it runs once per graph and width.
  int perWidth = 0;
  for (const test::SpmmLayerCase &c : test::spmmLayerCases(1))
    perWidth += test::tensorsPerRun(layers::buildLayer(c.layer, c.options)) * (bothIndexTypes ? 4 : 3);
  const int start = test::gpuChecks;
  for (const GraphCase &gc : graphs)
    for (bool weighted : {false, true}) {
      std::unique_ptr<graph::Graph> g32 = makeGraph(gc, weighted, graph::IndexChoice::Int32);
      std::unique_ptr<graph::Graph> g64 = makeGraph(gc, weighted, graph::IndexChoice::Int64);
      for (int64_t F : widths)
        for (const test::SpmmLayerCase &c : test::spmmLayerCases(F)) {
          if (c.options.weighted != weighted)
            continue;
          const Expected e = reference(c, *g32);
          int round = 0;
          for (Variant variant : {Variant::Generated, Variant::Cusparse})
            for (graph::Graph *g : {g32.get(), g64.get()}) {
              if (!bothIndexTypes && g == g64.get() && (round++ % 2 == 0))
                continue; // int64 on every other variant when the sweep is long
              runAndCheck(e, *g, variant, 0,
                          fmt::format("{} on {} F={} {} {}", c.label, gc.spec, F, variantName(variant),
                                      graph::indexTypeName(g->indexType())));
            }
        }
    }
  test::checkCount(start, perWidth * static_cast<int>(graphs.size() * widths.size()), "the SpMM sweep");
}

/// The tensors of one checked run of each case (those that are `weighted`
/// or not) at width `dim`.
int perRunOfCases(int64_t dim, bool weighted) {
  int n = 0;
  for (const test::SpmmLayerCase &c : test::spmmLayerCases(dim))
    if (c.options.weighted == weighted)
      n += test::tensorsPerRun(layers::buildLayer(c.layer, c.options));
  return n;
}

} // namespace

TEST_CASE("every SpMM layer on every shared dataset, both variants, int32 and int64") {
  std::vector<GraphCase> graphs;
  for (const char *name : {"cora", "citeseer", "pubmed", "squirrel", "tolokers", "email-Eu-core"}) {
    if (!test::sharedFile(name))
      return;
    graphs.push_back({name, {}});
  }
  graph::BuildOptions loops;
  loops.selfLoops = graph::SelfLoops::AddMissing;
  graphs.push_back({"cora", loops}); // as GCNConv sees it
  sweep(graphs, {3, 64}, false);
  sweep({{"cora", {}}}, {1, 32, 128, 130, 512}, true); // every width on one dataset
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("generated graphs: hubs (heavy-row segments), grid, random, clustered; every feature width") {
  const std::vector<GraphCase> graphs = {
      {"rmat:scale=11,ef=16,seed=1", {}}, // max in-degree ~ 1000: segments of 256
      {"grid:side=40", {}},
      {"er:n=3000,deg=12,seed=2", {}},
      {"sbm:n=2000,blocks=8,din=10,dout=2,seed=3", {}},
  };
  sweep({graphs[0]}, {1, 3, 32, 64, 128, 130, 512}, true);
  sweep({graphs[1], graphs[2], graphs[3]}, {1, 32, 130}, true);
  MESSAGE(test::gpuChecks << " tensors checked");
}

TEST_CASE("strided, unaligned input rows take the scalar-load kernel and agree") {
  const std::unique_ptr<graph::Graph> g =
      makeGraph({"rmat:scale=10,ef=8,seed=4", {}}, false, graph::IndexChoice::Int32);
  const std::vector<int64_t> paddings = {1, 3, 4};
  const int start = test::gpuChecks;
  for (int64_t padding : paddings)
    for (const test::SpmmLayerCase &c : test::spmmLayerCases(64)) {
      if (c.options.weighted)
        continue;
      const Expected e = reference(c, *g);
      runAndCheck(e, *g, Variant::Generated, padding, fmt::format("{} padding {}", c.label, padding));
    }
  test::checkCount(start, perRunOfCases(64, false) * static_cast<int>(paddings.size()), "strided rows");
}

TEST_CASE("the caller's buffers: results written by the generated kernel and by cuSPARSE") {
  const int start = test::gpuChecks;
  for (bool weighted : {false, true}) {
    const auto g = makeGraph({"rmat:scale=9,ef=8,seed=4", {}}, weighted, graph::IndexChoice::Int32);
    for (const test::SpmmLayerCase &c : test::spmmLayerCases(33)) {
      if (c.options.weighted != weighted)
        continue;
      const test::Expected e = test::reference(layers::buildLayer(c.layer, c.options), *g, randomInputs);
      for (Variant variant : {Variant::Generated, Variant::Cusparse}) {
        RuleOptions rule;
        rule.variant = variant;
        test::runWithCallerBuffers(e, *g, fmt::format("{} {}", c.label, variantName(variant)), randomInputs, rule,
                                   variant == Variant::Generated);
      }
    }
  }
  test::checkCount(start, 2 * (perRunOfCases(33, false) + perRunOfCases(33, true)), "the caller's buffers");
}

TEST_CASE("run to run: the generated kernels' gradients are bitwise identical; cuSPARSE's are reported") {
  const auto g = makeGraph({"rmat:scale=11,ef=16,seed=1", {}}, false, graph::IndexChoice::Int32);
  for (const test::SpmmLayerCase &c : test::spmmLayerCases(33)) {
    if (c.options.weighted)
      continue;
    const Expected e = reference(c, *g);
    for (Variant variant : {Variant::Generated, Variant::Cusparse}) {
      DeviceGraph dg(*g);
      autotune::RuleOptions rule;
      rule.variant = variant;
      LayerRunner runner(e.lowered, dg, autotune::rulePrograms(e.lowered, *g, rule));
      const UploadedTensors in(e.inputs), bin(e.backwardInputs);
      std::map<std::string, std::vector<double>> first;
      int differing = 0;
      for (int run = 0; run < 5; ++run) {
        runner.forward(in.tensors());
        for (const auto &[name, t] : runner.backward(bin.tensors())) {
          const std::vector<double> values = download(t).values;
          if (run == 0)
            first[name] = values;
          else
            differing += values != first[name];
        }
      }
      CHECK(first.size() >= e.gradients.size()); // every input's gradient compared
      if (variant == Variant::Generated)
        CHECK_MESSAGE(differing == 0, c.label << ": generated kernels' gradients changed between runs");
      else
        MESSAGE(c.label << " with cuSPARSE: " << differing << " of " << 4 * first.size()
                        << " later runs' gradients differ from the first's in some bit");
    }
  }
}

TEST_CASE("a graph without edges, and one node with every edge") {
  graph::EdgeList none;
  none.numNodes = 50;
  graph::EdgeList star;
  star.numNodes = 3000;
  for (int64_t j = 1; j < 3000; ++j)
    star.add(j, 0);
  const int start = test::gpuChecks;
  for (graph::EdgeList *edges : {&none, &star}) {
    graph::Graph g = graph::Graph::fromEdges(*edges);
    for (const test::SpmmLayerCase &c : test::spmmLayerCases(130))
      for (Variant variant : {Variant::Generated, Variant::Cusparse}) {
        if (c.options.weighted)
          continue;
        const Expected e = reference(c, g);
        runAndCheck(e, g, variant, 0, fmt::format("{} on {} edges {}", c.label, g.numEdges(), variantName(variant)));
      }
  }
  test::checkCount(start, 2 * 2 * perRunOfCases(130, false), "the edgeless graph and the star");
}

TEST_CASE("bindings that do not fit are refused before anything runs") {
  const std::unique_ptr<graph::Graph> g = makeGraph({"er:n=100,deg=4,seed=1", {}}, false, graph::IndexChoice::Int32);
  DeviceGraph dg(*g);
  const lower::LoweredLayer l = lower::lowerLayer(layers::buildLayer("gin", {}));
  LayerRunner runner(l, dg, autotune::rulePrograms(l, *g));
  ref::TensorMap inputs = randomInputs(l.layer.inputs(), *g, 1);
  {
    ref::TensorMap wrong = inputs;
    wrong["x"] = ref::Tensor(99, 16);
    CHECK_THROWS_WITH_AS(runner.forward(UploadedTensors(wrong).tensors()),
                         doctest::Contains("input 'x' is bound to 99 x 16 floats; expected 100 x 16"), UserError);
  }
  {
    ref::TensorMap missing = inputs;
    missing.erase("eps");
    CHECK_THROWS_WITH_AS(runner.forward(UploadedTensors(missing).tensors()),
                         doctest::Contains("no binding for input 'eps'"), UserError);
  }
  {
    ref::TensorMap extra = inputs;
    extra["y"] = ref::Tensor(100, 16);
    CHECK_THROWS_WITH_AS(runner.forward(UploadedTensors(extra).tensors()), doctest::Contains("'y' names no input"),
                         UserError);
  }
  CHECK_THROWS_WITH_AS(runner.backward(UploadedTensors(inputs).tensors()),
                       doctest::Contains("no binding for input 'd_out'"), UserError);
}
