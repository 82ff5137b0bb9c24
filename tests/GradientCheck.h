// Checks a layer's backward plan against central finite differences of its
// forward pass, both evaluated by the reference executor in double.
#pragma once

#include "dsl/Differentiate.h"
#include "graph/Graph.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
#include "support/Random.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace gnnjit::test {

/// Random inputs in [-1, 1] for every input of `layer` on `graph`.
inline ref::TensorMap randomInputs(const dsl::Layer &layer, const graph::Graph &graph, uint64_t seed) {
  Rng rng(seed);
  ref::TensorMap inputs;
  for (const dsl::InputPtr &in : layer.inputs()) {
    ref::Tensor t(ref::bindingRows(*in, graph), in->shape.size());
    for (double &v : t.values)
      v = 2.0 * rng.uniform() - 1.0;
    inputs[in->name] = std::move(t);
  }
  return inputs;
}

/// sum over outputs of <d_out, out>: the loss whose gradient backward() gives.
inline double lossOf(const dsl::Layer &layer, const graph::Graph &graph, const ref::TensorMap &inputs,
                     const ref::TensorMap &outputGradients) {
  const ref::TensorMap out = ref::forward(layer, graph, inputs);
  double loss = 0;
  for (const dsl::LayerOutput &o : layer.outputs()) {
    const ref::Tensor &value = out.at(o.name);
    const ref::Tensor &grad = outputGradients.at("d_" + o.name);
    for (size_t k = 0; k < value.values.size(); ++k)
      loss += value.values[k] * grad.values[k];
  }
  return loss;
}

struct GradientCheckOptions {
  uint64_t seed = 1;
  /// Check at most this many coordinates per input (spread evenly); 0 = all.
  size_t maxCoordinates = 0;
  double step = 1e-6;
  double tolerance = 1e-6; ///< on max |analytic - numeric| / max |numeric|
};

/// Compares analytic gradients with central differences for every input;
/// reports through doctest CHECKs naming the input.
inline void checkGradients(const dsl::Layer &layer, const graph::Graph &graph, GradientCheckOptions options = {}) {
  const dsl::BackwardPlan plan = dsl::differentiate(layer);
  ref::TensorMap inputs = randomInputs(layer, graph, options.seed);
  ref::TensorMap outputGradients;
  {
    Rng rng(options.seed * 7919 + 1);
    const ref::TensorMap out = ref::forward(layer, graph, inputs);
    for (const dsl::LayerOutput &o : layer.outputs()) {
      ref::Tensor g = out.at(o.name);
      for (double &v : g.values)
        v = 2.0 * rng.uniform() - 1.0;
      outputGradients["d_" + o.name] = std::move(g);
    }
  }
  ref::TensorMap all = inputs;
  all.insert(outputGradients.begin(), outputGradients.end());
  const ref::TensorMap analytic = ref::backward(layer, plan, graph, all);

  for (const dsl::InputPtr &in : layer.inputs()) {
    ref::Tensor &x = inputs.at(in->name);
    const ref::Tensor &a = analytic.at(in->name);
    REQUIRE(a.values.size() == x.values.size());
    const size_t n = x.values.size();
    const size_t stride = options.maxCoordinates && n > options.maxCoordinates ? n / options.maxCoordinates : 1;
    double maxDiff = 0, maxNumeric = 0;
    size_t worst = 0;
    for (size_t k = 0; k < n; k += stride) {
      const double saved = x.values[k];
      const double h = options.step * std::max(1.0, std::abs(saved));
      x.values[k] = saved + h;
      const double up = lossOf(layer, graph, inputs, outputGradients);
      x.values[k] = saved - h;
      const double down = lossOf(layer, graph, inputs, outputGradients);
      x.values[k] = saved;
      const double numeric = (up - down) / (2 * h);
      maxNumeric = std::max(maxNumeric, std::abs(numeric));
      const double diff = std::abs(numeric - a.values[k]);
      if (diff > maxDiff) {
        maxDiff = diff;
        worst = k;
      }
    }
    const double relative = maxDiff / std::max(maxNumeric, 1e-12);
    INFO("layer " << layer.name() << ", input " << in->name << ": max |analytic - numeric| = " << maxDiff
                  << " at coordinate " << worst << ", max |numeric| = " << maxNumeric);
    CHECK(relative <= options.tolerance);
  }
}

} // namespace gnnjit::test
