#include "cli/CudaRun.h"

#include "autotune/PlanLayer.h"
#include "runtime/Compile.h"
#include "runtime/CudaCheck.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/EventTiming.h"
#include "support/Error.h"
#include "support/Stopwatch.h"

namespace gnnjit::cli {

CudaRun::CudaRun(const lower::LoweredLayer &lowered, const graph::Graph &graph, const CudaRunOptions &options)
    : lowered_(lowered), options_(options), graph_(graph) {
  runtime::resetDeviceMemoryPeak();
  runner_ = std::make_unique<exec::LayerRunner>(lowered, graph_, options.programs);
  runner_->setRandomSeed(options.seed);
}

CudaRun::~CudaRun() = default;

void CudaRun::prepare(bool backward) {
  const Stopwatch clock;
  runner_->prepare(backward);
  stats_.compileMs = clock.ms();
  const exec::CompileReport &report = runner_->compileReport();
  stats_.modules = report.modules;
  stats_.compiled = report.compiled;
  stats_.cacheHits = report.modules - report.compiled;
  stats_.forwardPlan = runner_->program(exec::Pass::Forward).describe();
  if (backward)
    stats_.backwardPlan = runner_->program(exec::Pass::Backward).describe();
}

exec::DeviceTensors CudaRun::passInputs(bool backward) const {
  exec::DeviceTensors views;
  for (const dsl::InputPtr &in : lowered_.layer.inputs())
    views[in->name] = inputs_.views().at(in->name);
  if (backward)
    for (const dsl::InputPtr &g : lowered_.backward.plan.outputGradients)
      views[g->name] = inputs_.views().at(g->name);
  return views;
}

void CudaRun::run(bool backward) {
  stats_.inputBytes = inputs_.bytes();
  const exec::DeviceTensors forwardIn = passInputs(false);
  stats_.forwardMs = runtime::medianMs([&] { outputs_ = &runner_->forward(forwardIn); }, 1, options_.reps);
  if (backward) {
    // The forward's device inputs serve the backward too: nothing is uploaded again.
    const exec::DeviceTensors backwardIn = passInputs(true);
    stats_.backwardMs = runtime::medianMs([&] { gradients_ = &runner_->backward(backwardIn); }, 1, options_.reps);
  }
  GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
  stats_.graphBytes = graph_.deviceBytes();
  stats_.peakBytes = runtime::deviceMemoryUse().peak;
}

CompileOnlyResult compileOnly(const lower::LoweredLayer &lowered, const graph::Graph &graph, bool backward,
                              const autotune::RuleOptions &rule) {
  CompileOnlyResult r;
  const Stopwatch clock;
  try {
    const exec::LayerPrograms programs = autotune::rulePrograms(lowered, graph, rule, backward);
    exec::CompileReport report;
    exec::compileProgram(*programs.forward, {}, report);
    if (backward)
      exec::compileProgram(*programs.backward, {}, report);
    r.modules = report.modules;
    r.compiled = report.compiled;
  } catch (const runtime::CompileError &) {
    throw; // generated code NVRTC rejects is a bug worth reporting as it is
  } catch (const UserError &e) {
    r.refused = e.what();
  }
  r.ms = clock.ms();
  return r;
}

} // namespace gnnjit::cli
