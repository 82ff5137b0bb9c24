#include "autotune/GpuTimer.h"

#include "exec/RandomInputs.h"
#include "exec/TensorOps.h"
#include "ref/Bindings.h"
#include "runtime/CudaCheck.h"
#include "runtime/EventTiming.h"
#include "support/Stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gnnjit::autotune {

GpuPassTimer::GpuPassTimer(ProgramCache &programs, exec::DeviceGraph &graph, lower::Pass pass,
                           const lower::PassConfig &rule, const lower::PassConfig &forward, int warmup, int reps,
                           runtime::KernelCache *cache)
    : programs_(programs), graph_(graph), pass_(pass), warmup_(warmup), reps_(reps), rule_(rule), forward_(forward),
      cache_(cache) {
  const lower::LoweredLayer &lowered = programs.lowered();
  uint64_t seed = 1;
  auto bind = [&](const dsl::InputPtr &in, bool gradient) {
    const exec::DeviceTensor &t = tensors_.add(in->name, ref::bindingRows(*in, graph_.host()), in->shape.size());
    exec::fillRandom(t, seed++);
    backwardInputs_[in->name] = t;
    if (!gradient)
      forwardInputs_[in->name] = t;
  };
  for (const dsl::InputPtr &in : lowered.layer.inputs())
    bind(in, false);
  for (const dsl::InputPtr &in : lowered.backward.plan.outputGradients)
    bind(in, true);
  // The rule's runner stays the last one made: its timing reuses it, warm.
  exec::LayerRunner &runner = runnerFor(rule);
  (void)runOnce(runner, nullptr); // compiles and loads the rule's kernels
  const Stopwatch wall;
  const exec::DeviceTensors *results = &runOnce(runner, &rulePassMs_);
  ruleRunMs_ = wall.ms();
  if (rulePassMs_ > kLongPassMs) {
    warmup_ = std::min(warmup_, 1);
    reps_ = std::min(reps_, 3);
  }
  if (rulePassMs_ > kVeryLongPassMs) {
    warmup_ = 0;
    reps_ = 1;
  }
  if (rulePassMs_ < kShortSpanMs)
    runsPerEvent_ = static_cast<int>(std::ceil(kShortSpanMs / std::max(rulePassMs_, kShortSpanMs / 64)));
  for (const auto &[name, t] : *results) {
    // Kept on the device: candidates are compared there, in milliseconds
    // where a host copy of a large result took seconds per candidate.
    const exec::DeviceTensor &copy = expected_.add(name, t.rows, t.cols);
    GNNJIT_CUDA_CHECK(cudaMemcpy2D(copy.data, static_cast<size_t>(copy.ld) * sizeof(float), t.data,
                                   static_cast<size_t>(t.ld) * sizeof(float), static_cast<size_t>(t.cols) * sizeof(float),
                                   static_cast<size_t>(t.rows), cudaMemcpyDeviceToDevice));
  }
}

double GpuPassTimer::expectedTimingSeconds() const {
  // The check runs the pass once (the backward with a forward), the timing
  // a forward first for the backward, then its warm-ups and runs.
  if (rulePassMs_ > kVeryLongPassMs)
    return ruleRunMs_ / 1e3; // the check alone
  const double forwardMs = ruleRunMs_ - rulePassMs_; // before a backward; 0 (and a little) for a forward
  return (ruleRunMs_ + forwardMs + (warmup_ + reps_) * runsPerEvent_ * rulePassMs_) / 1e3;
}

const exec::DeviceTensors &GpuPassTimer::runOnce(exec::LayerRunner &runner, double *passMs) {
  if (pass_ == lower::Pass::Backward)
    runner.forward(forwardInputs_);
  const exec::DeviceTensors *results = nullptr;
  const double ms = runtime::medianMs(
      [&] {
        results = pass_ == lower::Pass::Forward ? &runner.forward(forwardInputs_) : &runner.backward(backwardInputs_);
      },
      0, 1);
  if (passMs)
    *passMs = ms;
  return *results;
}

exec::LayerRunner &GpuPassTimer::runnerFor(const lower::PassConfig &config) {
  if (!lastRunner_ || !(lastConfig_ == config)) {
    lastRunner_.reset(); // its buffers first
    exec::LayerPrograms programs;
    programs.forward = programs_.get(lower::Pass::Forward, pass_ == lower::Pass::Forward ? config : forward_);
    if (pass_ == lower::Pass::Backward)
      programs.backward = programs_.get(lower::Pass::Backward, config);
    exec::RunnerOptions options;
    options.cache = cache_;
    lastRunner_ = std::make_unique<exec::LayerRunner>(programs_.lowered(), graph_, std::move(programs), options);
    lastConfig_ = config;
    lastCheckMs_.reset(); // a new runner, not checked yet
  }
  return *lastRunner_;
}

double GpuPassTimer::time(const lower::PassConfig &config) {
  // A pass of tens of ms is timed by one run: the rule's at setup, a
  // candidate's its check (cold, its kernels' first launches: well under a
  // millisecond here, where a short pass's cold run is no measure).
  // A candidate whose check ran far over the rule's pass, more than loading
  // its kernels explains, has lost: that run is its time too.
  if (rulePassMs_ > kVeryLongPassMs && config == rule_)
    return rulePassMs_; // its run at setup
  const bool checked = lastRunner_ && lastConfig_ == config && lastCheckMs_;
  if (checked && (rulePassMs_ > kVeryLongPassMs || *lastCheckMs_ > kLoserFactor * rulePassMs_ + kColdMs))
    return *lastCheckMs_;
  exec::LayerRunner &runner = runnerFor(config);
  runner.prepare(pass_ == lower::Pass::Backward);
  if (pass_ == lower::Pass::Backward)
    runner.forward(forwardInputs_); // what the backward reads
  const auto run = [&] {
    for (int i = 0; i < runsPerEvent_; ++i)
      if (pass_ == lower::Pass::Forward)
        runner.forward(forwardInputs_);
      else
        runner.backward(backwardInputs_);
  };
  const double runs = runsPerEvent_;
  if (warmup_ == 0)
    return runtime::medianMs(run, 0, reps_) / runs;
  // The first warm-up is timed: a candidate over kLoserFactor times the
  // rule's pass there has lost, and that run is its time (a loser many
  // times slower than the rule spent most of a short pass's budget on its
  // warm-ups and runs).
  const double first = runtime::medianMs(run, 0, 1) / runs;
  if (first > kLoserFactor * rulePassMs_)
    return first;
  return runtime::medianMs(run, warmup_ - 1, reps_) / runs;
}

std::string GpuPassTimer::check(const lower::PassConfig &config) {
  double ms = 0;
  const exec::DeviceTensors &results = runOnce(runnerFor(config), &ms);
  lastCheckMs_ = ms;
  std::string worst;
  double worstError = 0;
  for (const auto &[name, expected] : expected_.views()) {
    const exec::Agreement a = exec::compare(expected, results.at(name));
    if (a.shapeMismatch)
      return fmt::format("'{}' has another shape", name);
    if (a.worst > 1e-4 && a.worst > worstError) {
      worstError = a.worst;
      worst = fmt::format("'{}' off by {:.3g} at ({}, {}): {} instead of {}", name, a.worst, a.row, a.col, a.actual,
                          a.expected);
    }
  }
  return worst;
}

} // namespace gnnjit::autotune
