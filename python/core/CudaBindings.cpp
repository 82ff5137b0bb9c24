// gnnjit._core's GPU part, for gnnjit.ops: a graph's arrays on the device
// (DeviceGraph: uploaded from a host graph, or built on the device from a
// CUDA edge_index), a layer planned once per device (LayerPlan) and its
// runner on a graph (CudaLayer), which reads and writes device memory the
// caller owns (torch tensors, passed as pointers), on the caller's stream,
// taking its own memory from an allocator the caller installs (torch's
// caching allocator). No torch here: the Python side turns tensors into
// (pointer, rows, cols, row stride).
#include "python/core/Bindings.h"
#include "python/core/AllocatorBridge.h"
#include "python/core/RunnerBridge.h"

#include "autotune/PlanLayer.h"
#include "dsl/Layer.h"
#include "exec/DeviceBuild.h"
#include "exec/DeviceGraph.h"
#include "exec/LayerRunner.h"
#include "exec/SplitForecast.h"
#include "lower/Pipeline.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/DeviceBuffer.h"
#include "support/Error.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <optional>
#include <tuple>

namespace nb = nanobind;

namespace gnnjit::python {

namespace {

using SavedLayout = std::vector<std::tuple<std::string, int64_t, bool, std::string>>;

/// What the forward of `layer` saves for its backward, planned without a
/// graph: (name, width, whether CSR positions, the output it aliases or "").
/// The saved values' layout follows the layer's structure, not the graph
/// (CudaLayer checks that its runner agrees), so torch's fake tensors can
/// have their shapes before any graph exists.
SavedLayout savedLayout(const lower::LoweredLayer &lowered) {
  const autotune::GraphFacts facts = autotune::assumedFacts(16, 1024);
  const codegen::Program program =
      codegen::planProgram(lowered, lower::Pass::Forward, autotune::ruleConfig(lowered, lower::Pass::Forward, facts, {}));
  std::vector<std::tuple<std::string, int64_t, bool, std::string>> out;
  for (const lower::SavedBuffer &b : program.plan.saved)
    out.emplace_back(b.name, b.width, b.positions, b.aliasOf);
  return out;
}

/// Device memory from an allocator outside gnnjit (torch's caching one),
/// reached through Python callables: allocate(bytes) -> pointer and
/// free(pointer) (torch.cuda.caching_allocator_alloc / _delete); or, given
/// stream(device) -> the device's current stream, allocate(bytes, stream)
/// (torch's builtin raw_alloc, which skips the public wrapper's Python
/// work: some 25 us an allocation, and a graph built per step makes dozens),
/// where a runtime::AllocationStream scope names the stream without asking.
/// With `native` (the torch operator library's AllocatorBridge.h table) an
/// allocation and a free call torch's allocator directly, with no GIL or
/// Python; the callables serve only an allocation the table refused, so
/// that torch raises its own error (out of memory) with its message.
class ExternalAllocator : public runtime::DeviceAllocator {
public:
  ExternalAllocator(nb::callable allocate, nb::callable release, nb::object stream,
                    const GnnjitAllocatorBridge *native)
      : allocate_(std::move(allocate)), release_(std::move(release)), stream_(std::move(stream)), native_(native) {}
  ~ExternalAllocator() override {
    if (!nb::is_alive()) { // the interpreter is gone: the callables' references with it
      allocate_.release();
      release_.release();
      stream_.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    allocate_.reset();
    release_.reset();
    stream_.reset();
  }

  void *allocate(size_t bytes) override {
    const std::optional<cudaStream_t> stream = runtime::AllocationStream::current();
    if (native_ != nullptr)
      if (void *data = native_->allocate(bytes, stream ? static_cast<void *>(*stream) : nullptr))
        return data;
    nb::gil_scoped_acquire gil;
    if (stream_.is_none())
      return reinterpret_cast<void *>(nb::cast<uintptr_t>(allocate_(bytes)));
    if (stream)
      return reinterpret_cast<void *>(nb::cast<uintptr_t>(allocate_(bytes, reinterpret_cast<uintptr_t>(*stream))));
    int device = 0;
    runtime::cudaCheck(cudaGetDevice(&device), "cudaGetDevice");
    return reinterpret_cast<void *>(nb::cast<uintptr_t>(allocate_(bytes, stream_(device))));
  }
  void release(void *data, size_t) noexcept override {
    if (!nb::is_alive())
      return; // at exit the allocator is gone, and its memory with the process
    if (native_ != nullptr)
      return native_->release(data); // the same caching allocator as the callables'
    nb::gil_scoped_acquire gil;
    try {
      release_(reinterpret_cast<uintptr_t>(data));
    } catch (nb::python_error &e) {
      e.discard_as_unraisable("gnnjit: returning device memory");
    }
  }

private:
  nb::object allocate_, release_, stream_;
  const GnnjitAllocatorBridge *native_;
};

/// The torch operator library's allocator table at `address` (0: none).
const GnnjitAllocatorBridge *allocatorBridge(uintptr_t address) {
  if (address == 0)
    return nullptr;
  const auto *bridge = reinterpret_cast<const GnnjitAllocatorBridge *>(address);
  if (bridge->version != GNNJIT_ALLOCATOR_BRIDGE_VERSION)
    throwUserError("gnnjit's torch operator library and gnnjit._core disagree on their allocator table's version "
                   "({} and {}); reinstall gnnjit",
                   bridge->version, GNNJIT_ALLOCATOR_BRIDGE_VERSION);
  return bridge;
}

void useDevice(int device) {
  if (!runtime::hasCudaDevice())
    throwUserError("gnnjit: no CUDA device (or no driver) is visible to this process");
  runtime::cudaCheck(cudaSetDevice(device), "cudaSetDevice");
}

/// A graph's arrays on one device: the mirror of a host graph (kept alive
/// here), or a graph built on the device (no host graph).
struct PyDeviceGraph {
  nb::object host; ///< the gnnjit.Graph, or None
  int device = 0;
  std::unique_ptr<exec::DeviceGraph> graph;
};

/// The device graph of a CUDA edge_index given as pointers: src and dst
/// (`numEdges` ids of `dtype` each), optional float weights; built on
/// `stream` of `device`.
PyDeviceGraph *buildDeviceGraph(uintptr_t src, uintptr_t dst, const std::string &dtype, int64_t numEdges,
                                int64_t numNodes, uintptr_t weights, const std::string &selfLoops,
                                const std::string &index, float loopWeight, int device, uintptr_t stream) {
  useDevice(device);
  if (dtype != "int32" && dtype != "int64")
    throwUserError("edge_index must hold int32 or int64 ids; got {}", dtype);
  exec::DeviceEdges edges;
  edges.src = reinterpret_cast<const void *>(src);
  edges.dst = reinterpret_cast<const void *>(dst);
  edges.idType = dtype == "int32" ? graph::IndexType::Int32 : graph::IndexType::Int64;
  edges.numEdges = numEdges;
  edges.numNodes = numNodes;
  edges.weights = reinterpret_cast<const float *>(weights);
  graph::BuildOptions options;
  options.selfLoops = parseSelfLoops(selfLoops);
  options.index = parseIndex(index);
  options.loopWeight = loopWeight;
  auto built = exec::buildOnDevice(edges, options, reinterpret_cast<cudaStream_t>(stream));
  return new PyDeviceGraph{nb::none(), device, std::move(built)};
}

/// A layer planned for one device, shared by its runners on every graph
/// (gnnjit.ops keeps one per layer spec, device and mode): the lowered
/// layer, each config's program planned once, the kernels loaded for them,
/// and the saved values' layout. A runner on a graph of configs already
/// seen then plans, emits and loads nothing.
struct LayerPlan {
  LayerPlan(const dsl::Layer &layer, int64_t width, int64_t heads, bool tune, bool deterministic)
      : lowered(lower::lowerLayer(layer)), programs(lowered), kernels(std::make_shared<exec::LoadedKernels>()),
        layout(savedLayout(lowered)) {
    request.layerHash = layer.hashHex();
    request.width = width;
    request.heads = heads;
    request.tuneMissing = tune;
    // cuSPARSE's SpMM is not bitwise reproducible: deterministic mode keeps
    // to the generated kernels, by the rule.
    request.useRecords = !deterministic;
    if (deterministic)
      request.rule.variant = autotune::Variant::Generated;
  }
  LayerPlan(const LayerPlan &) = delete;
  LayerPlan &operator=(const LayerPlan &) = delete;

