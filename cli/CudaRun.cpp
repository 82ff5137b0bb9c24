#include "cli/CudaRun.h"

#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "runtime/Compile.h"
#include "runtime/CudaCheck.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/EventTiming.h"
#include "support/Error.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace gnnjit::cli {

namespace {

using Clock = std::chrono::steady_clock;

size_t tensorBytes(const ref::TensorMap &m) {
  size_t bytes = 0;
  for (const auto &[name, t] : m)
    bytes += static_cast<size_t>(t.rows * t.cols) * sizeof(float);
  return bytes;
}

} // namespace

CudaRunResult runOnCuda(const lower::LoweredLayer &lowered, const graph::Graph &graph, const ref::TensorMap &inputs,
                        const ref::TensorMap *outputGradients, const CudaRunOptions &options) {
  CudaRunResult r;
  runtime::resetDeviceMemoryPeak();
  exec::DeviceGraph deviceGraph(graph);
  exec::RunnerOptions runnerOptions;
  runnerOptions.variant = options.variant;
  exec::LayerRunner runner(lowered, deviceGraph, runnerOptions);

  const auto start = Clock::now();
  runner.prepare(outputGradients != nullptr);
  r.compileMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const exec::CompileReport &report = runner.compileReport();
  r.modules = report.modules;
  r.compiled = report.compiled;
  r.cacheHits = report.modules - report.compiled;
  r.forwardPlan = runner.program(exec::Pass::Forward).describe();

  const exec::UploadedTensors in(inputs);
  r.inputBytes = tensorBytes(inputs);
  const exec::DeviceTensors *outputs = nullptr;
  r.forwardMs = runtime::medianMs([&] { outputs = &runner.forward(in.tensors()); }, 1, options.reps);
  for (const auto &[name, t] : *outputs)
    r.outputs[name] = exec::download(t);

  if (outputGradients) {
    r.backwardPlan = runner.program(exec::Pass::Backward).describe();
    ref::TensorMap backwardInputs = inputs;
    for (const auto &[name, t] : *outputGradients)
      backwardInputs[name] = t;
    const exec::UploadedTensors bin(backwardInputs);
    r.inputBytes += tensorBytes(*outputGradients);
    const exec::DeviceTensors *gradients = nullptr;
    r.backwardMs = runtime::medianMs([&] { gradients = &runner.backward(bin.tensors()); }, 1, options.reps);
    for (const auto &[name, t] : *gradients)
      r.gradients[name] = exec::download(t);
  }
  GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
  r.graphBytes = deviceGraph.deviceBytes();
  r.peakBytes = runtime::deviceMemoryUse().peak;
  return r;
}

CompileOnlyResult compileOnly(const lower::LoweredLayer &lowered, const graph::Graph &graph, bool backward,
                              exec::Variant variant) {
  CompileOnlyResult r;
  exec::RunnerOptions options;
  options.variant = variant;
  const auto start = Clock::now();
  try {
    exec::CompileReport report;
    exec::compileProgram(lowered, graph, exec::Pass::Forward, options, report);
    if (backward)
      exec::compileProgram(lowered, graph, exec::Pass::Backward, options, report);
    r.modules = report.modules;
    r.compiled = report.compiled;
  } catch (const runtime::CompileError &) {
    throw; // generated code NVRTC rejects is a bug worth reporting as it is
  } catch (const UserError &e) {
    r.refused = e.what();
  }
  r.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return r;
}

} // namespace gnnjit::cli
