#include "exec/LayerRunner.h"

#include "exec/KernelSource.h"
#include "exec/StepLauncher.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "support/Error.h"
#include "support/Stopwatch.h"

#include <fmt/format.h>

#include <algorithm>

namespace gnnjit::exec {

using namespace gnnjit::dsl;

namespace {

bool alignedRows(const DeviceTensor &t) { return reinterpret_cast<uintptr_t>(t.data) % 16 == 0 && t.ld % 4 == 0; }

/// Runs `obtain` (which gets `modules` modules from `cache`) and adds to
/// `report` how the cache answered.
template <typename Obtain>
void account(runtime::KernelCache &cache, size_t modules, CompileReport &report, Obtain &&obtain) {
  const runtime::CacheStats before = cache.stats();
  obtain();
  const runtime::CacheStats after = cache.stats();
  report.modules += static_cast<int>(modules);
  report.compiled += static_cast<int>(after.compiles - before.compiles);
  report.diskHits += static_cast<int>(after.diskHits - before.diskHits);
  report.memoryHits += static_cast<int>(after.memoryHits - before.memoryHits);
}

} // namespace

struct LayerRunner::Compiled {
  codegen::ProgramPtr program;
  std::vector<std::vector<runtime::Kernel>> kernels; ///< per module, per entry
  ProgramBuffers buffers;
  /// The runner's own results (calls without CallBuffers) and their views.
  std::map<std::string, runtime::DeviceBuffer<float>, std::less<>> ownTargets;
  DeviceTensors outputs;
  /// The heavy-row segments made before the pass runs: its own; and for a
  /// forward that a backward follows, those of the given backward too, so
  /// that a graph built on the device reads their counts back once, before
  /// the forward's first kernel, instead of once mid-forward and once
  /// mid-backward.
  std::vector<SegmentKey> segmentKeys, segmentKeysWithBackward;
};

LoadedKernels::Table LoadedKernels::of(const codegen::ProgramPtr &program, const std::function<Table()> &load) {
  const std::lock_guard lock(mutex_);
  auto it = entries_.find(program.get());
  if (it == entries_.end())
    it = entries_.emplace(program.get(), std::make_pair(program, load())).first;
  return it->second.second;
}

runtime::KernelCache &kernelCacheOf(const RunnerOptions &options) {
  return options.cache ? *options.cache : defaultKernelCache();
}

runtime::CompileOptions compileOptionsOf(const RunnerOptions &options) {
  runtime::CompileOptions c;
  c.arch = runtime::targetArch(options.arch);
  c.lineInfo = options.lineInfo;
  return c;
}

std::vector<runtime::Source> programSources(const codegen::Program &program) {
  std::vector<runtime::Source> sources;
  for (const codegen::GeneratedModule &module : program.code.modules)
    sources.push_back(kernelSource(module));
  return sources;
}

void compileProgram(const codegen::Program &program, const RunnerOptions &options, CompileReport &report) {
  const Stopwatch clock;
  const std::vector<runtime::Source> sources = programSources(program);
  runtime::KernelCache &cache = kernelCacheOf(options);
  const runtime::CompileOptions compileOptions = compileOptionsOf(options);
  account(cache, sources.size(), report, [&] {
    for (const runtime::Source &source : sources)
      cache.compile(source, compileOptions);
  });
  report.seconds += clock.seconds();
}

LayerRunner::LayerRunner(const lower::LoweredLayer &lowered, DeviceGraph &graph, LayerPrograms programs,
                         RunnerOptions options)
    : lowered_(lowered), graph_(graph), programs_(std::move(programs)), options_(std::move(options)) {
  if (!programs_.forward)
    throwInternalError("layer {}: a runner without a forward program", lowered_.layer.name());
}

LayerRunner::~LayerRunner() = default;

const codegen::Program &LayerRunner::program(Pass pass, bool aligned) { return *compiled(pass, aligned).program; }

const runtime::DeviceMemory *LayerRunner::saved(std::string_view name) const {
  const auto it = saved_.find(name);
  return it == saved_.end() ? nullptr : &it->second;
}

void LayerRunner::prepare(bool backward) {
  compiled(Pass::Forward, true);
  if (backward)
    compiled(Pass::Backward, true);
}

LayerRunner::Compiled &LayerRunner::compiled(Pass pass, bool aligned) {
  auto &slot = compiled_[{pass, aligned}];
  if (slot)
    return *slot;
  const Stopwatch clock;
  auto c = std::make_unique<Compiled>();
  c->program = programOf(pass, aligned);
  checkLaunchable(c->program->plan, graph_.stats());
  c->segmentKeys = c->segmentKeysWithBackward = segmentKeysOf(c->program->plan);
  if (pass == Pass::Forward && programs_.backward)
    for (const SegmentKey &key : segmentKeysOf(programs_.backward->plan))
      c->segmentKeysWithBackward.push_back(key);
  runtime::KernelCache &cache = kernelCacheOf(options_);
  const runtime::CompileOptions compileOptions = compileOptionsOf(options_);
  const auto load = [&] {
    LoadedKernels::Table table;
    account(cache, c->program->code.modules.size(), report_, [&] {
      for (const codegen::GeneratedModule &module : c->program->code.modules) {
        // One cache lookup (one hash of the source) per module, then its entries.
        const std::shared_ptr<const runtime::LoadedModule> loaded = cache.load(kernelSource(module), compileOptions);
        std::vector<runtime::Kernel> entries;
        for (const codegen::GeneratedKernel &k : module.kernels)
          entries.push_back(loaded->kernel(k.entry));
        table.push_back(std::move(entries));
      }
    });
    return table;
  };
  c->kernels = programs_.loaded ? programs_.loaded->of(c->program, load) : load();
  report_.seconds += clock.seconds();
  slot = std::move(c);
  return *slot;
}

codegen::ProgramPtr LayerRunner::programOf(Pass pass, bool aligned) const {
  const codegen::ProgramPtr &given = pass == Pass::Forward ? programs_.forward : programs_.backward;
  if (!given)
    throwUserError("layer {}: this runner was given no {} program", lowered_.layer.name(),
                   pass == Pass::Forward ? "forward" : "backward");
  if (aligned)
    return given;
  if (programs_.unaligned)
    return programs_.unaligned(lowered_, pass);
  const lower::PassConfig unaligned = lower::unalignedConfig(given->plan.config);
  if (unaligned == given->plan.config)
    return given;
  return std::make_shared<const codegen::Program>(codegen::planProgram(lowered_, pass, unaligned));
}

const DeviceTensors &LayerRunner::forward(const DeviceTensors &inputs, cudaStream_t stream) {
  return run(Pass::Forward, inputs, nullptr, stream);
}

const DeviceTensors &LayerRunner::backward(const DeviceTensors &inputs, cudaStream_t stream) {
  return run(Pass::Backward, inputs, nullptr, stream);
}

const DeviceTensors &LayerRunner::forward(const DeviceTensors &inputs, CallBuffers &call, cudaStream_t stream) {
  return run(Pass::Forward, inputs, &call, stream);
}

const DeviceTensors &LayerRunner::backward(const DeviceTensors &inputs, CallBuffers &call, cudaStream_t stream) {
  return run(Pass::Backward, inputs, &call, stream);
}

std::vector<SavedValue> LayerRunner::savedValues() {
  const int64_t n = graph_.numNodes();
  const size_t positionBytes = graph_.indexType() == graph::IndexType::Int64 ? 8 : 4;
  std::vector<SavedValue> out;
  for (const lower::SavedBuffer &b : compiled(Pass::Forward, true).program->plan.saved) {
    if (b.perEdge)
      throwInternalError("layer {}: saved value '{}' has a row per edge; callers' saved values are per node",
                         lowered_.layer.name(), b.name);
    out.push_back({b.name, n, b.width, b.positions ? positionBytes : sizeof(float), b.positions, b.aliasOf});
  }
  return out;
}

size_t LayerRunner::passInputCount(Pass pass) const {
  return lowered_.layer.inputs().size() + (pass == Pass::Backward ? lowered_.backward.plan.outputGradients.size() : 0);
}

const InputDecl &LayerRunner::passInput(Pass pass, size_t k) const {
  const std::vector<InputPtr> &inputs = lowered_.layer.inputs();
  if (k >= passInputCount(pass))
    throwInternalError("layer {}: binding {} of a pass with {}", lowered_.layer.name(), k, passInputCount(pass));
  return k < inputs.size() ? *inputs[k] : *lowered_.backward.plan.outputGradients[k - inputs.size()];
}

bool LayerRunner::checkInputs(Pass pass, const DeviceTensors &inputs) const {
  const std::string &layer = lowered_.layer.name();
  const int64_t n = graph_.numNodes();
  const size_t expected = passInputCount(pass);
  bool aligned = true;
  for (size_t k = 0; k < expected; ++k) {
    const InputDecl *decl = &passInput(pass, k);
    const auto it = inputs.find(decl->name);
    if (it == inputs.end())
      throwUserError("layer {}: no binding for input '{}'", layer, decl->name);
    const DeviceTensor &t = it->second;
    const int64_t rows = decl->kind == InputKind::Node ? n : decl->kind == InputKind::Edge ? graph_.numEdgeIds() : 1;
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
  // Every binding named an input above unless there are more bindings than inputs.
  if (inputs.size() != expected)
    for (const auto &[name, t] : inputs) {
      bool known = false;
      for (size_t k = 0; k < expected && !known; ++k)
        known = passInput(pass, k).name == name;
      if (!known)
        throwUserError("layer {}: binding '{}' names no input of the {} pass", layer, name,
                       pass == Pass::Forward ? "forward" : "backward");
    }
  return aligned;
}

void LayerRunner::bindOwnTargets(Compiled &c, cudaStream_t stream) {
  const int64_t n = graph_.numNodes();
  if (c.ownTargets.empty())
    for (const lower::Target &t : c.program->plan.targets) {
      const int64_t rows = t.rows(n, graph_.numEdgeIds());
      auto &buffer =
          c.ownTargets.emplace(t.name, runtime::DeviceBuffer<float>(static_cast<size_t>(rows * t.width))).first->second;
      // Rows of edge ids cleaning removed are never written: their gradient is 0.
      if (t.perEdge && graph_.numEdgeIds() > graph_.numEdges())
        GNNJIT_CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0, buffer.size() * sizeof(float), stream));
      c.outputs[t.name] = DeviceTensor{buffer.data(), rows, t.width, t.width};
    }
  c.buffers.targets = c.outputs;
}