  /// The programs for `graph`: a host graph's from the tuning records (and
  /// tuning, when asked) and the rule; a graph built on the device's from
  /// the rule (records are keyed by a graph's content, which a graph built
  /// per step never repeats).
  autotune::PlannedLayer plan(const exec::DeviceGraph &graph) {
    autotune::PlannedLayer planned;
    if (!graph.builtOnDevice()) {
      planned = autotune::planLayer(lowered, graph.host(), request, &programs);
    } else {
      const autotune::GraphFacts facts = autotune::graphFacts(graph.stats(), graph.indexType(), graph.hasWeights());
      planned.programs = autotune::rulePrograms(programs, facts, autotune::forDeviceBuiltGraph(request.rule));
    }
    planned.programs.loaded = kernels;
    return planned;
  }

  lower::LoweredLayer lowered;
  autotune::ProgramCache programs; ///< reads `lowered`
  std::shared_ptr<exec::LoadedKernels> kernels;
  SavedLayout layout;
  autotune::PlanRequest request;
};

/// A layer's runner on a device graph, configured by the tuning records
/// when they have this layer, graph and width.
class CudaLayer {
public:
  CudaLayer(nb::object plan, nb::object deviceGraph)
      : plan_(std::move(plan)), deviceGraph_(std::move(deviceGraph)), graph_(nb::cast<PyDeviceGraph &>(deviceGraph_)) {
    useDevice(graph_.device);
    LayerPlan &p = nb::cast<LayerPlan &>(plan_);
    const autotune::PlannedLayer planned = p.plan(*graph_.graph);
    tunedStages_ = planned.stages;
    recordsNote_ = planned.note;
    runner_ = std::make_unique<exec::LayerRunner>(p.lowered, *graph_.graph, planned.programs);
    checkSavedLayout(p);
  }

