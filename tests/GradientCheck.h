// Random bindings, the loss sum over outputs of <d_out, out>, and the check
// of a layer's backward plan against central finite differences, both
// evaluated by the reference executor in double.
#pragma once

#include "dsl/Differentiate.h"
#include "graph/Graph.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
#include "support/Random.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace gnnjit::test {

inline ref::Tensor randomTensor(int64_t rows, int64_t cols, Rng &rng) {
  ref::Tensor t(rows, cols);
  for (double &v : t.values)
    v = 2.0 * rng.uniform() - 1.0;
  return t;
}

inline ref::TensorMap randomInputs(const dsl::Layer &layer, const graph::Graph &g, uint64_t seed) {
  Rng rng(seed);
  ref::TensorMap inputs;
  for (const dsl::InputPtr &in : layer.inputs())
    inputs[in->name] = randomTensor(ref::bindingRows(*in, g), in->shape.size(), rng);
  return inputs;
}

inline ref::TensorMap randomOutputGradients(const dsl::BackwardPlan &plan, const graph::Graph &g, uint64_t seed) {
  Rng rng(seed ^ 0x5eedull);
  ref::TensorMap d;
  for (const dsl::InputPtr &in : plan.outputGradients)
    d[in->name] = randomTensor(g.numNodes(), in->shape.size(), rng);
  return d;
}

/// Neumaier-compensated sum: the loss differences of finite differences are
/// tiny, so the summation must not add noise of its own.
class CompensatedSum {
public:
  void add(double v) {
    const double t = sum_ + v;
    comp_ += std::abs(sum_) >= std::abs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
  }
  double value() const { return sum_ + comp_; }

private:
  double sum_ = 0, comp_ = 0;
};

/// sum over outputs of <d_<output>, output>.
inline double loss(const dsl::Layer &layer, const graph::Graph &g, const ref::TensorMap &inputs,
                   const ref::TensorMap &dOut) {
  const ref::TensorMap out = ref::forward(layer, g, inputs);
  CompensatedSum s;
  for (const dsl::LayerOutput &o : layer.outputs()) {
    const ref::Tensor &y = out.at(o.name);
    const ref::Tensor &d = dOut.at("d_" + o.name);
    REQUIRE(y.values.size() == d.values.size());
    for (size_t k = 0; k < y.values.size(); ++k)
      s.add(d.values[k] * y.values[k]);
  }
  return s.value();
}

struct GradCheckResult {
  double worstRelativeError = 0;
  std::string worstInput;
  size_t coordinates = 0;
};

/// Differentiates `layer`, runs the backward plan, and compares every input
/// gradient with central differences (step 1e-6 * max(1, |x|)) on all
/// coordinates, or on `maxCoords` random ones per input when there are more.
/// Per input the error is ||fd - analytic||_2 / max(||analytic||_2,
/// 1e-3 * sqrt(n)) over the n checked coordinates (the floor keeps inputs
/// whose gradient is all zero from dividing noise by zero). CHECKs <= 1e-6.
inline GradCheckResult checkGradients(const std::string &label, const dsl::Layer &layer, const graph::Graph &g,
                                      const ref::TensorMap &inputs, uint64_t seed, size_t maxCoords = SIZE_MAX) {
  const dsl::BackwardPlan plan = dsl::differentiate(layer);
  const ref::TensorMap dOut = randomOutputGradients(plan, g, seed);
  ref::TensorMap backwardInputs = inputs;
  for (const auto &[name, t] : dOut)
    backwardInputs[name] = t;
  const ref::TensorMap grads = ref::backward(layer, plan, g, backwardInputs);

  GradCheckResult result;
  Rng pick(seed * 7919 + 17);
  for (const dsl::InputPtr &in : layer.inputs()) {
    INFO(label << ", input " << in->name);
    const ref::Tensor &x = inputs.at(in->name);
    REQUIRE(grads.count(in->name) == 1);
    const ref::Tensor &an = grads.at(in->name);
    REQUIRE(an.rows == x.rows);
    REQUIRE(an.cols == x.cols);
    std::vector<size_t> coords(x.values.size());
    std::iota(coords.begin(), coords.end(), size_t{0});
    if (coords.size() > maxCoords) {
      for (size_t k = 0; k < maxCoords; ++k) // partial Fisher-Yates
        std::swap(coords[k], coords[k + pick.below(coords.size() - k)]);
      coords.resize(maxCoords);
    }
    double diff2 = 0, an2 = 0;
    ref::TensorMap perturbed = inputs;
    std::vector<double> &values = perturbed.at(in->name).values;
    for (size_t c : coords) {
      const double x0 = values[c];
      const double h = 1e-6 * std::max(1.0, std::abs(x0));
      values[c] = x0 + h;
      const double up = loss(layer, g, perturbed, dOut);
      values[c] = x0 - h;
      const double down = loss(layer, g, perturbed, dOut);
      values[c] = x0;
      const double fd = (up - down) / (2 * h);
      diff2 += (fd - an.values[c]) * (fd - an.values[c]);
      an2 += an.values[c] * an.values[c];
    }
    const double denom = std::max(std::sqrt(an2), 1e-3 * std::sqrt(static_cast<double>(coords.size())));
    const double rel = std::sqrt(diff2) / denom;
    CHECK_MESSAGE(rel <= 1e-6, label << ": gradient of '" << in->name << "' is off by " << rel << " (relative, "
                                     << coords.size() << " coordinates, |grad| = " << std::sqrt(an2) << ")");
    result.coordinates += coords.size();
    if (rel >= result.worstRelativeError) {
      result.worstRelativeError = rel;
      result.worstInput = in->name;
    }
  }
  return result;
}

/// checkGradients on random inputs drawn with `seed`.
inline GradCheckResult checkGradients(const dsl::Layer &layer, const graph::Graph &g, uint64_t seed = 1) {
  return checkGradients(layer.name(), layer, g, randomInputs(layer, g, seed), seed);
}

} // namespace gnnjit::test
