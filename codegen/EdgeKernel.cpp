#include "codegen/EdgeKernel.h"

#include "codegen/Emit.h"
#include "codegen/EmitExpr.h"
#include "codegen/OpsStruct.h"
#include "codegen/Provenance.h"
#include "codegen/ReductionKernel.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace gnnjit::codegen {

using namespace gnnjit::dsl;
using llvm::cast;

namespace {

constexpr const char *kIndexPointer = "const index_t* __restrict__";

std::string withProvenanceOf(const lower::PassPlan &plan, const std::string &kernel, int block, const SourceWriter &out) {
  ProvenanceInfo info;
  info.layer = plan.layer;
  info.family = "edge";
  info.kernel = kernel;
  info.tuning = {{"block", std::to_string(block)},
                 {"index", std::string(indexTypeName(plan.index))}};
  info.degreeBucket = "all rows";
  return withProvenance(info, out.str());
}

} // namespace

GeneratedModule generateEdgeOutputsKernel(const lower::PassPlan &plan, const lower::EdgeOutputsStep &step) {
  const lower::KernelEntry &entry = step.kernels.at(0);
  const LeafPlaces places = edgeLoopPlaces(plan, lower::Direction::In);
  ParamList ops;
  SourceWriter members;
  {
    auto fn = members.scope("GNNJIT_DEVICE void compute(long long row, index_t col, long long p, int f) const");
    members.line("(void)row; (void)col;");
    const std::string ids = ops.use(ParamKind::EdgeIds, "", "edge_ids", kIndexPointer);
    for (const auto &[name, value] : step.outputs) {
      const Shape s = value->shape();
      auto inside = members.scope("if (f < {})", s.size());
      members.line("const int h = f / {0}, d = f % {0};", s.dim);
      members.line("(void)h; (void)d;");
      ExprEmitter emitter(members, kernelContext(ops, places));
      const std::string v = emitter.element(value, "h", "d");
      const std::string data = ops.use(ParamKind::OutputData, name, outputParamName(name), "float* __restrict__");
      const std::string ld = ops.use(ParamKind::OutputStride, name, outputStrideName(name), "long long");
      members.line("{}[(long long){}[p] * {} + f] = {};", data, ids, ld, v);
    }
  }
  ParamList params;
  const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
  const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", kIndexPointer);
  const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", kIndexPointer);
  params.append(ops);
  GeneratedKernel kernel{entry.entry, params.params(), entry.launch.block};

  SourceWriter out;
  writeModuleHead(out, "edge.cuh", plan.index);
  writeOpsStruct(out, plan.layer, "every per-edge target of this step, one element per call", ops, members);
  out.blank();
  {
    auto fn = out.scope("{}", kernelSignature(kernel.entry, kernel.blockThreads, params));
    out.line("gnnjit::device::edgeElements<{}>(Ops{{{}}}, {}, {}, {});", step.width, ops.names(), rows, offsets, cols);
  }
  GeneratedModule module;
  module.name = fmt::format("{}_{}", plan.layer, step.label);
  module.source = withProvenanceOf(plan, kernel.entry, kernel.blockThreads, out);
  module.kernels.push_back(std::move(kernel));
  checkEntries(module, step.kernels);
  return module;
}

GeneratedModule generateEdgeSumKernel(const lower::PassPlan &plan, const lower::EdgeSumStep &step) {
  const auto *agg = cast<Aggregate>(step.stage.aggregate.get());
  if (agg->over() != Over::AllEdges || agg->reduce() != Reduce::Sum)
    throwInternalError("edge sum kernel for aggregate[{}, {}]", reduceName(agg->reduce()), overName(agg->over()));
  const Shape s = step.stage.aggregate->shape();
  const std::string base = fmt::format("gnnjit_{}_{}", plan.layer, step.label);
  const int block = step.kernels.at(0).launch.block;
  ParamList ops;
  SourceWriter members;
  {
    auto fn = members.scope("GNNJIT_DEVICE float message(long long row, index_t col, long long p, int f) const");
    members.line("(void)row; (void)col; (void)p;");
    members.line("const int h = f / DIM, d = f % DIM;");
    members.line("(void)h; (void)d;");
    const LeafPlaces places = edgeLoopPlaces(plan, lower::Direction::In); // outlives the emitter
    ExprEmitter emitter(members, kernelContext(ops, places));
    members.line("return {};", emitter.element(agg->message(), "h", "d"));
  }
  SourceWriter out;
  writeModuleHead(out, "edge.cuh", plan.index);
  out.line("constexpr int F = {}, DIM = {}, BLOCK = {};", s.size(), s.dim, block);
  writeOpsStruct(out, plan.layer, "the per-edge value summed over all edges", ops, members);
  GeneratedModule module;
  module.name = fmt::format("{}_{}", plan.layer, step.label);
  {
    ParamList params;
    const std::string rows = params.use(ParamKind::NumRows, "", "num_rows", "long long");
    const std::string offsets = params.use(ParamKind::RowOffsets, "", "row_offsets", kIndexPointer);
    const std::string cols = params.use(ParamKind::ColIndices, "", "col_indices", kIndexPointer);
    const std::string partials = params.use(ParamKind::Partials, "", "partials", "float* __restrict__");
    params.append(ops);
    GeneratedKernel kernel{base + "_partial", params.params(), block};
    out.blank();
    auto fn = out.scope("{}", kernelSignature(kernel.entry, block, params));
    out.line("gnnjit::device::edgeSumPartial<F, BLOCK>(Ops{{{}}}, {}, {}, {}, {});", ops.names(), rows, offsets, cols,
             partials);
    fn.close();
    module.kernels.push_back(std::move(kernel));
  }
  module.kernels.push_back(writeSumFinishKernel(out, base, step.aggregate));
  module.source = withProvenanceOf(plan, base, block, out);
  checkEntries(module, step.kernels);
  return module;
}

} // namespace gnnjit::codegen
