// A layer written by a user (examples/GatedDifference.h), run end to end
// through the public C++ API that `gnnjit run` and `gnnjit export` use:
//
//   1. ref::forward / ref::backward: the CPU reference executor (fp64);
//   2. on a GPU, exec::LayerRunner: the layer lowered (lower::lowerLayer),
//      each pass planned by the tuner's rule (autotune::rulePrograms), its
//      kernels generated, compiled by NVRTC and run, and every output and
//      gradient compared with the reference (exit 3 when one is off by more
//      than 1e-4 relative); without a GPU the kernels are compiled for sm_90
//      only (exec::compileProgram), and it says so;
//   3. with --export DIR, autotune::exportKernels: each kernel as a .cu that nvcc
//      compiles on its own, its PTX, and plan.json.
//
//   build/examples/custom_layer [GRAPH] [--export DIR]   (default graph: cora if found, else a generated one)
#include "examples/GatedDifference.h"

#include "autotune/KernelExport.h"
#include "autotune/PlanLayer.h"
#include "dsl/Differentiate.h"
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "graph/GraphSource.h"
#include "lower/Pipeline.h"
#include "ref/Executor.h"
#include "runtime/Device.h"
#include "support/Error.h"
#include "support/ExitCode.h"
#include "support/Random.h"
#include "support/Stopwatch.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

using namespace gnnjit;

namespace {

constexpr double kTolerance = 1e-4;

ref::Tensor randomTensor(int64_t rows, int64_t cols, Rng &rng) {
  ref::Tensor t(rows, cols);
  for (double &v : t.values)
    v = 2 * rng.uniform() - 1;
  return t;
}

double sum(const ref::Tensor &t) {
  double s = 0;
  for (double v : t.values)
    s += v;
  return s;
}

graph::Dataset loadGraph(const std::string &spec) {
  if (!spec.empty())
    return graph::loadGraphSource(spec);
  try {
    return graph::loadGraphSource("cora");
  } catch (const UserError &e) {
    // Said aloud: a run on another graph must not pass for a run on cora.
    constexpr const char *kFallback = "sbm:n=5000,blocks=50,din=8,dout=2";
    const std::string why = e.what();
    fmt::print("cora was not found ({}); running on the generated graph {} instead (name a graph to choose)\n",
               why.substr(0, why.find('\n')), kFallback);
    return graph::loadGraphSource(kFallback);
  }
}

/// Prints how far each device result is from the reference; false when one
/// is off by more than kTolerance.
bool agrees(const ref::TensorMap &expected, const exec::DeviceTensors &actual, const char *kind) {
  bool ok = true;
  for (const auto &[name, t] : expected) {
    const exec::Agreement a = exec::compare(t, actual.at(name));
    fmt::print("check    {:<6} {:<5} worst scaled error {:.2e} vs the fp64 reference\n", kind, name, a.worst);
    ok = ok && a.worst <= kTolerance;
  }
  return ok;
}

/// Runs the layer on the GPU and compares every result with the reference.
bool runOnGpu(const lower::LoweredLayer &lowered, const graph::Graph &g, const ref::TensorMap &forwardInputs,
              const ref::TensorMap &backwardInputs, const ref::TensorMap &outputs, const ref::TensorMap &gradients) {
  exec::DeviceGraph deviceGraph(g);
  exec::LayerRunner runner(lowered, deviceGraph, autotune::rulePrograms(lowered, g));
  runner.prepare(/*backward=*/true);
  const exec::CompileReport &report = runner.compileReport();
  fmt::print("gpu      {} kernel modules ({} compiled by NVRTC, {} from the disk cache, {:.1f} ms)\n", report.modules,
             report.compiled, report.diskHits, report.seconds * 1e3);
  const exec::UploadedTensors in(forwardInputs), backwardIn(backwardInputs);
  const bool forwardOk = agrees(outputs, runner.forward(in.tensors()), "output");
  const bool backwardOk = agrees(gradients, runner.backward(backwardIn.tensors()), "grad");
  return forwardOk && backwardOk;
}

void compileOnly(const lower::LoweredLayer &lowered, const graph::Graph &g) {
  exec::CompileReport report;
  const exec::LayerPrograms programs = autotune::rulePrograms(lowered, g);
  for (const codegen::ProgramPtr &program : {programs.forward, programs.backward})
    exec::compileProgram(*program, {}, report);
  fmt::print("gpu      none here: {} kernel modules generated and compiled for {} by NVRTC, not run\n", report.modules,
             runtime::targetArch());
}

} // namespace

int main(int argc, char **argv) try {
  CLI::App app{"Runs a user-written layer (gated_difference) on the CPU reference and, when there is one, the GPU"};
  std::string spec, exportDir;
  app.add_option("graph", spec, "GRAPH (as `gnnjit info` takes; default cora, or a generated graph without it)");
  app.add_option("--export", exportDir, "Also write the layer's kernels (.cu, .ptx, plan.json) into this folder");
  CLI11_PARSE(app, argc, argv);

  const graph::Dataset data = loadGraph(spec);
  const graph::Graph g = graph::Graph::fromEdges(data.edges);
  const dsl::Layer layer = examples::gatedDifference(4, 8);
  fmt::print("{}\n", layer.print());
  fmt::print("graph    {}: {} nodes, {} edges\n", data.name, g.numNodes(), g.numEdges());

  // The reference: outputs, and gradients of sum(d_out * out) for every input.
  Rng rng(0);
  ref::TensorMap inputs;
  inputs["x"] = randomTensor(g.numNodes(), 32, rng);
  inputs["a"] = randomTensor(1, 32, rng);
  inputs["bias"] = randomTensor(1, 32, rng);
  ref::TensorMap backwardInputs = inputs;
  backwardInputs["d_out"] = randomTensor(g.numNodes(), 32, rng);
  const Stopwatch clock;
  const ref::TensorMap outputs = ref::forward(layer, g, inputs);
  const ref::TensorMap gradients = ref::backward(layer, dsl::differentiate(layer), g, backwardInputs);
  fmt::print("cpu      forward + backward on the reference executor: {:.1f} ms\n", clock.ms());
  fmt::print("output   out   sum {:.6f}\n", sum(outputs.at("out")));
  for (const auto &[name, t] : gradients)
    fmt::print("grad     {:<5} sum {:.6f}\n", name, sum(t));

  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  bool ok = true;
  if (runtime::hasCudaDevice())
    ok = runOnGpu(lowered, g, inputs, backwardInputs, outputs, gradients);
  else
    compileOnly(lowered, g);

  if (!exportDir.empty()) {
    const autotune::ExportSummary summary = autotune::exportKernels(layer, autotune::ExportSettings{}, exportDir);
    fmt::print("export   {} modules for {} in {} ({} files)\n", summary.modules, summary.arch, exportDir,
               summary.files.size());
  }
  return ok ? kExitOk : kExitInternalError;
} catch (...) {
  return reportCurrentException("custom_layer");
}

