// Test kernels around the element emitter: one thread per CSR position
// writes every element of some per-edge values. Shared by the NVRTC compile
// test (CI) and the GPU test that checks the values against the reference.
#pragma once

#include "codegen/EmitExpr.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace gnnjit::test {

using namespace gnnjit::dsl;

/// Values per edge are written in slots of this many floats.
inline constexpr int kEmitSlot = 64;

/// Inputs are float pointers named after the input, rows of heads * dim;
/// degrees and weights are float arrays; aggregates and softmax values read
/// a per-node / per-edge scratch array.
inline codegen::ExprEmitContext kernelContext() {
  codegen::ExprEmitContext ctx;
  ctx.readInput = [](const InputDecl &in, Level at, const codegen::ElementIndex &element) {
    const std::string row = at == Level::Src ? "j" : at == Level::Dst ? "i" : at == Level::Edge ? "eid" : "0";
    return fmt::format("{}[(long long){} * {} + ({})]", in.name, row, in.shape.size(), element.flat());
  };
  ctx.graphValue = [](const GraphValue &g, const std::string &) {
    const Level at = g.level();
    const std::string row = at == Level::Src ? "j" : at == Level::Dst ? "i" : "e";
    return fmt::format("{}[{}]", graphQuantityName(g.quantity()), row);
  };
  ctx.readComputed = [](const ExprNode &n, const std::string &offset) {
    return fmt::format("computed_{}[({})]", nodeKindName(n.kind()), offset);
  };
  return ctx;
}

/// A kernel writing every element of `values` for edge e (or node i).
inline std::string edgeKernel(const std::string &name, const std::vector<ExprPtr> &values,
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
      w.line("out[e * {} + {} + h * {} + d] = {};", values.size() * kEmitSlot, slot * kEmitSlot, v->shape().dim, x);
      ++slot;
    }
  }
  return w.str();
}

} // namespace gnnjit::test
