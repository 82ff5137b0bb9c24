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
  auto launch = [&](const runtime::Kernel &kernel, const codegen::GeneratedKernel &info, int64_t blocksX,
                    int64_t blocksY, const LaunchFrame &frame) {
    if (blocksX <= 0 || blocksY <= 0)
      return;
    if (blocksX > 0x7fffffff || blocksY > 65535)
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
      launch((*entries)[0], module->kernels[0], ceilDiv(n * t.group, t.blockThreads),
             ceilDiv(step.width, t.tileWidth()), frame);
      if (t.heavyThreshold > 0) {
        const HeavySegments &s = graph_.segments(frame.direction, t.heavyThreshold, t.segmentLength);
        if (s.numSegments > 0) {
          frame.segments = &s;
          frame.partials = ensurePartials(s.numSegments * step.width);
          const int64_t tiles = ceilDiv(step.width, t.segmentTileWidth());
          launch((*entries)[1], module->kernels[1], ceilDiv(s.numSegments * t.segmentGroup, t.blockThreads), tiles,
                 frame);
          launch((*entries)[2], module->kernels[2], ceilDiv(s.numHeavyRows * t.segmentGroup, t.blockThreads), tiles,
                 frame);
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
        launch((*entries)[0], module->kernels[0], ceilDiv(n * 32, 256), 1, frame);
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
      frame.numPartials = std::clamp<int64_t>(ceilDiv(n, 256), 1, 1024);
      frame.partials = ensurePartials(frame.numPartials * step.width);
      launch((*entries)[0], module->kernels[0], frame.numPartials, 1, frame);
      launch((*entries)[1], module->kernels[1], ceilDiv(step.width, 32), 1, frame);
      break;
    }
    case Step::Kind::NodeOutputs:
    case Step::Kind::GlobalOutputs: {
      LaunchFrame frame;
      frame.numRows = step.kind == Step::Kind::GlobalOutputs ? 1 : n;
      const int block = module->kernels[0].blockThreads;
      launch((*entries)[0], module->kernels[0], ceilDiv(frame.numRows * step.width, block), 1, frame);
      break;
    }
    case Step::Kind::Zero:
      buffers.targets.at(step.target).fillZero(stream);
      break;
    }
  }
}

} // namespace gnnjit::exec