void LayerRunner::bindCallerTargets(Compiled &c, const DeviceTensors &results, cudaStream_t stream) const {
  const std::string &layer = lowered_.layer.name();
  const int64_t n = graph_.numNodes();
  const lower::PassPlan &plan = c.program->plan;
  for (const auto &[name, t] : results)
    if (std::none_of(plan.targets.begin(), plan.targets.end(), [&](const lower::Target &x) { return x.name == name; }))
      throwUserError("layer {}: result buffer '{}' names no result of the {} pass", layer, name, passName(plan.pass));
  // The same names every call (and as bindOwnTargets binds): assigned in place, no map rebuilt.
  for (const lower::Target &t : plan.targets) {
    const auto it = results.find(t.name);
    if (it == results.end())
      throwUserError("layer {}: no buffer for the {} pass's result '{}'", layer, passName(plan.pass), t.name);
    const DeviceTensor &r = it->second;
    const int64_t rows = t.rows(n, graph_.numEdgeIds());
    if (r.rows != rows || r.cols != t.width || r.ld != t.width)
      throwUserError("layer {}: result '{}' is {} x {} floats with row stride {}; expected contiguous {} x {}", layer,
                     t.name, r.rows, r.cols, r.ld, rows, t.width);
    if (!r.data && rows * t.width > 0)
      throwUserError("layer {}: result '{}' is a null pointer", layer, t.name);
    if (t.perEdge && graph_.numEdgeIds() > graph_.numEdges() && rows * t.width > 0)
      GNNJIT_CUDA_CHECK(cudaMemsetAsync(r.data, 0, static_cast<size_t>(rows * t.width) * sizeof(float), stream));
    c.buffers.targets[t.name] = r;
  }
}

