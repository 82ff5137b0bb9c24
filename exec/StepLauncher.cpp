#include "exec/StepLauncher.h"

#include "codegen/Provenance.h"
#include "support/Error.h"

#include <algorithm>

namespace gnnjit::exec {

using codegen::KernelParam;
using codegen::ParamKind;
using namespace gnnjit::dsl;
using llvm::cast;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kMaxGridX = 0x7fffffff, kMaxGridY = 65535;

/// Blocks of one launch; every grid below is computed here and nowhere else.
struct Grid {
  int64_t x = 0, y = 1;
};

Grid spmmRowsGrid(const codegen::SpmmTuning &t, int64_t rows, int64_t width) {
  return {ceilDiv(rows * t.group, t.blockThreads), ceilDiv(width, t.tileWidth())};
}
Grid spmmSegmentsGrid(const codegen::SpmmTuning &t, int64_t segments, int64_t width) {
  return {ceilDiv(segments * t.segmentGroup, t.blockThreads), ceilDiv(width, t.segmentTileWidth())};
}
Grid cusparseValuesGrid(int64_t rows) { return {ceilDiv(rows * 32, 256), 1}; }
Grid nodeSumCombineGrid(int64_t width) { return {ceilDiv(width, 32), 1}; }
Grid nodeOutputsGrid(int64_t rows, int64_t width, int block) { return {ceilDiv(rows * width, block), 1}; }

/// The grids `step` launches at most, with `segments` heavy-row segments.
std::vector<Grid> stepGrids(const Program &program, const Step &step, int64_t rows, int64_t segments) {
  switch (step.kind) {
  case Step::Kind::Spmm: {
    std::vector<Grid> grids{spmmRowsGrid(step.tuning, rows, step.width)};
    if (step.tuning.heavyThreshold > 0)
      grids.push_back(spmmSegmentsGrid(step.tuning, segments, step.width));
    return grids;
  }
  case Step::Kind::Cusparse:
    return {cusparseValuesGrid(rows)};
  case Step::Kind::NodeSum:
    return {{nodeSumPartials(rows), 1}, nodeSumCombineGrid(step.width)};
  case Step::Kind::NodeOutputs:
  case Step::Kind::GlobalOutputs:
    return {nodeOutputsGrid(step.kind == Step::Kind::GlobalOutputs ? 1 : rows, step.width,
                            program.modules[static_cast<size_t>(step.module)].kernels[0].blockThreads)};
  case Step::Kind::Zero:
    break;
  }
  return {};
}

/// What a launch binds parameters to, beyond the graph and the bindings.
struct LaunchFrame {
  Direction direction = Direction::In;
  int64_t numRows = 0;
  const HeavySegments *segments = nullptr;
  float *partials = nullptr;
  int64_t numPartials = 0;
  float *edgeValues = nullptr;
};

} // namespace

Direction directionOf(const lower::AggregationStage &stage) {
  return cast<Aggregate>(stage.aggregate.get())->over() == Over::OutEdges ? Direction::Out : Direction::In;
}

int64_t nodeSumPartials(int64_t rows) { return std::clamp<int64_t>(ceilDiv(rows, 256), 1, 1024); }

void checkLaunchable(const Program &program, const graph::Graph &graph, const std::string &layer) {
  const int64_t rows = graph.numNodes(), segments = graph.numEdges() + graph.numNodes(); // segments: a bound
  for (const Step &step : program.steps)
    for (const Grid &g : stepGrids(program, step, rows, segments))
      if (g.x > kMaxGridX || g.y > kMaxGridY)
        throwUserError("layer {}: a kernel of the {} pass over rows of {} floats on a graph of {} nodes needs a grid "
                       "of {} x {} blocks, beyond CUDA's {} x {}; use a smaller width (heads x dim)",
                       layer, program.pass == Pass::Forward ? "forward" : "backward", step.width, rows, g.x, g.y,
                       kMaxGridX, kMaxGridY);
}

