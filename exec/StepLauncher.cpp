#include "exec/StepLauncher.h"

#include "dsl/Expr.h"
#include "graph/DegreeStats.h"
#include "runtime/CudaCheck.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>

namespace gnnjit::exec {

using codegen::KernelParam;
using codegen::ParamKind;
using lower::Grid;
using lower::KernelRole;

namespace {

/// What a launch binds parameters to, beyond the graph and the bindings.
struct LaunchFrame {
  Direction direction = Direction::In;
  int64_t numRows = 0;
  const HeavySegments *segments = nullptr;
  float *partials = nullptr;
  int64_t numPartials = 0;
  float *edgeValues = nullptr;
  int64_t *partialArgs = nullptr; ///< or the packed slots of a packed merge
  int64_t *fixedPoint = nullptr;
  double *scale = nullptr;
  int64_t maxTerms = 0;
  float *sumPartials = nullptr; ///< an attention step's per-group sums over all edges
  int64_t numSumPartials = 0;
  int64_t sumPartialBase = 0;
  int64_t heavyThreshold = 0, segmentLength = 0; ///< a tiled step's: its kernels take them as parameters

  int64_t numEdges = 0;

  lower::GridCounts counts() const {
    return {numRows, segments ? segments->numSegments : 0, segments ? segments->numHeavyRows : 0, numEdges};
  }
};

/// Launches the kernels of one program: binds parameters, sizes grids.
class Launcher {
public:
  Launcher(const codegen::Program &program, const std::vector<std::vector<runtime::Kernel>> &kernels, DeviceGraph &graph,
           const DeviceTensors &inputs, ProgramBuffers &buffers, cudaStream_t stream, const std::string &layer)
      : program_(program), kernels_(kernels), graph_(graph), inputs_(inputs), buffers_(buffers), stream_(stream),
        layer_(layer) {}

