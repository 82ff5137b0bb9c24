// What the reduction and attention GPU tests share: a layer's fp64
// reference results on a graph, the comparison of GPU results with them
// (scaled error <= 1e-4), and a forward + backward run twice whose gradients
// must be bitwise identical. Each test supplies how its inputs are drawn.
#pragma once

#include "autotune/PlanLayer.h"
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "graph/GraphSource.h"
#include "lower/Pipeline.h"
#include "ref/Executor.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gnnjit::test {

inline constexpr double kGpuTolerance = 1e-4;

/// Tensors checked so far (each test program reports its count).
inline int gpuChecks = 0;

/// The tensors one checked forward and backward of `layer` compare with the
/// reference: each output, and the gradient of each input (ref::backward
/// gives one per input). runWithCallerBuffers compares as many.
inline int tensorsPerRun(const dsl::Layer &layer) {
  return static_cast<int>(layer.outputs().size() + layer.inputs().size());
}

/// Checks that a sweep compared as many tensors as it was given to: `start`
/// is gpuChecks before it ran, `expected` worked out from the layers and
/// graphs it was given, not from what ran (a case skipped by mistake, a
/// gradient missing, a sweep that ran nothing all fail here).
inline void checkCount(int start, int expected, const std::string &what) {
  const int checked = gpuChecks - start;
  CHECK_MESSAGE(expected > 0, what << ": a sweep that checks nothing");
  CHECK_MESSAGE(checked == expected, what << ": " << checked << " tensors checked, " << expected << " expected");
}

/// Checks that every label in `only` names one of `labels`: a misspelt one
/// would quietly leave its layer out.
inline void checkLabels(const std::vector<std::string> &only, const std::vector<std::string> &labels) {
  for (const std::string &label : only)
    CHECK_MESSAGE(std::find(labels.begin(), labels.end(), label) != labels.end(), "no test case is labelled " << label);
}

/// Host inputs for `decls` on `g`, from `seed`.
using InputDraw =
    std::function<ref::TensorMap(const std::vector<dsl::InputPtr> &decls, const graph::Graph &g, uint64_t seed)>;

struct Expected {
  lower::LoweredLayer lowered;
  ref::TensorMap inputs, backwardInputs, outputs, gradients;
  uint64_t dropoutSeed = 0; ///< what attention dropout draws from, in both passes
};

/// The reference forward and backward of `layer` on `g`: inputs drawn with
/// seed 17, output gradients with seed 29, attention dropout from `dropoutSeed`.
inline Expected reference(const dsl::Layer &layer, const graph::Graph &g, const InputDraw &draw,
                          uint64_t dropoutSeed = 0) {
  Expected e{lower::lowerLayer(layer), {}, {}, {}, {}, dropoutSeed};
  e.inputs = draw(e.lowered.layer.inputs(), g, 17);
  e.outputs = ref::forward(e.lowered.layer, g, e.inputs, dropoutSeed);
  e.backwardInputs = e.inputs;
  for (auto &[name, t] : draw(e.lowered.backward.plan.outputGradients, g, 29))
    e.backwardInputs[name] = std::move(t);
  e.gradients = ref::backward(e.lowered.layer, e.lowered.backward.plan, g, e.backwardInputs, dropoutSeed);
  return e;
}

inline void checkAgainst(const ref::TensorMap &expected, const exec::DeviceTensors &actual, const std::string &what) {
  for (const auto &[name, t] : expected) {
    const auto it = actual.find(name);
    REQUIRE_MESSAGE(it != actual.end(), what << ": no result " << name);
    const exec::Agreement a = exec::compare(t, it->second);
    ++gpuChecks;
    if (!(a.worst <= kGpuTolerance))
      FAIL_CHECK(what << ": " << name << " off by " << a.worst << " at [" << a.row << ", " << a.col << "]: expected "
                      << a.expected << ", got " << a.actual);
  }
}

