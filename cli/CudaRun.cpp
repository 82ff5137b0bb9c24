#include "cli/CudaRun.h"

#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "runtime/Compile.h"
#include "runtime/CudaCheck.h"
#include "runtime/DeviceBuffer.h"
#include "support/Error.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace gnnjit::cli {

namespace {

using Clock = std::chrono::steady_clock;

/// Median of `reps` runs of `fn` after one warm-up, by CUDA events.
double medianMs(const std::function<void()> &fn, int reps) {
  fn();
  GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start = nullptr, stop = nullptr;
  GNNJIT_CUDA_CHECK(cudaEventCreate(&start));
  GNNJIT_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  try {
    for (int i = 0; i < reps; ++i) {
      GNNJIT_CUDA_CHECK(cudaEventRecord(start));
      fn();
      GNNJIT_CUDA_CHECK(cudaEventRecord(stop));
      GNNJIT_CUDA_CHECK(cudaEventSynchronize(stop));
      float t = 0;
      GNNJIT_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

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
  r.forwardMs = medianMs([&] { runner.forward(in.tensors()); }, std::max(1, options.reps));
  for (const auto &[name, t] : runner.forward(in.tensors()))
    r.outputs[name] = exec::download(t);

  if (outputGradients) {
    r.backwardPlan = runner.program(exec::Pass::Backward).describe();
    ref::TensorMap backwardInputs = inputs;
    for (const auto &[name, t] : *outputGradients)
      backwardInputs[name] = t;
    const exec::UploadedTensors bin(backwardInputs);
    r.inputBytes += tensorBytes(*outputGradients);
    r.backwardMs = medianMs([&] { runner.backward(bin.tensors()); }, std::max(1, options.reps));
    for (const auto &[name, t] : runner.backward(bin.tensors()))
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