  void run() {
    for (step_ = 0; step_ < program_.plan.steps.size(); ++step_)
      std::visit([this](const auto &s) { launchStep(s); }, program_.plan.steps[step_]);
  }

private:
  void launchStep(const lower::SpmmStep &s) {
    LaunchFrame frame;
    frame.direction = s.direction;
    frame.numRows = graph_.numNodes();
    if (s.cusparse()) {
      CusparseSpmm &spmm = graph_.cusparse(frame.direction, program_.valuesKeys[step_], [&](float *values) {
        frame.edgeValues = values;
        launch(KernelRole::Values, frame);
      });
      const DeviceTensor &x = inputs_.find(s.gathered)->second;
      float *y = resultOf(s.target, s.aggregate);
      const int64_t width = s.stage.aggregate->shape().size();
      spmm.multiply(x.data, x.ld, y, width, width, s.config.cusparseAlgorithm, stream_);
      return;
    }
    launchTiled(frame, s.config, s.merge);
  }
  /// A tiled CSR kernel: the light rows, then heavy rows' segments and
  /// their combine when some row is longer than the threshold.
  void launchTiled(LaunchFrame &frame, const lower::RowTiling &t, const lower::SegmentMerge &merge) {
    frame.heavyThreshold = t.heavyThreshold;
    frame.segmentLength = t.segmentLength;
    launch(KernelRole::Rows, frame);
    if (t.heavyThreshold == 0)
      return;
    const HeavySegments &segments = graph_.segments(frame.direction, t.heavyThreshold, t.segmentLength, stream_);
    if (segments.numSegments == 0)
      return;
    frame.segments = &segments;
    bindMerge(frame, merge);
    launch(KernelRole::Segments, frame);
    launch(KernelRole::Combine, frame);
  }
  /// The scratch the plan's merge of heavy-row segments names: partials
  /// per segment (and their arg positions), or packed slots per heavy row
  /// set to their empty state.
  void bindMerge(LaunchFrame &frame, const lower::SegmentMerge &merge) {
    const HeavySegments &segments = *frame.segments;
    if (merge.packed()) {
      const int64_t slots = segments.numHeavyRows * merge.perUnit;
      frame.partialArgs = atLeast(buffers_.partialArgs, slots);
      GNNJIT_CUDA_CHECK(
          cudaMemsetAsync(frame.partialArgs, merge.fill, static_cast<size_t>(slots) * sizeof(int64_t), stream_));
      return;
    }
    frame.partials = ensurePartials(segments.numSegments * merge.perUnit);
    if (merge.kind == lower::SegmentMerge::Kind::PartialsWithArgs)
      frame.partialArgs = atLeast(buffers_.partialArgs, segments.numSegments * merge.perUnit);
  }
  void launchStep(const lower::ReductionStep &s) {
    LaunchFrame frame;
    frame.direction = s.direction;
    frame.numRows = graph_.numNodes();
    launchTiled(frame, s.config, s.merge);
  }
  void launchStep(const lower::ArgScatterStep &s) {
    LaunchFrame frame;
    frame.numRows = graph_.numNodes();
    const int64_t width = s.stage.aggregate->shape().size(), count = frame.numRows * width;
    if (count == 0)
      return;
    float *out = resultOf(s.target, s.aggregate);
    GNNJIT_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(count) * sizeof(float), stream_)); // no flags yet
    frame.fixedPoint = atLeast(buffers_.fixedPoint, count);
    GNNJIT_CUDA_CHECK(cudaMemsetAsync(frame.fixedPoint, 0, static_cast<size_t>(count) * sizeof(int64_t), stream_));
    frame.numPartials = entry(KernelRole::Bound).launch.grid(frame.counts()).x;
    frame.partials = ensurePartials(s.boundFloatsPerBlock * frame.numPartials);
    frame.scale = atLeast(buffers_.fixedPointScale, 1);
    frame.maxTerms = graph_.stats().out.max;
    for (KernelRole role : {KernelRole::Bound, KernelRole::Scale, KernelRole::Scatter, KernelRole::Convert})
      launch(role, frame); // all on the device
  }
  void launchStep(const lower::AttentionStep &s) {
    LaunchFrame frame;
    frame.direction = s.direction;
    frame.numRows = graph_.numNodes();
    if (s.mode == lower::AttentionStep::Mode::HeadSums) {
      launch(KernelRole::Rows, frame);
      return;
    }
    if (s.mode == lower::AttentionStep::Mode::EdgeSum) {
      frame.numEdges = graph_.numEdges();
      frame.numPartials = lower::edgeRanges(frame.numEdges, s.config.rangeEdges);
      frame.partials = ensurePartials(frame.numPartials * s.lanes.size());
      launch(KernelRole::Ranges, frame);
      launch(KernelRole::Finish, frame);
      return;
    }
    if (s.edgeSumWidth() > 0) {
      launchWithEdgeSums(s, frame);
      return;
    }
    launchTiled(frame, s.config, s.merge);
  }
  /// A backward attention step that also sums over all edges: strided
  /// rows (and segments), each group's sums a partial, then a finish kernel
  /// per sum.
  void launchWithEdgeSums(const lower::AttentionStep &s, LaunchFrame &frame) {
    const lower::RowTiling &t = s.config;
    frame.heavyThreshold = t.heavyThreshold;
    frame.segmentLength = t.segmentLength;
    const HeavySegments *segments = nullptr;
    if (t.heavyThreshold > 0) {
      segments = &graph_.segments(frame.direction, t.heavyThreshold, t.segmentLength, stream_);
      if (segments->numSegments == 0)
        segments = nullptr;
    }
    frame.segments = segments;
    const int64_t rowGroups = entry(KernelRole::Rows).launch.groups(frame.counts());
    frame.numSumPartials = rowGroups + (segments ? entry(KernelRole::Segments).launch.groups(frame.counts()) : 0);
    frame.sumPartials = atLeast(buffers_.sumPartials, frame.numSumPartials * s.edgeSumWidth());
    launch(KernelRole::Rows, frame);
    if (segments) {
      bindMerge(frame, s.merge);
      frame.sumPartialBase = rowGroups;
      launch(KernelRole::Segments, frame);
      launch(KernelRole::Combine, frame);
    }
    for (size_t k = 0; k < s.kernels.size(); ++k)
      if (s.kernels[k].role == KernelRole::Finish)
        launch(k, frame);
  }
  void launchStep(const lower::EdgeSumStep &) { launchWholeSum(); }
  void launchStep(const lower::EdgeOutputsStep &) {
    LaunchFrame frame;
    frame.numRows = graph_.numNodes();
    launch(KernelRole::Outputs, frame);
  }
  void launchStep(const lower::NodeSumStep &) { launchWholeSum(); }
  /// A sum over all nodes or edges: per-block partials, then their sum.
  void launchWholeSum() {
    LaunchFrame frame;
    frame.numRows = graph_.numNodes();
    const lower::KernelEntry &partials = entry(KernelRole::Partials);
    frame.numPartials = partials.launch.grid(frame.counts()).x;
    frame.partials = ensurePartials(frame.numPartials * partials.launch.width);
    launch(KernelRole::Partials, frame);
    launch(KernelRole::Finish, frame);
  }
  void launchStep(const lower::NodeOutputsStep &s) {
    LaunchFrame frame;
    frame.numRows = s.global ? 1 : graph_.numNodes();
    launch(KernelRole::Outputs, frame);
  }
  void launchStep(const lower::ZeroStep &s) {
    const DeviceTensor &t = buffers_.targets.at(s.target);
    if (t.rows * t.cols > 0)
      GNNJIT_CUDA_CHECK(
          cudaMemsetAsync(t.data, 0, static_cast<size_t>(t.rows * t.cols) * sizeof(float), stream_));
  }

