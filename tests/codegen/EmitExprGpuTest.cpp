// Emitted element code computes what the reference executor computes: for
// every library layer, the message (and SpMM weight/value, attention
// score/value) of each edge, checked at destinations with exactly one
// in-edge, where the reference's sum over in-edges is that edge's value.
#include "dsl/Layer.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "ref/Bindings.h"
#include "ref/Executor.h"
#include "runtime/Device.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/KernelCache.h"
#include "support/Random.h"

#include "EmitTestKernels.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace gnnjit;
using namespace gnnjit::dsl;

namespace {

/// Random sources; many destinations receive exactly one edge.
graph::Graph testGraph() {
  Rng rng(5);
  graph::EdgeList e;
  e.numNodes = 300;
  for (int k = 0; k < 500; ++k)
    e.add(static_cast<int64_t>(rng.below(300)), static_cast<int64_t>(rng.below(300)), 0.5f + float(rng.uniform()));
  return graph::Graph::fromEdges(e);
}

template <typename T> runtime::DeviceBuffer<T> upload(const std::vector<T> &host) {
  return runtime::DeviceBuffer<T>::fromHost(std::span<const T>(host));
}

} // namespace

TEST_CASE("emitted messages match the reference executor on the GPU") {
  const graph::Graph g = testGraph();
  const graph::Csr &in = g.incoming();
  const int64_t m = g.numEdges(), n = g.numNodes();
  std::vector<long long> src(m), dst(m), eid(m);
  std::vector<float> inDeg(n), outDeg(n), wInDeg(n), weight(m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = in.rowBegin(i); p < in.rowEnd(i); ++p) {
      src[p] = in.index(p), dst[p] = i, eid[p] = in.edgeId(p), weight[p] = in.weights()[p];
      inDeg[i] += 1, outDeg[in.index(p)] += 1, wInDeg[i] += in.weights()[p];
    }
  test::TempDir cacheDir;
  runtime::KernelCache cache(runtime::KernelCacheConfig{cacheDir.path(), "emit-gpu-test"});
  runtime::CompileOptions options;
  options.arch = runtime::targetArch();

  for (const layers::LayerInfo &info : layers::library()) {
    CAPTURE(info.name);
    layers::LayerOptions layerOptions;
    layerOptions.dim = 8;
    layerOptions.heads = layers::takes(info, layers::Knob::Heads) ? 2 : 1;
    layerOptions.weighted = info.name == "gcn" || info.name == "graphconv";
    const lower::LoweredLayer lowered = lower::lowerLayer(info.build(layerOptions));
    std::vector<ExprPtr> values;
    for (const lower::AggregationStage &s : lowered.forward)
      for (const ExprPtr &part : {s.family == lower::Family::Attention ? ExprPtr() : s.aggregate->operands()[0],
                                  s.weight, s.value, s.score})
        if (part)
          values.push_back(part);
    CHECK_FALSE(values.empty()); // every layer has messages to compare
    if (values.empty())
      continue;
    const std::string source = test::edgeKernel("messages", values, lowered.layer.inputs());
    const runtime::Kernel kernel = cache.kernel(runtime::Source{info.name + ".cu", source, {}}, options, "messages");

    // Same random inputs for both sides.
    const ref::TensorMap inputs = [&] {
      Rng rng(11);
      ref::TensorMap t;
      for (const InputPtr &decl : lowered.layer.inputs()) {
        ref::Tensor x(ref::bindingRows(*decl, g), decl->shape.size());
        for (double &v : x.values)
          v = 2 * rng.uniform() - 1;
        t[decl->name] = std::move(x);
      }
      return t;
    }();
    std::vector<runtime::DeviceBuffer<float>> inputBuffers;
    for (const InputPtr &decl : lowered.layer.inputs()) {
      const std::vector<double> &v = inputs.at(decl->name).values;
      inputBuffers.push_back(upload(std::vector<float>(v.begin(), v.end())));
    }
    auto dSrc = upload(src), dDst = upload(dst), dEid = upload(eid);
    auto dIn = upload(inDeg), dOut = upload(outDeg), dWeight = upload(weight), dWIn = upload(wInDeg);
    auto dZero = upload(std::vector<float>(1, 0.0f));
    auto dResult = upload(std::vector<float>(size_t(m) * values.size() * test::kEmitSlot, 0.0f));
    long long numEdges = m;
    std::vector<const void *> pointers;
    std::vector<void *> args;
    const auto addPointer = [&](const void *p) { pointers.push_back(p); };
    addPointer(dSrc.data()), addPointer(dDst.data()), addPointer(dEid.data());
    std::vector<const float *> inputPointers;
    for (const auto &b : inputBuffers)
      inputPointers.push_back(b.data());
    const float *graphPointers[] = {dIn.data(), dOut.data(), dWeight.data(), dWIn.data()};
    const float *computed = dZero.data();
    float *result = dResult.data();
    args.push_back(&pointers[0]), args.push_back(&pointers[1]), args.push_back(&pointers[2]);
    args.push_back(&numEdges);
    for (const float *&p : inputPointers)
      args.push_back(&p);
    for (const float *&p : graphPointers)
      args.push_back(&p);
    for (int k = 0; k < 3; ++k)
      args.push_back(&computed);
    args.push_back(&result);
    kernel.launch(dim3(unsigned((m + 127) / 128)), dim3(128), 0, nullptr, args.data());
    const std::vector<float> gpu = dResult.download();

    // The reference: out_i = sum over in-edges of the value; compare where that is one edge.
    for (size_t slot = 0; slot < values.size(); ++slot) {
      const ExprPtr agg = Aggregate::make(Reduce::Sum, values[slot]);
      const Layer probe = lowered.layer.withOutputs({{"v", agg}});
      const ref::Tensor expected = ref::forward(probe, g, inputs).at("v");
      double worst = 0;
      int64_t compared = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (in.degree(i) != 1)
          continue;
        ++compared;
        const int64_t p = in.rowBegin(i);
        for (int64_t k = 0; k < expected.cols; ++k) {
          const double want = expected.at(i, k);
          const double got = gpu[size_t(p) * values.size() * test::kEmitSlot + slot * test::kEmitSlot + k];
          worst = std::max(worst, std::abs(got - want) / std::max(1.0, std::abs(want)));
        }
      }
      CAPTURE(slot);
      CHECK(compared > 50);
      CHECK(worst < 1e-5);
    }
  }
}