void LayerRunner::bindOwnSaved(Pass pass, Compiled &c) {
  const int64_t n = graph_.numNodes();
  // Saved values live as long as the runner: the forward writes them, the
  // backward reads them.
  for (const lower::SavedBuffer &b : c.program->plan.saved) {
    if (!b.aliasOf.empty()) {
      // The forward's output is the saved value: the last forward's buffer.
      if (pass == Pass::Forward)
        savedAt_[b.name] = c.buffers.targets.at(b.aliasOf).data;
      continue;
    }
    if (saved_.count(b.name))
      continue;
    const int64_t rows = b.perEdge ? graph_.numEdges() : n;
    const size_t element = b.positions && graph_.indexType() == graph::IndexType::Int64 ? 8 : 4;
    savedAt_[b.name] =
        saved_.emplace(b.name, runtime::DeviceMemory(static_cast<size_t>(rows * b.width) * element)).first->second.data();
  }
  c.buffers.saved = &savedAt_;
}

void LayerRunner::bindCallerSaved(Pass pass, Compiled &c, const CallBuffers &call) {
  const std::string &layer = lowered_.layer.name();
  const size_t positionBytes = graph_.indexType() == graph::IndexType::Int64 ? 8 : 4;
  // The pass's saved names every call: assigned in place, no map rebuilt.
  auto &savedAt = callSavedAt_[pass == Pass::Backward ? 1 : 0];
  for (const lower::SavedBuffer &b : c.program->plan.saved) {
    if (!b.aliasOf.empty() && pass == Pass::Forward) {
      savedAt[b.name] = c.buffers.targets.at(b.aliasOf).data;
      continue;
    }
    const size_t rows = static_cast<size_t>(b.perEdge ? graph_.numEdges() : graph_.numNodes());
    const size_t needed = rows * static_cast<size_t>(b.width) * (b.positions ? positionBytes : sizeof(float));
    const auto it = call.saved.find(b.name);
    // An empty saved value (no nodes) may have a null pointer: torch gives empty tensors none.
    if (it == call.saved.end() || (!it->second.data && needed > 0))
      throwUserError("layer {}: no buffer for the saved value '{}'{}", layer, b.name,
                     b.aliasOf.empty() ? "" : fmt::format(" (the forward's output '{}')", b.aliasOf));
    if (it->second.bytes < needed)
      throwUserError("layer {}: the saved value '{}' needs {} bytes; its buffer has {}", layer, b.name, needed,
                     it->second.bytes);
    savedAt[b.name] = it->second.data;
  }
  c.buffers.saved = &savedAt;
}