  /// The current step's kernels.
  const std::vector<lower::KernelEntry> &entries() const {
    return std::visit(
        [&](const auto &s) -> const std::vector<lower::KernelEntry> & {
          if constexpr (requires { s.kernels; })
            return s.kernels;
          else
            throwInternalError("a step without kernels launched one");
        },
        program_.plan.steps[step_]);
  }
  size_t indexOf(KernelRole role) const {
    const std::vector<lower::KernelEntry> &e = entries();
    for (size_t k = 0; k < e.size(); ++k)
      if (e[k].role == role)
        return k;
    throwInternalError("step {} of the {} pass has no {} kernel", step_, passName(program_.plan.pass),
                       lower::kernelRoleName(role));
  }
  const lower::KernelEntry &entry(KernelRole role) const { return entries()[indexOf(role)]; }

  int64_t savedWidth(std::string_view name) const {
    for (const lower::SavedBuffer &b : program_.plan.saved)
      if (b.name == name)
        return b.width;
    throwInternalError("pass {} reads saved buffer '{}', which it does not list", passName(program_.plan.pass), name);
  }

  /// `buffer` with room for at least `count` elements (grown, never shrunk).
  template <typename T> static T *atLeast(runtime::DeviceBuffer<T> &buffer, int64_t count) {
    if (static_cast<int64_t>(buffer.size()) < count)
      buffer = runtime::DeviceBuffer<T>(static_cast<size_t>(count));
    return buffer.data();
  }
  float *ensurePartials(int64_t floats) { return atLeast(buffers_.partials, floats); }

  /// Where a step writes: its target, or its scratch buffer.
  float *resultOf(const std::string &target, int aggregate) {
    return target.empty() ? buffers_.scratch[static_cast<size_t>(aggregate)].data()
                          : buffers_.targets.at(target).data;
  }