  /// Name, bytes and the forward output each saved value aliases ("" if none).
  std::vector<std::tuple<std::string, size_t, std::string>> savedValues() {
    std::vector<std::tuple<std::string, size_t, std::string>> out;
    for (const exec::SavedValue &v : runner_->savedValues())
      out.emplace_back(v.name, v.bytes(), v.aliasOf);
    return out;
  }

  /// Names, rows and widths of a pass's results.
  std::vector<std::tuple<std::string, int64_t, int64_t>> results(bool backward) {
    std::vector<std::tuple<std::string, int64_t, int64_t>> out;
    const exec::DeviceGraph &g = *graph_.graph;
    for (const lower::Target &t : runner_->program(backward ? lower::Pass::Backward : lower::Pass::Forward).plan.targets)
      out.emplace_back(t.name, t.rows(g.numNodes(), g.numEdgeIds()), t.width);
    return out;
  }

  /// Runs a pass from one flat list of integers, in the orders this layer
  /// fixes: (pointer, rows, cols, row stride) of each input (the layer's,
  /// then for the backward "d_<output>" of each output), the pointer of each
  /// result as results() lists them (contiguous rows of their shapes), then
  /// the saved values as savedValues() lists them: the forward gives the
  /// pointer of each that aliases no output (memory of its bytes), the
  /// backward (pointer, bytes) of every one. The bindings are kept between
  /// calls (only their pointers change), so a call looks up no names here.
  void call(bool backward, const std::vector<int64_t> &flat, uintptr_t stream, uint64_t seed, bool backwardFollows) {
    callFlat(backward, flat.data(), flat.size(), reinterpret_cast<cudaStream_t>(stream), seed, backwardFollows);
  }
  /// call() from a pointer and a count: what the torch library's bridge
  /// calls.
  void callFlat(bool backward, const int64_t *flat, size_t count, cudaStream_t s, uint64_t seed,
                bool backwardFollows) {
    useDevice(graph_.device);
    const lower::Pass pass = backward ? lower::Pass::Backward : lower::Pass::Forward;
    Slots &slots = slotsOf(pass);
    const size_t perSaved = backward ? 2 : 1;
    const size_t expected = 4 * slots.inputs.size() + slots.results.size() + perSaved * slots.saved.size();
    if (count != expected)
      throwInternalError("CudaLayer.call: {} integers for the {} pass; its layout takes {}", count,
                         lower::passName(pass), expected);
    const int64_t *next = flat;
    for (exec::DeviceTensor *t : slots.inputs) {
      *t = {reinterpret_cast<float *>(next[0]), next[1], next[2], next[3]};
      next += 4;
    }
    for (exec::DeviceTensor *t : slots.results)
      t->data = reinterpret_cast<float *>(*next++);
    for (const SavedSlot &saved : slots.saved) {
      saved.buffer->data = reinterpret_cast<void *>(*next++);
      saved.buffer->bytes = backward ? static_cast<size_t>(*next++) : saved.bytes;
    }
    const runtime::AllocationStream scope(s); // a new graph's first pass allocates its splits and scratch
    runner_->setRandomSeed(seed);
    runner_->setBackwardFollows(backwardFollows);
    if (backward)
      runner_->backward(slots.bound, slots.buffers, s);
    else
      runner_->forward(slots.bound, slots.buffers, s);
  }

