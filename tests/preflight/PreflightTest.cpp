// The memory estimates that preflights check before allocating: the graph's
// build, the fp64 reference and the GPU runner, all without a GPU.
#include "autotune/PlanLayer.h"
#include "exec/RunnerMemory.h"
#include "graph/GraphMemory.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "ref/Executor.h"
#include "ref/MemoryEstimate.h"
#include "support/Error.h"

#include "UserErrorText.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

using namespace gnnjit;

namespace {

/// Sets GNNJIT_HOST_MEMORY for one scope.
struct HostMemoryCap {
  explicit HostMemoryCap(const char *size) { setenv("GNNJIT_HOST_MEMORY", size, 1); }
  ~HostMemoryCap() { unsetenv("GNNJIT_HOST_MEMORY"); }
};

graph::EdgeList ring(int64_t n) {
  graph::EdgeList e;
  e.numNodes = n;
  for (int64_t i = 0; i < n; ++i)
    e.add(i, (i + 1) % n);
  return e;
}

uint64_t itemBytes(const MemoryEstimate &m, std::string_view what) {
  for (const MemoryItem &item : m.items())
    if (item.what == what)
      return item.bytes;
  return 0;
}

} // namespace

TEST_CASE("building a graph too large for the memory is refused before sorting") {
  graph::EdgeList e;
  e.numNodes = 2'000'000'000;
  e.add(0, 1);
  const MemoryEstimate need = graph::buildMemory(e, {});
  CHECK(need.total() > uint64_t{40} << 30); // three per-node counters of 8 bytes
  HostMemoryCap cap("1G");
  const std::string error = test::userErrorText([&] { (void)graph::Graph::fromEdges(e); });
  CHECK(error.find("Building the CSR of a graph of 2000000000 nodes and 1 edges needs about") != std::string::npos);
  CHECK(error.find("(GNNJIT_HOST_MEMORY=1G)") != std::string::npos);
  CHECK(error.find("Is the node count the file declares right?") != std::string::npos);
}

TEST_CASE("the graph's lazy arrays check their own memory") {
  const graph::Graph g = graph::Graph::fromEdges(ring(100000));
  const MemoryEstimate t = graph::transposeMemory(g);
  CHECK(itemBytes(t, "transposed CSR row offsets") == 100001 * 4);
  CHECK(itemBytes(t, "transposed CSR indices and edge ids") == 100000 * 8);
  HostMemoryCap cap("64K");
  CHECK(test::userErrorText([&] { (void)g.outgoing(); }).find("Transposing the graph") != std::string::npos);
  CHECK(test::userErrorText([&] { (void)g.stats(); }).find("degree statistics") != std::string::npos);
}

TEST_CASE("the reference's estimate counts its values, outputs and gradients") {
  const graph::Graph g = graph::Graph::fromEdges(ring(1000));
  layers::LayerOptions o;
  o.dim = 64;
  const lower::LoweredLayer gcn = lower::lowerLayer(layers::gcn(o));
  const MemoryEstimate fwd = ref::forwardMemory(gcn.layer, g);
  CHECK(itemBytes(fwd, "output 'out' (fp64)") == 1000 * 64 * 8);
  CHECK(fwd.total() >= 2 * 1000 * 64 * 8); // the aggregate and the output copy
  const MemoryEstimate bwd = ref::backwardMemory(gcn.layer, gcn.backward.plan, g);
  CHECK(itemBytes(bwd, "gradient of 'x' (fp64)") == 1000 * 64 * 8);
  CHECK(itemBytes(bwd, "transposed CSR row offsets") > 0); // the backward aggregates over out-edges
  const MemoryEstimate inputs = ref::tensorMemory(gcn.layer.inputs(), g, "input");
  CHECK(inputs.total() == 1000 * 64 * 8);

  // SAGE max saves arg tables only where a backward reads them.
  o.aggregation = "max";
  const lower::LoweredLayer sage = lower::lowerLayer(layers::sage(o));
  CHECK(itemBytes(ref::forwardMemory(sage.layer, g), "max/min arg tables") == 0);
  CHECK(itemBytes(ref::backwardMemory(sage.layer, sage.backward.plan, g), "max/min arg tables") == 1000 * 64 * 8);

  // ref::forward runs its own preflight.
  HostMemoryCap cap("256K");
  ref::TensorMap in;
  in["x"] = ref::Tensor(1000, 64);
  CHECK(test::userErrorText([&] { (void)ref::forward(gcn.layer, g, in); }).find("The fp64 reference forward pass of 'gcn'") !=
        std::string::npos);
}

