#include "codegen/NodeKernel.h"

#include "codegen/Emit.h"
#include "codegen/KernelContext.h"
#include "codegen/OpsStruct.h"
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

void preamble(SourceWriter &w) {
  w.line("#include \"gnnjit/gnnjit_device.cuh\"");
  w.line("#include \"gnnjit/node.cuh\"");
  w.blank();
  w.line("namespace {{");
}

void opsStruct(SourceWriter &w, const std::string &layer, const std::string &what, const ParamList &ops,
               const SourceWriter &members) {
  writeOpsStruct(w, layer, what, ops, members);
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
  LeafPlaces places;
  if (!spec.global)
    places.srcNode = places.dstNode = "row";
  places.inBuffers = spec.aggregateBuffers;
  places.bufferRow = spec.global ? "0" : "row";

  ParamList ops;
  SourceWriter members;
  {
    auto fn = members.scope("GNNJIT_DEVICE void compute(long long row, int f) const");
    members.line("(void)row;");
    for (const lower::NodeOutputsStep::Output &o : spec.step.outputs) {
      const Shape s = o.value->shape();
      auto inside = members.scope("if (f < {})", s.size());
      members.line("const int h = f / {0}, d = f % {0};", s.dim);
      members.line("(void)h; (void)d;");
      ExprEmitter emitter(members, kernelContext(ops, places));
      const std::string v = emitter.element(o.value, "h", "d");
      const std::string data = ops.use(ParamKind::OutputData, o.name, outputParamName(o.name), "float* __restrict__");
      const std::string ld = ops.use(ParamKind::OutputStride, o.name, outputStrideName(o.name), "long long");
      members.line("{}[row * {} + f] = {};", data, ld, v);
    }
  }
  ParamList params;
  const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
  params.append(ops);
  GeneratedKernel kernel{step.kernels.at(0).entry, params.params(), spec.blockThreads};

  SourceWriter w;
  preamble(w);
  opsStruct(w, spec.layer, "every output this step computes, one element per call", ops, members);
  w.blank();
  {
    auto fn = w.scope("{}", kernelSignature(kernel.entry, spec.blockThreads, params));
    w.line("gnnjit::device::nodeElements<{}>(Ops{{{}}}, {});", step.width, ops.names(), rows);
  }
  GeneratedModule module;
  module.name = fmt::format("{}_{}", spec.layer, spec.label);
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
  const Shape s = spec.aggregate->shape();
  const std::string base = fmt::format("gnnjit_{}_{}", spec.layer, spec.label);
  if (step.kernels.size() != 2 || step.kernels[0].entry != base + "_partial")
    throwInternalError("node sum {}: the plan's entries are not this generator's", spec.label);

  LeafPlaces places;
  places.srcNode = places.dstNode = "row";
  places.inBuffers = spec.aggregateBuffers;
  places.bufferRow = "row";
  ParamList ops;
  SourceWriter members;
  {
    auto fn = members.scope("GNNJIT_DEVICE float message(long long row, int f) const");
    members.line("(void)row;");
    members.line("const int h = f / DIM, d = f % DIM;");
    members.line("(void)h; (void)d;");
    ExprEmitter emitter(members, kernelContext(ops, places));
    members.line("return {};", emitter.element(agg->message(), "h", "d"));
  }

  SourceWriter w;
  preamble(w);
  w.line("constexpr int F = {}, DIM = {}, BLOCK = {};", s.size(), s.dim, spec.blockThreads);
  opsStruct(w, spec.layer, "the per-node value summed over all nodes", ops, members);
  GeneratedModule module;
  module.name = fmt::format("{}_{}", spec.layer, spec.label);
  {
    ParamList params;
    const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
    const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
    params.append(ops);
    GeneratedKernel kernel{base + "_partial", params.params(), spec.blockThreads};
    w.blank();
    auto fn = w.scope("{}", kernelSignature(kernel.entry, spec.blockThreads, params));
    w.line("gnnjit::device::nodeSumPartial<F, BLOCK>(Ops{{{}}}, {}, {});", ops.names(), rows, partials);
    fn.close();
    module.kernels.push_back(std::move(kernel));
  }
  {
    ParamList params;
    const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
    const std::string count = params.use(ParamKind::NumPartials, "", "num_partials", "long long");
    const std::string out = params.use(ParamKind::AggregateData, std::to_string(spec.aggregateIndex),
                                       aggregateParamName(spec.aggregateIndex), "float* __restrict__");
    GeneratedKernel kernel{base + "_finish", params.params(), 32};
    w.blank();
    auto fn = w.scope("{}", kernelSignature(kernel.entry, 32, params));
    w.line("gnnjit::device::nodeSumFinish<F>({}, {}, {});", partials, count, out);
    fn.close();
    module.kernels.push_back(std::move(kernel));
  }
  module.source = finish(spec.layer, base, spec.blockThreads, std::move(w));
  checkEntries(module, step.kernels);
  return module;
}

} // namespace gnnjit::codegen
