// The element emitter: exact text for small expressions, and NVRTC compiles
// the per-edge code emitted for every library layer's messages (sm_90, no GPU).
#include "codegen/EmitExpr.h"
#include "dsl/Layer.h"
#include "layers/Library.h"
#include "lower/Pipeline.h"
#include "runtime/Compile.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>

using namespace gnnjit;
using namespace gnnjit::dsl;

namespace {

/// Inputs are float pointers named after the input, rows of heads * dim;
/// degrees and weights are float arrays; aggregates and softmax values read
/// a per-node / per-edge scratch array.
codegen::ExprEmitContext kernelContext() {
  codegen::ExprEmitContext ctx;
  ctx.readInput = [](const InputDecl &in, Level at, const std::string &offset) {
    const std::string row = at == Level::Src ? "j" : at == Level::Dst ? "i" : at == Level::Edge ? "eid" : "0";
    return fmt::format("{}[(long long){} * {} + ({})]", in.name, row, in.shape.size(), offset);
  };
  ctx.graphValue = [](GraphQuantity q, Level at) {
    const std::string row = at == Level::Src ? "j" : at == Level::Dst ? "i" : "e";
    return fmt::format("{}[{}]", graphQuantityName(q), row);
  };
  ctx.readComputed = [](const ExprNode &n, const std::string &offset) {
    return fmt::format("computed_{}[({})]", nodeKindName(n.kind()), offset);
  };
  return ctx;
}

/// A kernel writing every element of `values` for edge e (or node i).
std::string edgeKernel(const std::string &name, const std::vector<ExprPtr> &values,
                       const std::vector<InputPtr> &inputs) {
  codegen::SourceWriter w;
  std::string params = "const long long* src, const long long* dst, const long long* edge_id, long long num_edges";
  for (const InputPtr &in : inputs)
    params += fmt::format(", const float* __restrict__ {}", in.get()->name);
  for (const char *q : {"in_degree", "out_degree", "edge_weight", "weighted_in_degree"})
    params += fmt::format(", const float* {}", q);
  for (const char *k : {"Aggregate", "EdgeSoftmax", "Saved"})
    params += fmt::format(", const float* computed_{}", k);
  params += ", float* out";
  {
    auto fn = w.scope("extern \"C\" __global__ void {}({})", name, params);
    w.line("const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;");
    w.line("if (e >= num_edges) return;");
    w.line("const long long j = src[e], i = dst[e], eid = edge_id[e];");
    w.line("(void)j; (void)i; (void)eid;");
    int slot = 0;
    for (const ExprPtr &v : values) {
      auto loopH = w.scope("for (int h = 0; h < {}; ++h)", v->shape().heads);
      auto loopD = w.scope("for (int d = 0; d < {}; ++d)", v->shape().dim);
      codegen::ExprEmitter emitter(w, kernelContext());
      const std::string x = emitter.element(v, "h", "d");
      w.line("out[e * {} + {} + h * {} + d] = {};", values.size() * 64, slot * 64, v->shape().dim, x);
      ++slot;
    }
  }
  return w.str();
}

} // namespace

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
    options.heads = info.hasHeads ? 4 : 1;
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
