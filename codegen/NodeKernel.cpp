#include "codegen/NodeKernel.h"

#include "codegen/Emit.h"
#include "codegen/KernelContext.h"
#include "codegen/OpsStruct.h"
#include "codegen/Provenance.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

using namespace gnnjit::dsl;
using llvm::cast;

namespace {

std::string withNodeProvenance(const std::string &layer, const std::string &entry, int blockThreads,
                               const SourceWriter &w) {
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
  const int block = step.kernels.at(0).launch.block;
  LeafPlaces places;
  if (!step.global)
    places.srcNode = places.dstNode = "row";
  places.inBuffers = plan.scratchOf;
  places.bufferRow = step.global ? "0" : "row";
  places.savedValues = plan.savedValueOf;

  ParamList ops;
  SourceWriter members;
  {
    auto fn = members.scope("GNNJIT_DEVICE void compute(long long row, int f) const");
    members.line("(void)row;");
    for (const lower::NodeOutputsStep::Output &o : step.outputs) {
      const Shape s = o.value->shape();
      auto inside = members.scope("if (f < {})", s.size());
      members.line("const int h = f / {0}, d = f % {0};", s.dim);
      members.line("(void)h; (void)d;");
      // A value written to a scratch buffer is computed, not read from it.
      LeafPlaces own = places;
      if (o.scratch >= 0)
        own.inBuffers.erase(o.value.get());
      ExprEmitContext context = kernelContext(ops, own);
      context.doubleSums = o.scratch >= 0; // attention's per-head sums, as its kernels add them
      ExprEmitter emitter(members, context);
      const std::string v = emitter.element(o.value, "h", "d");
      if (o.scratch >= 0) {
        const std::string data =
            ops.useScratch(ParamKind::AggregateData, o.scratch, aggregateParamName(o.scratch), "float* __restrict__");
        const std::string ld =
            ops.useScratch(ParamKind::AggregateStride, o.scratch, aggregateStrideName(o.scratch), "long long");
        members.line("{}[row * {} + f] = {};", data, ld, v);
        continue;
      }
      const std::string data = ops.use(ParamKind::OutputData, o.name, outputParamName(o.name), "float* __restrict__");
      const std::string ld = ops.use(ParamKind::OutputStride, o.name, outputStrideName(o.name), "long long");
      members.line("{}[row * {} + f] = {};", data, ld, v);
    }
  }
  ParamList params;
  const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
  params.append(ops);
  GeneratedKernel kernel{step.kernels.at(0).entry, params.params(), block};

  SourceWriter w;
  writeModuleHead(w, "node.cuh", std::nullopt);
  writeOpsStruct(w, plan.layer, "every output this step computes, one element per call", ops, members);
  w.blank();
  {
    auto fn = w.scope("{}", kernelSignature(kernel.entry, block, params));
    w.line("gnnjit::device::nodeElements<{}>(Ops{{{}}}, {});", step.width, ops.names(), rows);
  }
  GeneratedModule module;
  module.name = fmt::format("{}_{}", plan.layer, step.label);
  module.source = withNodeProvenance(plan.layer, kernel.entry, block, w);
  module.kernels.push_back(std::move(kernel));
  checkEntries(module, step.kernels);
  return module;
}

GeneratedModule generateNodeSumKernel(const lower::PassPlan &plan, const lower::NodeSumStep &step) {
  const auto *agg = cast<Aggregate>(step.stage.aggregate.get());
  if (agg->over() != Over::AllNodes || agg->reduce() != Reduce::Sum)
    throwInternalError("node sum kernel for aggregate[{}, {}]", reduceName(agg->reduce()), overName(agg->over()));
  const Shape s = step.stage.aggregate->shape();
  const int block = step.kernels.at(0).launch.block;
  const std::string base = fmt::format("gnnjit_{}_{}", plan.layer, step.label);

  LeafPlaces places;
  places.srcNode = places.dstNode = "row";
  places.inBuffers = plan.scratchOf;
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
  writeModuleHead(w, "node.cuh", std::nullopt);
  w.line("constexpr int F = {}, DIM = {}, BLOCK = {};", s.size(), s.dim, block);
  writeOpsStruct(w, plan.layer, "the per-node value summed over all nodes", ops, members);
  GeneratedModule module;
  module.name = fmt::format("{}_{}", plan.layer, step.label);
  {
    ParamList params;
    const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
    const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
    params.append(ops);
    GeneratedKernel kernel{base + "_partial", params.params(), block};
    w.blank();
    auto fn = w.scope("{}", kernelSignature(kernel.entry, block, params));
    w.line("gnnjit::device::nodeSumPartial<F, BLOCK>(Ops{{{}}}, {}, {});", ops.names(), rows, partials);
    fn.close();
    module.kernels.push_back(std::move(kernel));
  }
  module.kernels.push_back(writeSumFinishKernel(w, base, step.aggregate));
  module.source = withNodeProvenance(plan.layer, base, block, w);
  checkEntries(module, step.kernels);
  return module;
}

} // namespace gnnjit::codegen