  uint64_t bind(const KernelParam &p, const LaunchFrame &frame) {
    auto ptr = [](const void *q) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(q)); };
    auto num = [](int64_t v) { return static_cast<uint64_t>(v); };
    switch (p.kind) {
    case ParamKind::RowOffsets:
      return ptr(graph_.csr(frame.direction).offsets);
    case ParamKind::ColIndices:
      return ptr(graph_.csr(frame.direction).indices);
    case ParamKind::CsrWeights:
      return ptr(graph_.csrWeights(frame.direction));
    case ParamKind::NumRows:
      return num(frame.numRows);
    case ParamKind::NodeQuantity:
      return ptr(graph_.nodeQuantity(p.ref, stream_));
    case ParamKind::InputData:
      return ptr(inputs_.find(p.ref)->second.data);
    case ParamKind::InputStride:
      return num(inputs_.find(p.ref)->second.ld);
    case ParamKind::AggregateData:
      return ptr(buffers_.scratch.at(static_cast<size_t>(p.scratch)).data());
    case ParamKind::AggregateStride:
      return num(program_.plan.scratch.at(static_cast<size_t>(p.scratch)).width);
    case ParamKind::OutputData:
      return ptr(buffers_.targets.at(p.ref).data);
    case ParamKind::OutputStride:
      return num(program_.plan.target(p.ref).width);
    case ParamKind::Partials:
      return ptr(frame.partials);
    case ParamKind::NumPartials:
      return num(frame.numPartials);
    case ParamKind::SegmentRows:
      return ptr(frame.segments->segmentRows.data());
    case ParamKind::SegmentBegins:
      return ptr(frame.segments->segmentBegins.data());
    case ParamKind::NumSegments:
      return num(frame.segments->numSegments);
    case ParamKind::HeavyRows:
      return ptr(frame.segments->heavyRows.data());
    case ParamKind::HeavyFirstSegment:
      return ptr(frame.segments->heavyFirstSegment.data());
    case ParamKind::NumHeavyRows:
      return num(frame.segments->numHeavyRows);
    case ParamKind::EdgeValues:
      return ptr(frame.edgeValues);
    case ParamKind::EdgeIds:
      return ptr(graph_.edgeIds(frame.direction));
    case ParamKind::PeerPositions:
      return ptr(graph_.peerPositions());
    case ParamKind::SavedData:
      return ptr(buffers_.saved->at(p.ref));
    case ParamKind::SavedStride:
      return num(savedWidth(p.ref));
    case ParamKind::PartialArgs:
      return ptr(frame.partialArgs);
    case ParamKind::FixedPointSums:
      return ptr(frame.fixedPoint);
    case ParamKind::SegmentHeavy:
      return ptr(frame.segments->segmentHeavy.data());
    case ParamKind::PackedResults:
      return ptr(frame.partialArgs);
    case ParamKind::FixedPointScale:
      return ptr(frame.scale);
    case ParamKind::FixedPointTerms:
      return num(frame.maxTerms);
    case ParamKind::SumPartials:
      return ptr(frame.sumPartials);
    case ParamKind::NumSumPartials:
      return num(frame.numSumPartials);
    case ParamKind::SumPartialBase:
      return num(frame.sumPartialBase);
    case ParamKind::HeavyThreshold:
      return num(frame.heavyThreshold);
    case ParamKind::SegmentLength:
      return num(frame.segmentLength);
    case ParamKind::RandomSeed:
      return buffers_.randomSeed;
    }
    throwInternalError("unbound kernel parameter {}", p.name);
  }

  void launch(KernelRole role, const LaunchFrame &frame) { launch(indexOf(role), frame); }
  /// Launches entry `k` of the current step's module by its launch rule.
  void launch(size_t k, const LaunchFrame &frame) {
    const int m = program_.code.moduleOfStep[step_];
    const codegen::GeneratedKernel &info = program_.code.modules[static_cast<size_t>(m)].kernels[k];
    const lower::LaunchRule &rule = entries().at(k).launch;
    const Grid grid = rule.grid(frame.counts());
    if (grid.x <= 0 || grid.y <= 0)
      return;
    if (grid.x > lower::kMaxGridX || grid.y > lower::kMaxGridY)
      throwUserError("layer {}: kernel {} needs a grid of {} x {} blocks, beyond CUDA's limits", layer_, info.entry,
                     grid.x, grid.y);
    std::vector<uint64_t> slots;
    slots.reserve(info.params.size());
    for (const KernelParam &p : info.params)
      slots.push_back(bind(p, frame));
    std::vector<void *> args;
    for (uint64_t &s : slots)
      args.push_back(&s);
    kernels_[static_cast<size_t>(m)][k].launch(dim3(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y)),
                                               dim3(static_cast<unsigned>(rule.block)), 0, stream_, args.data());
  }

  const codegen::Program &program_;
  const std::vector<std::vector<runtime::Kernel>> &kernels_;
  DeviceGraph &graph_;
  const DeviceTensors &inputs_;
  ProgramBuffers &buffers_;
  cudaStream_t stream_;
  const std::string &layer_;
  size_t step_ = 0;
};

} // namespace

