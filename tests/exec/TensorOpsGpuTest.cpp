// On the GPU: random inputs made on the device equal the host's bit for bit,
// device checksums and comparisons agree with the host's, block transfers round-trip strided
// tensors, and the runner's memory estimate covers what a run allocates.
#include "autotune/PlanLayer.h"
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "exec/RandomInputs.h"
#include "exec/RunnerMemory.h"
#include "exec/TensorOps.h"
#include "graph/GraphSource.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "ref/Bindings.h"
#include "runtime/DeviceBuffer.h"

#include "SpmmTestLayers.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

using namespace gnnjit;
using namespace gnnjit::exec;
using autotune::RuleOptions;
using autotune::Variant;
using autotune::variantName;

TEST_CASE("random inputs on the device equal the host's, bit for bit") {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {7, 3}, {3001, 1500}, {100000, 33}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    OwnedTensors owned;
    const DeviceTensor &d = owned.add("x", rows, cols);
    fillRandom(d, 1234);
    const ref::Tensor device = download(d), host = randomHostTensor(rows, cols, 1234);
    int64_t mismatches = 0;
    for (size_t k = 0; k < host.values.size(); ++k)
      mismatches += device.values[k] != host.values[k];
    CHECK(mismatches == 0);
  }
}

TEST_CASE("device checksums agree with the host's and are the same on every run") {
  ref::Tensor t = randomHostTensor(5000, 37, 9);
  t.values[5] = NAN;
  t.values[77] = -INFINITY;
  for (int64_t padding : {0, 3}) {
    ref::TensorMap host{{"t", t}};
    const UploadedTensors up(host, padding);
    const Checksum d = checksum(up.tensors().at("t")), again = checksum(up.tensors().at("t"));
    const Checksum h = checksum(t);
    CHECK(d.nonFinite == 2);
    CHECK(d.sum == doctest::Approx(h.sum).epsilon(1e-12));
    CHECK(d.sumSq == doctest::Approx(h.sumSq).epsilon(1e-12));
    CHECK(d.maxAbs == h.maxAbs);
    CHECK(again.sum == d.sum); // bitwise: a fixed order
    CHECK(again.sumSq == d.sumSq);
  }
}

TEST_CASE("device comparisons score as the host's: the worst element, non-finite values, strides, shapes") {
  const ref::Tensor expected = randomHostTensor(300001, 7, 21);
  ref::Tensor actual = expected;
  for (int64_t padding : {0, 5}) {
    CAPTURE(padding);
    const UploadedTensors e(ref::TensorMap{{"t", expected}}, padding);
    const DeviceTensor &de = e.tensors().at("t");
    {
      const UploadedTensors same(ref::TensorMap{{"t", actual}}, 0);
      CHECK(compare(de, same.tensors().at("t")).worst == 0.0);
    }
    // Two elements off, the second by more: it is the one reported.
    ref::Tensor off = actual;
    off.values[3 * 7 + 2] += 1e-3f;
    off.values[250000 * 7 + 6] = static_cast<float>(off.values[250000 * 7 + 6] * 1.5 + 0.25);
    const UploadedTensors a(ref::TensorMap{{"t", off}}, 3);
    const Agreement host = compare(expected, a.tensors().at("t")), device = compare(de, a.tensors().at("t"));
    CHECK(device.worst == doctest::Approx(host.worst).epsilon(1e-12));
    CHECK(device.row == host.row);
    CHECK(device.col == host.col);
    CHECK(device.row == 250000);
    CHECK(device.expected == host.expected);
    CHECK(device.actual == host.actual);
    // A NaN where a number is expected is infinitely off; NaN against NaN agrees.
    ref::Tensor nan = actual;
    nan.values[11] = NAN;
    const UploadedTensors n(ref::TensorMap{{"t", nan}}, 0);
    const Agreement bad = compare(de, n.tensors().at("t"));
    CHECK(std::isinf(bad.worst));
    CHECK(bad.row == 1);
    CHECK(bad.col == 4);
    CHECK(compare(n.tensors().at("t"), n.tensors().at("t")).worst == 0.0);
  }
  const UploadedTensors other(ref::TensorMap{{"t", randomHostTensor(300001, 6, 1)}}, 0);
  const UploadedTensors e(ref::TensorMap{{"t", expected}}, 0);
  CHECK(compare(e.tensors().at("t"), other.tensors().at("t")).shapeMismatch);
}

TEST_CASE("row-block transfers round-trip strided tensors larger than one block") {
  // 64 MiB blocks: 300000 rows x 80 floats is 96 MB, so two blocks.
  const ref::Tensor t = randomHostTensor(300000, 80, 5);
  for (int64_t padding : {0, 1, 4}) {
    CAPTURE(padding);
    const UploadedTensors up(ref::TensorMap{{"t", t}}, padding);
    const DeviceTensor &d = up.tensors().at("t");
    CHECK(download(d).values == t.values);
    CHECK(compare(t, d).worst == 0.0);
    int64_t blocks = 0, rows = 0;
    forEachRowBlock(d, [&](int64_t first, int64_t n, const float *) {
      CHECK(first == rows);
      rows += n;
      ++blocks;
    });
    CHECK(rows == t.rows);
    CHECK(blocks == 2);
  }
}

TEST_CASE("the runner allocates no more than its memory estimate, and not much less") {
  const graph::Graph g = graph::Graph::fromEdges(graph::loadGraphSource("rmat:scale=12,ef=16").edges);
  for (const test::SpmmLayerCase &c : test::spmmLayerCases(64)) {
    for (Variant variant : {Variant::Generated, Variant::Cusparse}) {
      CAPTURE(c.label);
      CAPTURE(variantName(variant));
      const lower::LoweredLayer lowered = lower::lowerLayer(layers::buildLayer(c.layer, c.options));
      autotune::RuleOptions rule;
      rule.variant = variant;
      const LayerPrograms programs = autotune::rulePrograms(lowered, g, rule);
      const MemoryEstimate estimate = runnerMemory(programs, g, true);
      OwnedTensors inputs;
      for (const dsl::InputPtr &in : lowered.layer.inputs())
        fillRandom(inputs.add(in->name, ref::bindingRows(*in, g), in->shape.size()), 1);
      for (const dsl::InputPtr &d : lowered.backward.plan.outputGradients)
        fillRandom(inputs.add(d->name, g.numNodes(), d->shape.size()), 2);
      DeviceTensors forwardIn;
      for (const dsl::InputPtr &in : lowered.layer.inputs())
        forwardIn[in->name] = inputs.views().at(in->name);
      const size_t before = runtime::deviceMemoryUse().live;
      runtime::resetDeviceMemoryPeak();
      {
        DeviceGraph deviceGraph(g);
        LayerRunner runner(lowered, deviceGraph, programs);
        runner.forward(forwardIn);
        runner.backward(inputs.views());
        const size_t used = runtime::deviceMemoryUse().peak - before;
        MESSAGE(fmt::format("{} {}: runner peak {} bytes, estimate {}", c.label, variantName(variant), used,
                            estimate.total()));
        CHECK(used <= estimate.total());
        CHECK(static_cast<double>(used) >= 0.5 * static_cast<double>(estimate.total()));
      }
    }
  }
}
