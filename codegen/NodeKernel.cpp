#include "codegen/NodeKernel.h"

#include "codegen/Emit.h"
#include "codegen/KernelContext.h"
#include "codegen/Provenance.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace gnnjit::codegen {

using namespace gnnjit::dsl;
using llvm::cast;
using llvm::isa;

namespace {

/// What a node-kernel module is generated from.
struct NodeKernelSpec {
  std::string layer, label;
  const lower::NodeOutputsStep &step;
  /// Aggregates the outputs read, by scratch buffer.
  const std::map<const dsl::ExprNode *, int> &aggregateBuffers;
  bool global = false; ///< one row: outputs are Global values
  int blockThreads = 256;
};

struct NodeSumSpec {
  std::string layer, label;
  dsl::ExprPtr aggregate; ///< aggregate[sum, all_nodes] of a per-node message
  int aggregateIndex = 0; ///< where the [1, size] result goes
  const std::map<const dsl::ExprNode *, int> &aggregateBuffers;
  int blockThreads = 256;
};

std::string kernelSignature(const std::string &entry, int blockThreads, const ParamList &params) {
  return fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({})", blockThreads, entry,
                     params.signature());
}

std::string finish(const std::string &layer, const std::string &entry, int blockThreads, SourceWriter &&w) {
  ProvenanceInfo info;
  info.layer = layer;
  info.family = "node";
  info.kernel = entry;
  info.tuning = {{"block", std::to_string(blockThreads)}};
  info.degreeBucket = "all nodes";
  return withProvenance(info, w.str());
}

} // namespace

GeneratedModule generateNodeKernel(const lower::PassPlan &plan, const lower::NodeOutputsStep &step) {
  if (step.outputs.empty())
    throwInternalError("a node kernel with no outputs");
  const NodeKernelSpec spec{plan.layer, step.label, step, plan.scratchOf, step.global,
                            step.kernels.at(0).launch.block};
  const int64_t widest = step.width;
  GeneratedModule module;
  module.name = fmt::format("{}_{}", spec.layer, spec.label);
  GeneratedKernel kernel;
  kernel.entry = step.kernels.at(0).entry;
  kernel.blockThreads = spec.blockThreads;

  ParamList params;
  LeafPlaces places;
  if (!spec.global)
    places.srcNode = places.dstNode = "row";
  places.inBuffers = spec.aggregateBuffers;
  places.bufferRow = spec.global ? "0" : "row";
  SourceWriter body;
  const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
  body.line("const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;");
  body.line("const long long row = t / {};", widest);
  body.line("const int f = (int)(t % {});", widest);
  body.line("if (row >= {}) return;", rows);
  for (const lower::NodeOutputsStep::Output &o : spec.step.outputs) {
    const Shape s = o.value->shape();
    auto inside = body.scope("if (f < {})", s.size());
    body.line("const int h = f / {0}, d = f % {0};", s.dim);
    body.line("(void)h; (void)d;");
    ExprEmitter emitter(body, kernelContext(params, places));
    const std::string v = emitter.element(o.value, "h", "d");
    const std::string data = params.use(ParamKind::OutputData, o.name, outputParamName(o.name), "float* __restrict__");
    const std::string ld = params.use(ParamKind::OutputStride, o.name, outputStrideName(o.name), "long long");
    body.line("{}[row * {} + f] = {};", data, ld, v);
  }
  kernel.params = params.params();
  SourceWriter w;
  w.line("#include \"gnnjit/gnnjit_device.cuh\"");
  w.blank();
  {
    auto fn = w.scope("{}", kernelSignature(kernel.entry, spec.blockThreads, params));
    w.text(body.str());
  }
  module.source = finish(spec.layer, kernel.entry, spec.blockThreads, std::move(w));
  module.kernels.push_back(std::move(kernel));
  checkEntries(module, step.kernels);
  return module;
}

