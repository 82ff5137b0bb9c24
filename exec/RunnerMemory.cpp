#include "exec/RunnerMemory.h"

#include "exec/StepLauncher.h"
#include "ref/Bindings.h"
#include "support/CheckedMath.h"

#include <fmt/format.h>

#include <set>

namespace gnnjit::exec {

namespace {

uint64_t floats(int64_t rows, int64_t width, std::string_view what) {
  return checkedProduct({rows, width, static_cast<int64_t>(sizeof(float))}, what);
}

struct GraphArrays {
  std::set<Direction> csrs;
  std::set<std::string> quantities;
  uint64_t segments = 0; ///< heavy-row segments and heavy rows, bytes
  int cusparse = 0;      ///< matrices of edge values
  uint64_t partials = 0; ///< the largest partial-sum scratch, bytes
  std::set<codegen::ParamKind> positionArrays; ///< edge ids, peer positions: one index per edge each
  uint64_t fixedPoint = 0; ///< the largest arg scatter's integer sums, bytes
  uint64_t sumPartials = 0; ///< the largest attention step's per-group sums over all edges, bytes
};

/// Adds what `program` needs of the graph to `arrays` and its buffers to `m`.
void addProgram(const codegen::Program &program, const graph::Graph &graph, GraphArrays &arrays, MemoryEstimate &m) {
  const lower::PassPlan &plan = program.plan;
  const int64_t n = graph.numNodes(), e = graph.numEdges();
  const uint64_t indexBytes = graph.indexType() == graph::IndexType::Int32 ? 4 : 8;
  const std::string pass(passName(plan.pass));
  for (size_t k = 0; k < plan.scratch.size(); ++k)
    m.add(fmt::format("{} aggregate {} (scratch)", pass, k),
          floats(plan.scratch[k].global ? 1 : n, plan.scratch[k].width, "an aggregate buffer"));
  for (const lower::Target &t : plan.targets)
    m.add(fmt::format("{} '{}'", plan.pass == Pass::Forward ? "output" : "gradient of", t.name),
          floats(t.rows(n, graph.numEdgeIds()), t.width, fmt::format("the buffer of '{}'", t.name)));
  for (const lower::SavedBuffer &b : plan.saved)
    if (plan.pass == Pass::Forward && b.aliasOf.empty()) // allocated once, for both passes; an alias is an output
      m.add(fmt::format("saved '{}'", b.name),
            checkedProduct({b.perEdge ? e : n, b.width, static_cast<int64_t>(b.positions ? indexBytes : 4)},
                           "a saved value"));
  // Heavy rows: at most one segment per segmentLength edges of a heavy row,
  // plus one partial segment per heavy row; what each segment (or heavy
  // row) leaves for the combine is the plan's merge.
  auto addSegments = [&](const lower::RowTiling &t, const lower::SegmentMerge &merge) {
    if (t.heavyThreshold == 0)
      return;
    const int64_t heavy = e / (t.heavyThreshold + 1);
    const int64_t segments = e / t.segmentLength + heavy;
    arrays.segments = std::max(arrays.segments, static_cast<uint64_t>(segments + heavy) * (indexBytes + 16));
    const int64_t bytesPerUnit = merge.packed() ? sizeof(int64_t)
                                 : merge.kind == lower::SegmentMerge::Kind::PartialsWithArgs
                                     ? sizeof(float) + sizeof(int64_t)
                                     : sizeof(float);
    arrays.partials = std::max(arrays.partials, checkedProduct({merge.packed() ? heavy : segments, merge.perUnit,
                                                                bytesPerUnit},
                                                               "the segments' partial results"));
  };
  for (const lower::Step &step : plan.steps) {
    if (const auto *s = std::get_if<lower::SpmmStep>(&step)) {
      arrays.csrs.insert(s->direction);
      if (s->cusparse())
        ++arrays.cusparse;
      else
        addSegments(s->config, s->merge);
    }
    if (const auto *s = std::get_if<lower::ReductionStep>(&step)) {
      arrays.csrs.insert(s->direction);
      addSegments(s->config, s->merge);
    }
    if (const auto *s = std::get_if<lower::AttentionStep>(&step)) {
      arrays.csrs.insert(s->direction);
      if (s->mode == lower::AttentionStep::Mode::HeadSums)
        ; // writes scratch buffers the plan lists
      else if (s->mode == lower::AttentionStep::Mode::EdgeSum)
        arrays.partials = std::max(arrays.partials, floats(lower::edgeRanges(e, s->config.rangeEdges), s->lanes.size(),
                                                           "an edge sum's partials"));
      else
        addSegments(s->config, s->merge);
      // Sums over all edges: a partial per group of the strided kernels.
      if (const int64_t sumWidth = s->edgeSumWidth(); sumWidth > 0) {
        int64_t groups = 0;
        for (const lower::KernelEntry &k : s->kernels)
          if (k.launch.kind == lower::LaunchRule::Kind::StridedRows ||
              k.launch.kind == lower::LaunchRule::Kind::StridedSegments)
            groups += k.launch.groups({n, e, e, e}); // at most as many units as the capped counts
        arrays.sumPartials = std::max(arrays.sumPartials, floats(groups, sumWidth, "an attention step's edge sums"));
      }
    }
    if (const auto *s = std::get_if<lower::ArgScatterStep>(&step)) {
      arrays.csrs.insert(Direction::In);
      arrays.fixedPoint = std::max(arrays.fixedPoint, checkedProduct({n, s->stage.aggregate->shape().size(), 8},
                                                                     "an arg scatter's integer sums"));
      arrays.partials = std::max(arrays.partials, uint64_t{2 * lower::kMaxPartialBlocks * sizeof(float)}); // the bound's
    }
    if (std::holds_alternative<lower::EdgeOutputsStep>(step) || std::holds_alternative<lower::EdgeSumStep>(step))
      arrays.csrs.insert(Direction::In);
    if (const auto *s = std::get_if<lower::NodeSumStep>(&step))
      arrays.partials = std::max(arrays.partials, floats(lower::nodeSumPartials(n), s->stage.aggregate->shape().size(),
                                                         "a node sum's partials"));
    if (const auto *s = std::get_if<lower::EdgeSumStep>(&step))
      arrays.partials = std::max(arrays.partials, floats(lower::nodeSumPartials(n), s->stage.aggregate->shape().size(),
                                                         "an edge sum's partials"));
  }
  for (const codegen::GeneratedModule &module : program.code.modules)
    for (const codegen::GeneratedKernel &kernel : module.kernels)
      for (const codegen::KernelParam &p : kernel.params)
        if (p.kind == codegen::ParamKind::NodeQuantity)
          arrays.quantities.insert(p.ref);
        else if (p.kind == codegen::ParamKind::EdgeIds || p.kind == codegen::ParamKind::PeerPositions)
          arrays.positionArrays.insert(p.kind);
}

} // namespace

MemoryEstimate runnerMemory(const LayerPrograms &programs, const graph::Graph &graph, bool backward) {
  const int64_t n = graph.numNodes(), e = graph.numEdges();
  const uint64_t indexBytes = graph.indexType() == graph::IndexType::Int32 ? 4 : 8;
  MemoryEstimate m;
  GraphArrays arrays;
  for (const codegen::ProgramPtr &program : {programs.forward, backward ? programs.backward : nullptr}) {
    if (!program)
      continue;
    checkLaunchable(program->plan, graph.stats());
    addProgram(*program, graph, arrays, m);
  }
  for (Direction d : arrays.csrs) {
    const char *name = d == Direction::In ? "CSR" : "transposed CSR";
    m.add(fmt::format("{} on the device", name),
          checkedSum(checkedProduct({n + 1, static_cast<int64_t>(indexBytes)}, "the CSR"),
                     checkedProduct({e, static_cast<int64_t>(indexBytes + (graph.hasWeights() ? 4 : 0))}, "the CSR"),
                     "the CSR"));
  }
  for (codegen::ParamKind kind : arrays.positionArrays) // per direction read, at most both
    m.add(fmt::format("{} on the device", codegen::paramKindName(kind)),
          checkedProduct({e, static_cast<int64_t>(indexBytes), kind == codegen::ParamKind::EdgeIds ? 2 : 1},
                         "the graph's edge ids"));
  for (const std::string &q : arrays.quantities)
    m.add(fmt::format("node quantity {}", q), floats(n, 1, "a node quantity"));
  m.add("heavy-row segments", arrays.segments);
  m.add("partial sums (scratch)", arrays.partials);
  m.add("attention sums over all edges, per group (scratch)", arrays.sumPartials);
  m.add("arg scatter integer sums (scratch)", arrays.fixedPoint);
  // cuSPARSE: its matrix values, and a workspace assumed no larger than
  // another array of values (CSR ALG1-3 on the H200 asked for less).
  m.add("cuSPARSE matrix values and workspace", floats(e, 2 * arrays.cusparse, "cuSPARSE's arrays"));
  return m;
}

MemoryEstimate deviceTensorMemory(const std::vector<dsl::InputPtr> &inputs, const graph::Graph &graph,
                                  std::string_view role) {
  MemoryEstimate m;
  for (const dsl::InputPtr &in : inputs)
    m.add(fmt::format("{} '{}'", role, in->name),
          floats(ref::bindingRows(*in, graph), in->shape.size(), fmt::format("the {} '{}'", role, in->name)));
  return m;
}

} // namespace gnnjit::exec
