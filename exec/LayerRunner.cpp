#include "exec/LayerRunner.h"

#include "codegen/Provenance.h"
#include "codegen/Version.h"
#include "exec/KernelSource.h"
#include "exec/Tuning.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace gnnjit::exec {

using codegen::KernelParam;
using codegen::ParamKind;
using namespace gnnjit::dsl;
using llvm::cast;

namespace {

runtime::KernelCache &defaultCache() {
  static runtime::KernelCache cache(runtime::KernelCacheConfig{{}, codegen::kGeneratorVersion});
  return cache;
}

Direction directionOf(const lower::AggregationStage &stage) {
  return cast<Aggregate>(stage.aggregate.get())->over() == Over::OutEdges ? Direction::Out : Direction::In;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool alignedRows(const DeviceTensor &t) { return reinterpret_cast<uintptr_t>(t.data) % 16 == 0 && t.ld % 4 == 0; }

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

struct LayerRunner::Compiled {
  Program program;
  std::vector<std::vector<runtime::Kernel>> kernels; ///< per module, per entry
  std::vector<runtime::DeviceBuffer<float>> aggregates;
  std::map<std::string, runtime::DeviceBuffer<float>, std::less<>> targets;
  runtime::DeviceBuffer<float> partials;
  DeviceTensors outputs;
};

ProgramConfig graphProgramConfig(const graph::Graph &graph, const RunnerOptions &options, bool aligned) {
  const graph::DegreeStats &stats = graph.stats();
  ProgramConfig config;
  config.index = graph.indexType() == graph::IndexType::Int32 ? codegen::IndexWidth::I32 : codegen::IndexWidth::I64;
  config.weighted = graph.hasWeights();
  config.chooseSpmm = [&stats, options, aligned](const lower::AggregationStage &stage, bool cusparsePossible,
                                                 bool cusparseNeedsPass) {
    TuningInputs in;
    in.degrees = directionOf(stage) == Direction::In ? &stats.in : &stats.out;
    in.width = stage.aggregate->shape().size();
    in.local = stats.avgEdgeSpan <= static_cast<double>(stats.nodes) / 64.0;
    in.cusparsePossible = cusparsePossible;
    in.cusparseNeedsPass = cusparseNeedsPass;
    in.alignedGather = aligned && isPlainGather(stage);
    in.variant = options.variant;
    in.group = options.spmmGroup;
    in.heavyThreshold = options.spmmHeavyThreshold;
    return chooseSpmm(in);
  };
  return config;
}

int compileProgram(const lower::LoweredLayer &lowered, const graph::Graph &graph, Pass pass,
                   const RunnerOptions &options) {
  const Program program = planProgram(lowered, pass, graphProgramConfig(graph, options, true));
  runtime::KernelCache &cache = options.cache ? *options.cache : defaultCache();
  runtime::CompileOptions compileOptions;
  compileOptions.arch = runtime::targetArch(options.arch);
  for (const codegen::GeneratedModule &module : program.modules)
    cache.compile(kernelSource(module), compileOptions);
  return static_cast<int>(program.modules.size());
}

LayerRunner::LayerRunner(const lower::LoweredLayer &lowered, DeviceGraph &graph, RunnerOptions options)
    : lowered_(lowered), graph_(graph), options_(std::move(options)) {
  for (const InputPtr &in : lowered_.layer.inputs())
    if (in->dtype != DType::F32)
      throwUserError("layer {}: input '{}' is {}; generated kernels take f32 inputs only so far", lowered_.layer.name(),
                     in->name, dtypeName(in->dtype));
}

LayerRunner::~LayerRunner() = default;

const Program &LayerRunner::program(Pass pass, bool aligned) { return compiled(pass, aligned).program; }

void LayerRunner::prepare(bool backward) {
  compiled(Pass::Forward, true);
  if (backward)
    compiled(Pass::Backward, true);
}

LayerRunner::Compiled &LayerRunner::compiled(Pass pass, bool aligned) {
  auto &slot = programs_[{pass, aligned}];
  if (slot)
    return *slot;
  const auto start = std::chrono::steady_clock::now();
  const ProgramConfig config = graphProgramConfig(graph_.host(), options_, aligned);
  auto c = std::make_unique<Compiled>();
  c->program = planProgram(lowered_, pass, config);

  runtime::KernelCache &cache = options_.cache ? *options_.cache : defaultCache();
  runtime::CompileOptions compileOptions;
  compileOptions.arch = runtime::targetArch(options_.arch);
  compileOptions.lineInfo = options_.lineInfo;
  const runtime::CacheStats before = cache.stats();
  for (const codegen::GeneratedModule &module : c->program.modules) {
    std::vector<runtime::Kernel> entries;
    const runtime::Source source = kernelSource(module);
    for (const codegen::GeneratedKernel &k : module.kernels)
      entries.push_back(cache.kernel(source, compileOptions, k.entry));
    c->kernels.push_back(std::move(entries));
  }
  const runtime::CacheStats after = cache.stats();
  report_.modules += static_cast<int>(c->program.modules.size());
  report_.compiled += static_cast<int>(after.compiles - before.compiles);
  report_.diskHits += static_cast<int>(after.diskHits - before.diskHits);
  report_.memoryHits += static_cast<int>(after.memoryHits - before.memoryHits);
  report_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  slot = std::move(c);
  return *slot;
}

const DeviceTensors &LayerRunner::forward(const DeviceTensors &inputs, cudaStream_t stream) {
  return run(Pass::Forward, inputs, stream);
}

const DeviceTensors &LayerRunner::backward(const DeviceTensors &inputs, cudaStream_t stream) {
  return run(Pass::Backward, inputs, stream);
}

const DeviceTensors &LayerRunner::run(Pass pass, const DeviceTensors &inputs, cudaStream_t stream) {
  const std::string &layer = lowered_.layer.name();
  const int64_t n = graph_.numNodes();
  // Check every binding before anything runs.
  std::vector<InputPtr> expected = lowered_.layer.inputs();
  if (pass == Pass::Backward)
    for (const InputPtr &g : lowered_.backward.plan.outputGradients)
      expected.push_back(g);
  bool aligned = true;
  for (const InputPtr &decl : expected) {
    const auto it = inputs.find(decl->name);
    if (it == inputs.end())
      throwUserError("layer {}: no binding for input '{}'", layer, decl->name);
    const DeviceTensor &t = it->second;
    const int64_t rows = decl->kind == InputKind::Node ? n : decl->kind == InputKind::Edge ? graph_.numEdges() : 1;
    const char *rowMeaning = decl->kind == InputKind::Node   ? "one per node"
                             : decl->kind == InputKind::Edge ? "one per edge id"
                                                             : "a parameter has one";
    if (t.rows != rows || t.cols != decl->shape.size())
      throwUserError("layer {}: input '{}' is bound to {} x {} floats; expected {} x {} (rows: {})", layer, decl->name,
                     t.rows, t.cols, rows, decl->shape.size(), rowMeaning);
    if (t.ld < t.cols)
      throwUserError("layer {}: input '{}' has row stride {} < its {} columns", layer, decl->name, t.ld, t.cols);
    if (!t.data && t.rows * t.cols > 0)
      throwUserError("layer {}: input '{}' is bound to a null pointer", layer, decl->name);
    if (decl->kind == InputKind::Node)
      aligned &= alignedRows(t);
  }
  for (const auto &[name, t] : inputs)
    if (std::none_of(expected.begin(), expected.end(), [&](const InputPtr &d) { return d->name == name; }))
      throwUserError("layer {}: binding '{}' names no input of the {} pass", layer, name,
                     pass == Pass::Forward ? "forward" : "backward");

  Compiled &c = compiled(pass, aligned);
  const Program &program = c.program;
  if (c.aggregates.empty())
    for (size_t k = 0; k < program.aggregateWidths.size(); ++k)
      c.aggregates.emplace_back(static_cast<size_t>((program.aggregateGlobal[k] ? 1 : n) * program.aggregateWidths[k]));
  if (c.targets.empty())
    for (const Target &t : program.targets) {
      const int64_t rows = t.global ? 1 : n;
      auto &buffer =
          c.targets.emplace(t.name, runtime::DeviceBuffer<float>(static_cast<size_t>(rows * t.width))).first->second;
      c.outputs[t.name] = DeviceTensor{buffer.data(), rows, t.width, t.width};
    }
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
      return ptr(c.aggregates.at(static_cast<size_t>(std::stoi(p.ref))).data());
    case ParamKind::AggregateStride:
      return num(program.aggregateWidths.at(static_cast<size_t>(std::stoi(p.ref))));
    case ParamKind::OutputData:
      return ptr(c.targets.at(p.ref).data());
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
    if (static_cast<int64_t>(c.partials.size()) < floats)
      c.partials = runtime::DeviceBuffer<float>(static_cast<size_t>(floats));
    return c.partials.data();
  };

  for (const Step &step : program.steps) {
    const codegen::GeneratedModule *module =
        step.module >= 0 ? &program.modules[static_cast<size_t>(step.module)] : nullptr;
    const std::vector<runtime::Kernel> *kernels =
        step.module >= 0 ? &c.kernels[static_cast<size_t>(step.module)] : nullptr;
    switch (step.kind) {
    case Step::Kind::Spmm: {
      const codegen::SpmmTuning &t = step.tuning;
      LaunchFrame frame;
      frame.direction = directionOf(step.stage);
      frame.numRows = n;
      launch((*kernels)[0], module->kernels[0], ceilDiv(n * t.group, t.blockThreads),
             ceilDiv(step.width, t.tileWidth()), frame);
      if (t.heavyThreshold > 0) {
        const HeavySegments &s = graph_.segments(frame.direction, t.heavyThreshold, t.segmentLength);
        if (s.numSegments > 0) {
          frame.segments = &s;
          frame.partials = ensurePartials(s.numSegments * step.width);
          const int64_t tiles = ceilDiv(step.width, t.segmentTileWidth());
          launch((*kernels)[1], module->kernels[1], ceilDiv(s.numSegments * t.segmentGroup, t.blockThreads), tiles,
                 frame);
          launch((*kernels)[2], module->kernels[2], ceilDiv(s.numHeavyRows * t.segmentGroup, t.blockThreads), tiles,
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
        launch((*kernels)[0], module->kernels[0], ceilDiv(n * 32, 256), 1, frame);
      });
      const DeviceTensor &x = inputs.find(step.gathered)->second;
      float *y = step.target.empty() ? c.aggregates[static_cast<size_t>(step.aggregate)].data()
                                     : c.targets.at(step.target).data();
      spmm.multiply(x.data, x.ld, y, step.width, step.width, stream);
      break;
    }
    case Step::Kind::NodeSum: {
      LaunchFrame frame;
      frame.numRows = n;
      frame.numPartials = std::clamp<int64_t>(ceilDiv(n, 256), 1, 1024);
      frame.partials = ensurePartials(frame.numPartials * step.width);
      launch((*kernels)[0], module->kernels[0], frame.numPartials, 1, frame);
      launch((*kernels)[1], module->kernels[1], ceilDiv(step.width, 32), 1, frame);
      break;
    }
    case Step::Kind::NodeOutputs:
    case Step::Kind::GlobalOutputs: {
      LaunchFrame frame;
      frame.numRows = step.kind == Step::Kind::GlobalOutputs ? 1 : n;
      const int block = module->kernels[0].blockThreads;
      launch((*kernels)[0], module->kernels[0], ceilDiv(frame.numRows * step.width, block), 1, frame);
      break;
    }
    case Step::Kind::Zero:
      c.targets.at(step.target).fillZero(stream);
      break;
    }
  }
  return c.outputs;
}

} // namespace gnnjit::exec