GeneratedModule generateNodeSumKernel(const lower::PassPlan &plan, const lower::NodeSumStep &step) {
  const NodeSumSpec spec{plan.layer, step.label, step.stage.aggregate, step.aggregate, plan.scratchOf,
                         step.kernels.at(0).launch.block};
  const auto *agg = cast<Aggregate>(spec.aggregate.get());
  if (agg->over() != Over::AllNodes || agg->reduce() != Reduce::Sum)
    throwInternalError("node sum kernel for aggregate[{}, {}]", reduceName(agg->reduce()), overName(agg->over()));
  const ExprPtr &message = agg->message();
  const Shape s = spec.aggregate->shape();
  const std::string base = fmt::format("gnnjit_{}_{}", spec.layer, spec.label);
  if (step.kernels.size() != 2 || step.kernels[0].entry != base + "_partial")
    throwInternalError("node sum {}: the plan's entries are not this generator's", spec.label);
  GeneratedModule module;
  module.name = fmt::format("{}_{}", spec.layer, spec.label);
  SourceWriter w;
  w.line("#include \"gnnjit/gnnjit_device.cuh\"");
  w.blank();
  w.line("namespace {{ constexpr int F = {}, DIM = {}, BLOCK = {}; }}", s.size(), s.dim, spec.blockThreads);
  {
    GeneratedKernel kernel{base + "_partial", {}, spec.blockThreads};
    ParamList params;
    LeafPlaces places;
    places.srcNode = places.dstNode = "row";
    places.inBuffers = spec.aggregateBuffers;
    places.bufferRow = "row";
    SourceWriter body;
    const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
    body.line("__shared__ float partial[BLOCK];");
    auto elements = body.scope("for (int f = 0; f < F; ++f)");
    body.line("const int h = f / DIM, d = f % DIM;");
    body.line("(void)h; (void)d;");
    body.line("float sum = 0.0f;");
    {
      auto loop = body.scope("for (long long row = blockIdx.x * (long long)BLOCK + threadIdx.x; row < {}; "
                             "row += (long long)gridDim.x * BLOCK)",
                             rows);
      ExprEmitter emitter(body, kernelContext(params, places));
      body.line("sum += {};", emitter.element(message, "h", "d"));
    }
    body.line("partial[threadIdx.x] = sum;");
    body.line("__syncthreads();");
    body.line("for (int half = BLOCK / 2; half > 0; half /= 2) {{");
    body.line("  if ((int)threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];");
    body.line("  __syncthreads();");
    body.line("}}");
    const std::string out = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
    body.line("if (threadIdx.x == 0) {}[blockIdx.x * (long long)F + f] = partial[0];", out);
    body.line("__syncthreads(); // partial[] is reused by the next element");
    elements.close();
    kernel.params = params.params();
    auto fn = w.scope("{}", kernelSignature(kernel.entry, spec.blockThreads, params));
    w.text(body.str());
    fn.close();
    module.kernels.push_back(std::move(kernel));
  }
  w.blank();
  {
    GeneratedKernel kernel{base + "_finish", {}, 32};
    ParamList params;
    const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
    const std::string count = params.use(ParamKind::NumPartials, "", "num_partials", "long long");
    const std::string out = params.use(ParamKind::AggregateData, std::to_string(spec.aggregateIndex),
                                       aggregateParamName(spec.aggregateIndex), "float* __restrict__");
    auto fn = w.scope("{}", kernelSignature(kernel.entry, 32, params));
    w.line("const int f = blockIdx.x * blockDim.x + threadIdx.x;");
    w.line("if (f >= F) return;");
    w.line("float sum = 0.0f;");
    w.line("for (long long b = 0; b < {}; ++b) sum += {}[b * F + f];", count, partials);
    w.line("{}[f] = sum;", out);
    fn.close();
    kernel.params = params.params();
    module.kernels.push_back(std::move(kernel));
  }
  module.source = finish(spec.layer, base, spec.blockThreads, std::move(w));
  checkEntries(module, step.kernels);
  return module;
}

} // namespace gnnjit::codegen