const DeviceTensors &LayerRunner::run(Pass pass, const DeviceTensors &inputs, CallBuffers *call, cudaStream_t stream) {
  const bool aligned = checkInputs(pass, inputs);
  Compiled &c = compiled(pass, aligned);
  const lower::PassPlan &plan = c.program->plan;
  if (pass == Pass::Backward && !call && !plan.saved.empty() && !forwardRan_)
    throwUserError("layer {}: the backward pass reads what the forward pass saves ({}); run forward on this runner "
                   "first",
                   lowered_.layer.name(), plan.saved.front().name);
  if (c.buffers.scratch.empty())
    for (const lower::ScratchBuffer &b : plan.scratch)
      c.buffers.scratch.emplace_back(static_cast<size_t>((b.global ? 1 : graph_.numNodes()) * b.width));
  if (call) {
    bindCallerTargets(c, call->results, stream);
    bindCallerSaved(pass, c, *call);
  } else {
    bindOwnTargets(c, stream);
    bindOwnSaved(pass, c);
  }
  c.buffers.randomSeed = randomSeed_;
  graph_.prepareSegments(backwardFollows_ ? c.segmentKeysWithBackward : c.segmentKeys, stream);
  launchProgram(*c.program, c.kernels, graph_, inputs, c.buffers, stream, lowered_.layer.name());
  if (call)
    return call->results;
  forwardRan_ |= pass == Pass::Forward;
  return c.outputs;
}

} // namespace gnnjit::exec