  /// The runner saves what savedLayout promised torch's fake tensors.
  void checkSavedLayout(const LayerPlan &plan) {
    const SavedLayout &layout = plan.layout;
    const std::vector<exec::SavedValue> saved = runner_->savedValues();
    bool same = layout.size() == saved.size();
    for (size_t k = 0; same && k < saved.size(); ++k)
      same = std::get<0>(layout[k]) == saved[k].name && std::get<1>(layout[k]) == saved[k].width &&
             std::get<2>(layout[k]) == saved[k].positions && std::get<3>(layout[k]) == saved[k].aliasOf;
    if (!same)
      throwInternalError("layer {}: the forward on this graph saves other values than its layout without a graph",
                         plan.lowered.layer.name());
  }

  int tunedStages() const { return tunedStages_; }
  const std::string &recordsNote() const { return recordsNote_; }
  std::string describe(bool backward) {
    return runner_->program(backward ? lower::Pass::Backward : lower::Pass::Forward).describe();
  }

private:
  struct SavedSlot {
    exec::DeviceBytes *buffer;
    size_t bytes; ///< what the forward's own memory for it holds
  };
  /// A pass's bindings, kept between calls, and where call() writes each
  /// pointer: the map nodes never move.
  struct Slots {
    exec::DeviceTensors bound;
    exec::CallBuffers buffers;
    std::vector<exec::DeviceTensor *> inputs, results;
    std::vector<SavedSlot> saved;
  };

  Slots &slotsOf(lower::Pass pass) {
    std::unique_ptr<Slots> &slots = slots_[pass == lower::Pass::Backward ? 1 : 0];
    if (!slots)
      slots = makeSlots(pass);
    return *slots;
  }

  std::unique_ptr<Slots> makeSlots(lower::Pass pass) {
    auto slots = std::make_unique<Slots>();
    const bool backward = pass == lower::Pass::Backward;
    for (size_t k = 0; k < runner_->passInputCount(pass); ++k)
      slots->inputs.push_back(&slots->bound[runner_->passInput(pass, k).name]);
    for (const lower::Target &t : runner_->program(pass).plan.targets) {
      const exec::DeviceGraph &g = *graph_.graph;
      exec::DeviceTensor &r = slots->buffers.results[t.name];
      r = {nullptr, t.rows(g.numNodes(), g.numEdgeIds()), t.width, t.width};
      slots->results.push_back(&r);
    }
    for (const exec::SavedValue &v : runner_->savedValues())
      if (backward || v.aliasOf.empty())
        slots->saved.push_back({&slots->buffers.saved[v.name], v.bytes()});
    return slots;
  }