double fixedPointScale(float largest, int64_t maxTerms) {
  // Any sum of at most maxTerms contributions of magnitude <= largest stays
  // below 2^61 after scaling: far from int64's 2^63, with ~2^61 / (largest x
  // maxTerms) integer steps of resolution (relative 2^-46 on a 40,000-edge hub).
  const double bound = static_cast<double>(largest) * static_cast<double>(std::max<int64_t>(1, maxTerms));
  if (!(bound > 0))
    return 1.0;
  return std::ldexp(1.0, 61 - std::ilogb(bound) - 1);
}

void launchProgram(const codegen::Program &program, const std::vector<std::vector<runtime::Kernel>> &kernels, DeviceGraph &graph,
                   const DeviceTensors &inputs, ProgramBuffers &buffers, cudaStream_t stream, const std::string &layer) {
  Launcher(program, kernels, graph, inputs, buffers, stream, layer).run();
}

std::vector<SegmentKey> segmentKeysOf(const lower::PassPlan &plan) {
  std::vector<SegmentKey> keys;
  const auto add = [&](Direction direction, const lower::RowTiling &t) {
    if (t.heavyThreshold > 0)
      keys.emplace_back(direction, t.heavyThreshold, t.segmentLength);
  };
  // The conditions under which the Launcher's steps call graph.segments.
  for (const lower::Step &step : plan.steps) {
    if (const auto *s = std::get_if<lower::SpmmStep>(&step); s && !s->cusparse())
      add(s->direction, s->config);
    else if (const auto *r = std::get_if<lower::ReductionStep>(&step))
      add(r->direction, r->config);
    else if (const auto *a = std::get_if<lower::AttentionStep>(&step);
             a && a->mode != lower::AttentionStep::Mode::HeadSums && a->mode != lower::AttentionStep::Mode::EdgeSum)
      add(a->direction, a->config);
  }
  return keys;
}

void checkLaunchable(const lower::PassPlan &plan, const graph::DegreeStats &stats) {
  if (plan.rowEdgeLimit > 0 && std::max(stats.in.max, stats.out.max) >= plan.rowEdgeLimit)
    throwUserError("layer {}: the {} pass merges heavy rows by packed atomics, which take rows of fewer than {} edges; "
                   "this graph has a row of {}: plan it without ReductionConfig::packedMerge",
                   plan.layer, plan.pass == Pass::Forward ? "forward" : "backward", plan.rowEdgeLimit,
                   std::max(stats.in.max, stats.out.max));
  // Segments: at most one per node plus one per edge, a bound.
  const lower::GridCounts counts{stats.nodes, stats.edges + stats.nodes, stats.nodes, stats.edges};
  for (const lower::Step &step : plan.steps)
    std::visit(
        [&](const auto &s) {
          if constexpr (requires { s.kernels; })
            for (const lower::KernelEntry &k : s.kernels) {
              lower::GridCounts c = counts;
              if (k.launch.kind == lower::LaunchRule::Kind::GlobalOutputs)
                c.rows = 1;
              const Grid g = k.launch.grid(c);
              if (g.x > lower::kMaxGridX || g.y > lower::kMaxGridY)
                throwUserError("layer {}: a kernel of the {} pass over rows of {} floats on a graph of {} nodes needs "
                               "a grid of {} x {} blocks, beyond CUDA's {} x {}; use a smaller width (heads x dim)",
                               plan.layer, plan.pass == Pass::Forward ? "forward" : "backward", k.launch.width,
                               stats.nodes, g.x, g.y, lower::kMaxGridX, lower::kMaxGridY);
            }
        },
        step);
}

} // namespace gnnjit::exec