TEST_CASE("the runner's estimate: outputs, gradients, graph arrays and scratch of the planned passes") {
  const graph::Graph g = graph::Graph::fromEdges(ring(1000));
  layers::LayerOptions o;
  o.dim = 32;
  const lower::LoweredLayer gcn = lower::lowerLayer(layers::gcn(o));
  autotune::RuleOptions rule;
  rule.variant = autotune::Variant::Generated;
  const exec::LayerPrograms programs = autotune::rulePrograms(gcn, g, rule);
  const MemoryEstimate fwd = exec::runnerMemory(programs, g, false);
  CHECK(itemBytes(fwd, "output 'out'") == 1000 * 32 * 4);
  CHECK(itemBytes(fwd, "CSR on the device") == 1001 * 4 + 1000 * 4);
  CHECK(itemBytes(fwd, "transposed CSR on the device") == 0);
  CHECK(itemBytes(fwd, "node quantity in_degree") == 1000 * 4);
  const MemoryEstimate both = exec::runnerMemory(programs, g, true);
  CHECK(itemBytes(both, "gradient of 'x'") == 1000 * 32 * 4);
  CHECK(itemBytes(both, "transposed CSR on the device") == 1001 * 4 + 1000 * 4);
  CHECK(exec::deviceTensorMemory(gcn.layer.inputs(), g, "input").total() == 1000 * 32 * 4);

  rule.variant = autotune::Variant::Cusparse;
  CHECK(itemBytes(exec::runnerMemory(autotune::rulePrograms(gcn, g, rule), g, false),
                  "cuSPARSE matrix values and workspace") == 2 * 1000 * 4);

  // GIN's trained eps: a node sum's partials.
  const lower::LoweredLayer gin = lower::lowerLayer(layers::gin({}));
  CHECK(itemBytes(exec::runnerMemory(autotune::rulePrograms(gin, g), g, true), "partial sums (scratch)") > 0);
}

TEST_CASE("a width the kernels cannot launch is refused when planning, before allocating") {
  // A ring has local ids, but rows this wide get a warp (the rule widens
  // groups until a tile of 8 chunks covers the row, up to 32 lanes), so a
  // tile holds 32 lanes x 4 floats x 8 chunks, and 10^8 floats need 97657
  // tiles down.
  const graph::Graph g = graph::Graph::fromEdges(ring(1000));
  layers::LayerOptions o;
  o.dim = 100'000'000;
  const lower::LoweredLayer gcn = lower::lowerLayer(layers::gcn(o));
  autotune::RuleOptions generated;
  generated.variant = autotune::Variant::Generated;
  const std::string error =
      test::userErrorText([&] { (void)exec::runnerMemory(autotune::rulePrograms(gcn, g, generated), g, false); });
  CHECK(error.find("rows of 100000000 floats on a graph of 1000 nodes") != std::string::npos);
  CHECK(error.find("x 97657 blocks, beyond CUDA's 2147483647 x 65535") != std::string::npos);
  o.dim = 10'000'000;
  const lower::LoweredLayer narrower = lower::lowerLayer(layers::gcn(o));
  CHECK_NOTHROW((void)exec::runnerMemory(autotune::rulePrograms(narrower, g, generated), g, true));
}