  nb::object plan_;        ///< kept alive: the runner's programs and kernels are its
  nb::object deviceGraph_; ///< kept alive: the runner reads it
  PyDeviceGraph &graph_;
  std::unique_ptr<exec::LayerRunner> runner_;
  int tunedStages_ = 0;
  std::string recordsNote_;
  std::unique_ptr<Slots> slots_[2]; ///< forward, backward
};

/// What the torch library's bridge reports of a failed call.
int32_t failed(const char *what, GnnjitBridgeStatus status, char *message, size_t capacity) {
  if (capacity > 0) {
    std::strncpy(message, what, capacity - 1);
    message[capacity - 1] = '\0';
  }
  return status;
}

bool outOfMemory(const std::string &what) {
  return what.find("OutOfMemoryError") != std::string::npos || what.find("out of memory") != std::string::npos;
}

int32_t bridgeCall(void *runner, int32_t backward, const int64_t *flat, size_t count, void *stream, uint64_t seed,
                   int32_t backwardFollows, char *message, size_t capacity) {
  // Under the GIL, as CudaLayer.call from Python: a runner's passes share
  // state, and the allocator needs the GIL anyway (a lock of our own taken
  // before it could deadlock against a thread that holds it).
  nb::gil_scoped_acquire gil;
  try {
    static_cast<CudaLayer *>(runner)->callFlat(backward != 0, flat, count, static_cast<cudaStream_t>(stream), seed,
                                               backwardFollows != 0);
    return GNNJIT_BRIDGE_OK;
  } catch (const nb::python_error &e) { // the allocator's
    const std::string what = e.what();
    return failed(what.c_str(), outOfMemory(what) ? GNNJIT_BRIDGE_OUT_OF_MEMORY : GNNJIT_BRIDGE_ERROR, message,
                  capacity);
  } catch (const std::exception &e) {
    return failed(e.what(), outOfMemory(e.what()) ? GNNJIT_BRIDGE_OUT_OF_MEMORY : GNNJIT_BRIDGE_ERROR, message,
                  capacity);
  } catch (...) {
    return failed("gnnjit: an unknown error in a layer runner", GNNJIT_BRIDGE_ERROR, message, capacity);
  }
}

void bridgeRetain(void *owner) {
  nb::gil_scoped_acquire gil;
  nb::handle(static_cast<PyObject *>(owner)).inc_ref();
}

void bridgeRelease(void *owner) {
  if (!nb::is_alive())
    return; // at exit the object is gone with the interpreter
  nb::gil_scoped_acquire gil;
  nb::handle(static_cast<PyObject *>(owner)).dec_ref();
}

const GnnjitRunnerBridge runnerBridge{GNNJIT_RUNNER_BRIDGE_VERSION, &bridgeCall, &bridgeRetain, &bridgeRelease};

} // namespace

void registerCuda(nb::module_ &m) {
  m.def(
      "runner_bridge", [] { return reinterpret_cast<uintptr_t>(&runnerBridge); },
      "the address of the table (python/core/RunnerBridge.h) through which gnnjit's torch operator library runs "
      "a CudaLayer");
  m.def(
      "saved_layout", [](const dsl::Layer &layer) { return savedLayout(lower::lowerLayer(layer)); }, nb::arg("layer"),
      "(name, width, positions, aliased output or '') of each value the layer's forward saves for its backward "
      "on the GPU, one row per node each");
  m.def("cuda_available", &runtime::hasCudaDevice, "whether a CUDA device and driver are visible");
  m.def(
      "set_device_allocator",
      [](nb::object allocate, nb::object release, nb::object stream, uintptr_t native) {
        if (allocate.is_none() != release.is_none())
          throwUserError("set_device_allocator takes both allocate and free, or neither");
        if (allocate.is_none() && native != 0)
          throwUserError("set_device_allocator: a native allocator table needs allocate and free beside it");
        runtime::setDeviceAllocator(allocate.is_none() ? nullptr
                                                       : std::make_shared<ExternalAllocator>(
                                                             nb::borrow<nb::callable>(allocate),
                                                             nb::borrow<nb::callable>(release), std::move(stream),
                                                             allocatorBridge(native)));
      },
      nb::arg("allocate").none(), nb::arg("free").none(), nb::arg("stream").none() = nb::none(),
      nb::arg("native") = 0,
      "Device memory gnnjit allocates from now on comes from allocate(bytes) -> pointer, or with `stream` given "
      "allocate(bytes, stream(device)) on the current device, and goes back through free(pointer) (None, None: "
      "cudaMalloc). `native`, the address of the torch operator library's allocator table "
      "(torch.ops.gnnjit_eager.allocator_bridge()), takes the same allocator's memory without Python, the "
      "callables serving only what it refuses");
  m.def(
      "device_memory_in_use", [] { return runtime::deviceMemoryUse().live; },
      "bytes of device memory gnnjit holds now (graphs' arrays, runners' scratch)");
  m.def("forget_split_forecast", &exec::split_forecast::forget,
        "Forgets which heavy-row splits earlier graphs built on the GPU were asked for, so that the next build "
        "makes none ahead (for tests that count splits)");

  nb::class_<PyDeviceGraph>(m, "DeviceGraph",
                            "A graph's arrays on one CUDA device: uploaded from a gnnjit.Graph as layers need them, "
                            "or built on the device (DeviceGraph.from_edges).")
      .def(
          "__init__",
          [](PyDeviceGraph *self, nb::object host, int device) {
            new (self) PyDeviceGraph{host, device, nullptr};
            self->graph = std::make_unique<exec::DeviceGraph>(nb::cast<const graph::Graph &>(host));
          },
          nb::arg("graph"), nb::arg("device") = 0)
      .def_static("from_edges", &buildDeviceGraph, nb::arg("src"), nb::arg("dst"), nb::arg("dtype"),
                  nb::arg("num_edges"), nb::arg("num_nodes"), nb::arg("weights") = 0, nb::arg("self_loops") = "keep",
                  nb::arg("index") = "auto", nb::arg("loop_weight") = 1.0f, nb::arg("device") = 0,
                  nb::arg("stream") = 0,
                  nb::rv_policy::take_ownership,
                  "The graph of a CUDA edge_index built on `device`, on `stream` (pointers into device memory: src "
                  "and dst hold num_edges ids of dtype 'int32' or 'int64'; weights: num_edges float32s, or 0; loop_weight "
                  "as gnnjit.Graph's), the "
                  "same CSR the host build makes of it. Synchronises the stream once, at the end, to read back the "
                  "edge count and degree statistics; a bad edge raises gnnjit.Error as gnnjit.Graph does.")
      .def_ro("device", &PyDeviceGraph::device)
      .def_prop_ro("num_nodes", [](const PyDeviceGraph &g) { return g.graph->numNodes(); })
      .def_prop_ro("num_edges", [](const PyDeviceGraph &g) { return g.graph->numEdges(); },
                   "stored edges, after cleaning")
      .def_prop_ro("index_type",
                   [](const PyDeviceGraph &g) { return std::string(graph::indexTypeName(g.graph->indexType())); })
      .def_prop_ro("has_weights", [](const PyDeviceGraph &g) { return g.graph->hasWeights(); })
      .def_prop_ro("built_on_device", [](const PyDeviceGraph &g) { return g.graph->builtOnDevice(); })
      .def_prop_ro("max_in_degree", [](const PyDeviceGraph &g) { return g.graph->stats().in.max; })
      .def_prop_ro("mean_in_degree", [](const PyDeviceGraph &g) { return g.graph->stats().in.mean; })
      .def(
          "download", [](const PyDeviceGraph &g) { return g.graph->download(); },
          "a gnnjit.Graph with the same CSR, copied to the host")
      .def_prop_ro("device_bytes", [](const PyDeviceGraph &g) { return g.graph->deviceBytes(); })
      .def_prop_ro("segment_splits", [](const PyDeviceGraph &g) { return g.graph->segmentSplits(); },
                   "how many heavy-row splits (direction, threshold, length) the graph holds");

  nb::class_<LayerPlan>(m, "LayerPlan",
                        "A layer planned for one device, shared by its runners on every graph: each config planned, "
                        "and its kernels compiled (NVRTC, kernel cache) and loaded, once.")
      .def(nb::init<const dsl::Layer &, int64_t, int64_t, bool, bool>(), nb::arg("layer"), nb::arg("width"),
           nb::arg("heads") = 1, nb::arg("tune") = false, nb::arg("deterministic") = false)
      .def_prop_ro(
          "planned", [](const LayerPlan &p) { return p.programs.planned(); }, "how many configs were planned");

  nb::class_<CudaLayer>(m, "CudaLayer",
                        "A layer's kernels on a device graph, planned by the tuning records or the rule (for a graph "
                        "built on the device, the rule); passes write the caller's device memory.")
      .def(nb::init<nb::object, nb::object>(), nb::arg("plan"), nb::arg("device_graph"))
      .def("saved_values", &CudaLayer::savedValues, "(name, bytes, aliased output or '') of what the forward saves")
      .def("results", &CudaLayer::results, nb::arg("backward"), "(name, rows, width) of a pass's results")
      .def_prop_ro(
          "handle", [](CudaLayer &layer) { return reinterpret_cast<uintptr_t>(&layer); },
          "this runner's address, for runner_bridge()'s call")
      .def("call", &CudaLayer::call, nb::arg("backward"), nb::arg("flat"), nb::arg("stream"), nb::arg("seed") = 0,
           nb::arg("backward_follows") = true,
           "Runs a pass on `stream` from one list of integers: (pointer, rows, cols, row stride) of each input (the "
           "layer's, then for the backward d_<output> of each output), each result's pointer as results() lists "
           "them, then the saved values as saved_values() lists them: the forward the pointer of each that aliases "
           "no output, the backward (pointer, bytes) of every one; seed: what attention dropout draws from (a "
           "backward takes its forward's); backward_follows: False for a forward no backward follows (inference), "
           "so that a graph built on the GPU makes only the forward's heavy-row splits")
      .def_prop_ro("tuned_stages", &CudaLayer::tunedStages, "stages planned with a tuning record's config")
      .def_prop_ro("records_note", &CudaLayer::recordsNote)
      .def("describe", &CudaLayer::describe, nb::arg("backward") = false, "the pass's plan as text");
}

} // namespace gnnjit::python
