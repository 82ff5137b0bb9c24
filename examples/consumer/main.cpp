// A layer of the consumer's own, written against the installed gnnjit
// package: a gated mean, where each edge j -> i passes x_j scaled by how
// well it agrees with a learned direction,
//
//   out_i = mean over j of sigmoid(<x_j, w>) * x_j      (per head)
//
// It runs the layer forward and backward on the CPU reference (fp64), and
// on a GPU checks gnnjit's kernels against it (exit 3 when a result is off
// by more than 1e-4 relative); without a GPU it generates the kernels and
// compiles them for sm_90 with NVRTC, and says so.
//
//   consumer [GRAPH]      (default: a generated graph, rmat:scale=12,ef=8)
#include "autotune/PlanLayer.h"
#include "dsl/Differentiate.h"
#include "dsl/Layer.h"
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "graph/GraphSource.h"
#include "lower/Pipeline.h"
#include "ref/Executor.h"
#include "runtime/Device.h"
#include "support/ExitCode.h"
#include "support/Random.h"

#include <fmt/format.h>

using namespace gnnjit;

namespace {

dsl::Layer gatedMean(int64_t heads, int64_t dim) {
  dsl::LayerBuilder b("gated_mean");
  dsl::NodeInput x = b.nodeInput("x", {heads, dim});
  dsl::Expr w = b.param("w", {heads, dim});
  b.output("out", dsl::aggregate(dsl::Reduce::Mean, dsl::sigmoid(dsl::dot(x.src(), w)) * x.src()));
  return b.build();
}

ref::Tensor random(int64_t rows, int64_t cols, Rng &rng) {
  ref::Tensor t(rows, cols);
  for (double &v : t.values)
    v = 2 * rng.uniform() - 1;
  return t;
}

/// Prints each result's distance from the reference; false when one is too far.
bool agrees(const ref::TensorMap &expected, const exec::DeviceTensors &actual) {
  bool ok = true;
  for (const auto &[name, t] : expected) {
    const double worst = exec::compare(t, actual.at(name)).worst;
    fmt::print("check  {:<6} worst scaled error {:.2e}\n", name, worst);
    ok = ok && worst <= 1e-4;
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) try {
  const graph::Graph g =
      graph::Graph::fromEdges(graph::loadGraphSource(argc > 1 ? argv[1] : "rmat:scale=12,ef=8").edges);
  const dsl::Layer layer = gatedMean(2, 16);
  Rng rng(7);
  ref::TensorMap inputs{{"x", random(g.numNodes(), 32, rng)}, {"w", random(1, 32, rng)}};
  ref::TensorMap backwardInputs = inputs;
  backwardInputs["d_out"] = random(g.numNodes(), 32, rng);
  const ref::TensorMap outputs = ref::forward(layer, g, inputs);
  const ref::TensorMap gradients = ref::backward(layer, dsl::differentiate(layer), g, backwardInputs);
  fmt::print("layer  {} on {} nodes, {} edges: reference forward and backward done\n", layer.name(), g.numNodes(),
             g.numEdges());

  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  // Each pass planned once by the tuner's rule for this graph.
  const exec::LayerPrograms programs = autotune::rulePrograms(lowered, g);
  if (!runtime::hasCudaDevice()) {
    exec::CompileReport report;
    for (const codegen::ProgramPtr &program : {programs.forward, programs.backward})
      exec::compileProgram(*program, {}, report);
    fmt::print("gpu    none here: {} kernel modules generated and compiled for {} by NVRTC, not run\n", report.modules,
               runtime::targetArch());
    return kExitOk;
  }
  exec::DeviceGraph device(g);
  exec::LayerRunner runner(lowered, device, programs);
  const exec::UploadedTensors in(inputs), backwardIn(backwardInputs);
  const bool forwardOk = agrees(outputs, runner.forward(in.tensors()));
  const bool backwardOk = agrees(gradients, runner.backward(backwardIn.tensors()));
  return forwardOk && backwardOk ? kExitOk : kExitInternalError;
} catch (...) {
  return reportCurrentException("consumer");
}
