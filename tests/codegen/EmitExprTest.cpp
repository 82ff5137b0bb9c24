// The element emitter: exact text for small expressions, and NVRTC compiles
// the per-edge code emitted for every library layer's messages (sm_90, no GPU).
#include "codegen/EmitExpr.h"
#include "dsl/Layer.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/Compile.h"

#include "EmitTestKernels.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>

using namespace gnnjit;
using namespace gnnjit::dsl;

using test::edgeKernel;
using test::kernelContext;

TEST_CASE("emitted element code for a small expression") {
  LayerBuilder b("tiny");
  auto x = b.nodeInput("x", {2, 3});
  auto att = b.param("att", {2, 3});
  auto score = sum(att * leakyRelu(x.src() + x.dst(), 0.2), Axis::Dim);
  b.output("out", aggregate(Reduce::Sum, score * x.src()));
  const Layer layer = b.build();
  const ExprPtr msg = layer.outputs()[0].value->operands()[0];
  codegen::SourceWriter w;
  codegen::ExprEmitter emitter(w, kernelContext());
  const std::string v = emitter.element(msg, "h", "d");
  const std::string text = w.str();
  CHECK(text.find("for (int d0 = 0; d0 < 3; ++d0)") != std::string::npos); // the per-head dot product
  CHECK(text.find("x[(long long)j * 6 + ((h) * 3 + (d0))]") != std::string::npos);
  CHECK(text.find("att[(long long)0 * 6 + ((h) * 3 + (d0))]") != std::string::npos);
  CHECK(text.find("float(0.20000000000000001)") != std::string::npos);
  CHECK(v.rfind("v", 0) == 0);
  // The same element again is the same variable, no new code.
  const std::string before = w.str();
  CHECK(emitter.element(msg, "h", "d") == v);
  CHECK(w.str() == before);
}

TEST_CASE("NVRTC compiles the emitted messages of every library layer") {
  for (const layers::LayerInfo &info : layers::library()) {
    CAPTURE(info.name);
    layers::LayerOptions options;
    options.heads = layers::takes(info, layers::Knob::Heads) ? 4 : 1;
    const lower::LoweredLayer lowered = lower::lowerLayer(info.build(options));
    std::vector<ExprPtr> values;
    for (const lower::AggregationStage &s : lowered.forward) {
      values.push_back(s.aggregate->operands()[0]); // the whole message
      for (const ExprPtr &part : {s.weight, s.value, s.score})
        if (part)
          values.push_back(part);
    }
    const std::string source = edgeKernel("messages_" + info.name, values, lowered.layer.inputs());
    const runtime::CompiledKernel k =
        runtime::compileToCubin(runtime::Source{info.name + ".cu", source, {}}, runtime::CompileOptions{});
    INFO("NVRTC log: " << k.log);
    CHECK(k.log.empty());
    CHECK(k.ptx.find(".entry messages_" + info.name) != std::string::npos);
  }
}