/// Runs forward and backward twice; checks both against the reference and
/// that the second run's gradients equal the first's bit for bit.
inline void runAndCheck(const Expected &e, const graph::Graph &g, const std::string &what,
                        const autotune::RuleOptions &rule = {}) {
  exec::DeviceGraph dg(g);
  exec::LayerRunner runner(e.lowered, dg, autotune::rulePrograms(e.lowered, g, rule));
  runner.setRandomSeed(e.dropoutSeed);
  const exec::UploadedTensors in(e.inputs);
  checkAgainst(e.outputs, runner.forward(in.tensors()), what + " forward");
  const exec::UploadedTensors bin(e.backwardInputs);
  const exec::DeviceTensors &grads = runner.backward(bin.tensors());
  checkAgainst(e.gradients, grads, what + " backward");
  std::map<std::string, ref::Tensor> first;
  for (const auto &[name, t] : grads)
    first[name] = exec::download(t);
  runner.forward(in.tensors());
  for (const auto &[name, t] : runner.backward(bin.tensors()))
    if (exec::download(t).values != first.at(name).values)
      FAIL_CHECK(what << ": the gradient of " << name << " changed between two runs");
}

/// A call's results and saved values in memory the test owns, as a
/// framework's tensors would be.
struct CallerMemory {
  std::vector<runtime::DeviceBuffer<float>> results;
  std::vector<runtime::DeviceMemory> saved;
  exec::CallBuffers call;

  /// Buffers for every result of `targets` (rows x width each) and every
  /// saved value the runner lists, except those aliasing an output.
  CallerMemory(exec::LayerRunner &runner, const std::vector<lower::Target> &targets, const graph::Graph &g) {
    for (const lower::Target &t : targets) {
      const int64_t rows = t.rows(g.numNodes(), g.numEdgeIds());
      results.emplace_back(static_cast<size_t>(rows * t.width));
      call.results[t.name] = exec::DeviceTensor{results.back().data(), rows, t.width, t.width};
    }
    for (const exec::SavedValue &v : runner.savedValues())
      if (v.aliasOf.empty()) {
        saved.emplace_back(v.bytes());
        call.saved[v.name] = exec::DeviceBytes{saved.back().data(), v.bytes()};
      }
  }
};

/// Forward and backward with the caller's buffers: two forwards (the
/// reference's inputs, then others) before the backward of the first, which
/// must read the first's saved values; results must equal the reference and,
/// bit for bit, what the runner gives with its own buffers (with `bitwise`:
/// cuSPARSE's SpMM is not reproducible to the bit from run to run).
inline void runWithCallerBuffers(const Expected &e, const graph::Graph &g, const std::string &what,
                                 const InputDraw &draw, const autotune::RuleOptions &rule = {}, bool bitwise = true) {
  exec::DeviceGraph dg(g);
  exec::LayerRunner runner(e.lowered, dg, autotune::rulePrograms(e.lowered, g, rule));
  runner.setRandomSeed(e.dropoutSeed);
  const exec::UploadedTensors in(e.inputs), other(draw(e.lowered.layer.inputs(), g, 99));
  CallerMemory first(runner, runner.program(lower::Pass::Forward).plan.targets, g);
  CallerMemory second(runner, runner.program(lower::Pass::Forward).plan.targets, g);
  checkAgainst(e.outputs, runner.forward(in.tensors(), first.call), what + " forward into the caller's buffers");
  runner.forward(other.tensors(), second.call);
  CallerMemory grads(runner, runner.program(lower::Pass::Backward).plan.targets, g);
  grads.call.saved = first.call.saved;
  for (const exec::SavedValue &v : runner.savedValues())
    if (!v.aliasOf.empty()) {
      const exec::DeviceTensor &out = first.call.results.at(v.aliasOf);
      grads.call.saved[v.name] = exec::DeviceBytes{out.data, static_cast<size_t>(out.rows * out.cols) * sizeof(float)};
    }
  const exec::UploadedTensors bin(e.backwardInputs);
  checkAgainst(e.gradients, runner.backward(bin.tensors(), grads.call), what + " backward from the caller's buffers");
  if (!bitwise)
    return;
  runner.forward(in.tensors());
  for (const auto &[name, t] : runner.backward(bin.tensors()))
    if (exec::download(t).values != exec::download(grads.call.results.at(name)).values)
      FAIL_CHECK(what << ": the gradient of " << name << " differs between the caller's and the runner's buffers");
}

/// The graph of `spec` with `index`, named after the spec.
inline std::unique_ptr<graph::Graph> loadGraph(const std::string &spec,
                                               graph::IndexChoice index = graph::IndexChoice::Int32) {
  graph::BuildOptions options;
  options.index = index;
  auto g = std::make_unique<graph::Graph>(graph::Graph::fromEdges(graph::loadGraphSource(spec).edges, options));
  g->setName(spec);
  return g;
}

} // namespace gnnjit::test