void launchProgram(const Program &program, const std::vector<std::vector<runtime::Kernel>> &kernels,
                   DeviceGraph &graph_, const DeviceTensors &inputs, ProgramBuffers &buffers, cudaStream_t stream,
                   const std::string &layer) {
  const int64_t n = graph_.numNodes();
  auto targetWidth = [&](const std::string &name) {
    for (const Target &t : program.targets)
      if (t.name == name)
        return t.width;
    throwInternalError("no target {}", name);
  };

  auto bind = [&](const KernelParam &p, const LaunchFrame &frame) -> uint64_t {
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
      return ptr(graph_.nodeQuantity(p.ref));
    case ParamKind::InputData:
      return ptr(inputs.find(p.ref)->second.data);
    case ParamKind::InputStride:
      return num(inputs.find(p.ref)->second.ld);
    case ParamKind::AggregateData:
      return ptr(buffers.aggregates.at(static_cast<size_t>(std::stoi(p.ref))).data());
    case ParamKind::AggregateStride:
      return num(program.aggregateWidths.at(static_cast<size_t>(std::stoi(p.ref))));
    case ParamKind::OutputData:
      return ptr(buffers.targets.at(p.ref).data());
    case ParamKind::OutputStride:
      return num(targetWidth(p.ref));
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
    }
    throwInternalError("unbound kernel parameter {}", p.name);
  };
  auto launch = [&](const runtime::Kernel &kernel, const codegen::GeneratedKernel &info, Grid grid,
                    const LaunchFrame &frame) {
    const int64_t blocksX = grid.x, blocksY = grid.y;
    if (blocksX <= 0 || blocksY <= 0)
      return;
    if (blocksX > kMaxGridX || blocksY > kMaxGridY)
      throwUserError("layer {}: kernel {} needs a grid of {} x {} blocks, beyond CUDA's limits", layer, info.entry,
                     blocksX, blocksY);
    std::vector<uint64_t> slots;
    slots.reserve(info.params.size());
    for (const KernelParam &p : info.params)
      slots.push_back(bind(p, frame));
    std::vector<void *> args;
    for (uint64_t &s : slots)
      args.push_back(&s);
    kernel.launch(dim3(static_cast<unsigned>(blocksX), static_cast<unsigned>(blocksY)),
                  dim3(static_cast<unsigned>(info.blockThreads)), 0, stream, args.data());
  };
  auto ensurePartials = [&](int64_t floats) {
    if (static_cast<int64_t>(buffers.partials.size()) < floats)
      buffers.partials = runtime::DeviceBuffer<float>(static_cast<size_t>(floats));
    return buffers.partials.data();
  };

  for (const Step &step : program.steps) {
    const codegen::GeneratedModule *module =
        step.module >= 0 ? &program.modules[static_cast<size_t>(step.module)] : nullptr;
    const std::vector<runtime::Kernel> *entries =
        step.module >= 0 ? &kernels[static_cast<size_t>(step.module)] : nullptr;
    switch (step.kind) {
    case Step::Kind::Spmm: {
      const codegen::SpmmTuning &t = step.tuning;
      LaunchFrame frame;
      frame.direction = directionOf(step.stage);
      frame.numRows = n;
      launch((*entries)[0], module->kernels[0], spmmRowsGrid(t, n, step.width), frame);
      if (t.heavyThreshold > 0) {
        const HeavySegments &s = graph_.segments(frame.direction, t.heavyThreshold, t.segmentLength);
        if (s.numSegments > 0) {
          frame.segments = &s;
          frame.partials = ensurePartials(s.numSegments * step.width);
          launch((*entries)[1], module->kernels[1], spmmSegmentsGrid(t, s.numSegments, step.width), frame);
          launch((*entries)[2], module->kernels[2], spmmSegmentsGrid(t, s.numHeavyRows, step.width), frame);
        }
      }
      break;
    }
    case Step::Kind::Cusparse: {
      LaunchFrame frame;
      frame.direction = directionOf(step.stage);
      frame.numRows = n;
      CusparseSpmm &spmm = graph_.cusparse(frame.direction, codegen::sha256Hex(module->source), [&](float *values) {
        frame.edgeValues = values;
        launch((*entries)[0], module->kernels[0], cusparseValuesGrid(n), frame);
      });
      const DeviceTensor &x = inputs.find(step.gathered)->second;
      float *y = step.target.empty() ? buffers.aggregates[static_cast<size_t>(step.aggregate)].data()
                                     : buffers.targets.at(step.target).data();
      spmm.multiply(x.data, x.ld, y, step.width, step.width, stream);
      break;
    }
    case Step::Kind::NodeSum: {
      LaunchFrame frame;
      frame.numRows = n;
      frame.numPartials = nodeSumPartials(n);
      frame.partials = ensurePartials(frame.numPartials * step.width);
      launch((*entries)[0], module->kernels[0], Grid{frame.numPartials, 1}, frame);
      launch((*entries)[1], module->kernels[1], nodeSumCombineGrid(step.width), frame);
      break;
    }
    case Step::Kind::NodeOutputs:
    case Step::Kind::GlobalOutputs: {
      LaunchFrame frame;
      frame.numRows = step.kind == Step::Kind::GlobalOutputs ? 1 : n;
      launch((*entries)[0], module->kernels[0],
             nodeOutputsGrid(frame.numRows, step.width, module->kernels[0].blockThreads), frame);
      break;
    }
    case Step::Kind::Zero:
      buffers.targets.at(step.target).fillZero(stream);
      break;
    }
  }
}

} // namespace gnnjit::exec
