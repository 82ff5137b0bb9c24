#include "exec/CapturedBuild.h"

#include "exec/DeviceBuilder.h"
#include "runtime/CudaCheck.h"
#include "support/Error.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace gnnjit::exec::captured_build {

namespace {

/// What a captured build holds fixed.
struct Key {
  int device = 0;
  int64_t numNodes = 0, numEdges = 0;
  graph::IndexType idType = graph::IndexType::Int64;
  bool weights = false;
  graph::SelfLoops selfLoops = graph::SelfLoops::Keep;
  graph::IndexChoice index = graph::IndexChoice::Auto;
  uint32_t loopWeightBits = 0;
  std::vector<SegmentKey> splits;

  auto tie() const {
    return std::tie(device, numNodes, numEdges, idType, weights, selfLoops, index, loopWeightBits, splits);
  }
  bool operator==(const Key &other) const { return tie() == other.tie(); }
};

Key keyOf(const DeviceEdges &edges, const graph::BuildOptions &options, const std::vector<SegmentKey> &splits) {
  Key key;
  GNNJIT_CUDA_CHECK(cudaGetDevice(&key.device));
  key.numNodes = edges.numNodes;
  key.numEdges = edges.numEdges;
  key.idType = edges.idType;
  key.weights = edges.weights != nullptr;
  key.selfLoops = options.selfLoops;
  key.index = options.index;
  key.loopWeightBits = std::bit_cast<uint32_t>(options.loopWeight);
  key.splits = splits;
  return key;
}

int64_t candidates(const DeviceEdges &edges, const graph::BuildOptions &options) {
  return edges.numEdges + (graph::addsSelfLoops(options.selfLoops) ? edges.numNodes : 0);
}

/// A copy node of the captured graph: one side the graph's own memory
/// (fixed), the other the caller's (set before each launch).
struct CopyNode {
  cudaGraphNode_t node = nullptr;
  void *graphSide = nullptr;
  size_t bytes = 0;
};

/// Queues a device-to-device copy on the capturing `stream`: the node it became.
CopyNode captureCopy(void *dst, const void *src, size_t bytes, cudaStream_t stream, void *graphSide) {
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t *last = nullptr;
  size_t count = 0;
  GNNJIT_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &last, nullptr, &count));
  if (status != cudaStreamCaptureStatusActive || count != 1)
    throwInternalError("a captured copy left {} nodes to depend on", count);
  return {last[0], graphSide, bytes};
}

/// An array like `array` (DeviceMemory or DeviceBuffer<float>) of `bytes`,
/// from the installed allocator.
template <typename Array> Array freshLike(size_t bytes) {
  if constexpr (std::is_same_v<Array, runtime::DeviceMemory>)
    return runtime::DeviceMemory(bytes);
  else
    return Array(bytes / sizeof(float));
}

/// One captured build: its executable graph, the copy nodes a replay sets,
/// the sizes of the arrays it keeps, and its read-back buffer.
struct Captured {
  Key key;
  std::mutex mutex; ///< one replay at a time: the read-back buffer and the copy nodes are shared
  cudaStream_t captureStream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  void *host = nullptr; ///< pinned
  std::vector<CopyNode> inputs;  ///< source ids, destination ids, weights (as present)
  std::vector<CopyNode> results; ///< the kept arrays that are not empty, in DeviceBuilder::forEachResult's order
  std::vector<size_t> resultBytes; ///< every kept array's bytes, empty ones included

  Captured() = default;
  Captured(const Captured &) = delete;
  Captured &operator=(const Captured &) = delete;
  ~Captured() {
    // At exit the runtime may be gone: nothing to report to.
    if (exec != nullptr)
      (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr)
      (void)cudaGraphDestroy(graph);
    if (captureStream != nullptr)
      (void)cudaStreamDestroy(captureStream);
    if (host != nullptr)
      (void)cudaFreeHost(host);
    // Its graph memory back to the device (what no other held graph uses).
    if (exec != nullptr)
      (void)cudaDeviceGraphMemTrim(key.device);
  }

  /// Points the copy nodes at the caller's edges and `builder`'s arrays,
  /// which it first gives fresh memory of the captured sizes.
  void aim(const DeviceEdges &edges, DeviceBuilder &builder) {
    const void *sources[] = {edges.src, edges.dst, edges.weights};
    for (size_t k = 0; k < inputs.size(); ++k)
      GNNJIT_CUDA_CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec, inputs[k].node, inputs[k].graphSide, sources[k],
                                                           inputs[k].bytes, cudaMemcpyDeviceToDevice));
    size_t slot = 0, copy = 0;
    builder.forEachResult([&](auto &array) {
      const size_t bytes = resultBytes.at(slot++);
      if (bytes == 0)
        return;
      array = freshLike<std::decay_t<decltype(array)>>(bytes);
      const CopyNode &c = results.at(copy++);
      GNNJIT_CUDA_CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec, c.node, array.data(), c.graphSide, c.bytes,
                                                           cudaMemcpyDeviceToDevice));
    });
  }
};

struct State {
  std::mutex mutex;
  std::optional<Policy> policy;
  std::list<std::shared_ptr<Captured>> held; ///< most recently used first
  std::deque<Key> sightings, refused;
  Counts counts;
};

State &state() {
  static State s;
  return s;
}

Policy policyFromEnvironment() {
  const char *value = std::getenv("GNNJIT_CAPTURED_BUILD");
  const std::string_view v = value == nullptr ? "" : value;
  if (v == "0")
    return Policy::Never;
  if (v == "always")
    return Policy::Always;
  return Policy::OnRepeat;
}

/// Records `key` in a bounded list; whether it was there already.
bool sighted(std::deque<Key> &list, const Key &key, size_t bound) {
  const bool seen = std::find(list.begin(), list.end(), key) != list.end();
  if (!seen) {
    list.push_front(key);
    if (list.size() > bound)
      list.pop_back();
  }
  return seen;
}

/// Captures the build of `edges` (every array it keeps copied into fresh
/// memory of `builder`'s, through the installed allocator) without running
/// it: the graph to launch, and `builder` holding the arrays it fills.
std::shared_ptr<Captured> capture(const Key &key, const DeviceEdges &edges, const graph::BuildOptions &options,
                                  const std::vector<SegmentKey> &splits, uint64_t number,
                                  std::unique_ptr<DeviceBuilder> &builder) {
  auto c = std::make_shared<Captured>();
  c->key = key;
  GNNJIT_CUDA_CHECK(cudaStreamCreateWithFlags(&c->captureStream, cudaStreamNonBlocking));
  GNNJIT_CUDA_CHECK(cudaMallocHost(&c->host, DeviceBuilder::readBackBytes(splits.size())));
  cudaStream_t stream = c->captureStream;
  // Relaxed: the fresh arrays come from the installed allocator mid-capture,
  // which may call cudaMalloc.
  GNNJIT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  try {
    {
      const runtime::GraphAllocations scope(stream);
      const size_t idBytes = edges.idType == graph::IndexType::Int32 ? 4 : 8;
      const size_t edgeBytes = static_cast<size_t>(edges.numEdges) * idBytes;
      runtime::DeviceMemory src(edgeBytes), dst(edgeBytes);
      runtime::DeviceMemory weights(edges.weights ? static_cast<size_t>(edges.numEdges) * sizeof(float) : 0);
      DeviceEdges read = edges;
      read.src = src.data();
      read.dst = dst.data();
      c->inputs.push_back(captureCopy(src.data(), edges.src, edgeBytes, stream, src.data()));
      c->inputs.push_back(captureCopy(dst.data(), edges.dst, edgeBytes, stream, dst.data()));
      if (edges.weights != nullptr) {
        read.weights = static_cast<const float *>(weights.data());
        c->inputs.push_back(captureCopy(weights.data(), edges.weights, weights.bytes(), stream, weights.data()));
      }
      builder = std::make_unique<DeviceBuilder>(read, edges, options, stream, splits, number);
      builder->enqueue();
      builder->enqueueReadBack(c->host);
      builder->releaseSummary();
    } // the inputs' copies freed: the graph's free nodes
    // Each kept array copied out of graph memory into fresh memory, then freed in the graph.
    builder->forEachResult([&](auto &array) {
      const size_t bytes = array.bytes();
      c->resultBytes.push_back(bytes);
      if (bytes == 0)
        return;
      auto fresh = freshLike<std::decay_t<decltype(array)>>(bytes);
      c->results.push_back(captureCopy(fresh.data(), array.data(), bytes, stream, array.data()));
      array = std::move(fresh);
    });
    GNNJIT_CUDA_CHECK(cudaStreamEndCapture(stream, &c->graph));
  } catch (...) {
    cudaGraph_t abandoned = nullptr;
    (void)cudaStreamEndCapture(stream, &abandoned);
    if (abandoned != nullptr)
      (void)cudaGraphDestroy(abandoned);
    (void)cudaGetLastError();
    builder.reset(); // its graph allocations are forgotten (runtime::GraphAllocations)
    throw;
  }
  GNNJIT_CUDA_CHECK(cudaGraphInstantiate(&c->exec, c->graph, 0));
  return c;
}

/// The held build for `key`, moved to the front; or null.
std::shared_ptr<Captured> findHeld(State &s, const Key &key) {
  for (auto it = s.held.begin(); it != s.held.end(); ++it)
    if ((*it)->key == key) {
      s.held.splice(s.held.begin(), s.held, it);
      return s.held.front();
    }
  return nullptr;
}

void hold(State &s, std::shared_ptr<Captured> c) {
  s.held.push_front(std::move(c));
  while (s.held.size() > kHeld)
    s.held.pop_back();
}

/// Launches `c` on `stream` and finishes the build `builder` describes.
std::unique_ptr<DeviceGraph> launch(Captured &c, DeviceBuilder &builder, cudaStream_t stream) {
  GNNJIT_CUDA_CHECK(cudaGraphLaunch(c.exec, stream));
  // The build's one synchronisation, as a direct build's.
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  builder.moveTo(stream); // a captured builder's splits are queued on the caller's stream, not the capture's
  return builder.finish(c.host);
}

} // namespace

Policy policy() {
  State &s = state();
  const std::lock_guard lock(s.mutex);
  if (!s.policy)
    s.policy = policyFromEnvironment();
  return *s.policy;
}

void setPolicy(Policy policy) {
  State &s = state();
  const std::lock_guard lock(s.mutex);
  s.policy = policy;
}

std::unique_ptr<DeviceGraph> build(const DeviceEdges &edges, const graph::BuildOptions &options,
                                   cudaStream_t stream, const std::vector<SegmentKey> &splits, uint64_t number) {
  const Policy p = policy();
  const int64_t n = candidates(edges, options);
  if (p == Policy::Never || edges.numEdges == 0 || edges.numNodes == 0 || n > kMaxCandidates)
    return nullptr;
  const Key key = keyOf(edges, options, splits);
  State &s = state();
  std::shared_ptr<Captured> c;
  {
    const std::lock_guard lock(s.mutex);
    if (std::find(s.refused.begin(), s.refused.end(), key) != s.refused.end())
      return nullptr;
    c = findHeld(s, key);
    if (c == nullptr && p == Policy::OnRepeat && !sighted(s.sightings, key, kSightings))
      return nullptr; // a first sighting: built directly
  }
  if (c != nullptr) {
    const std::lock_guard replay(c->mutex);
    DeviceBuilder builder(edges, edges, options, stream, splits, number);
    c->aim(edges, builder);
    {
      const std::lock_guard lock(s.mutex);
      ++s.counts.replays;
    }
    return launch(*c, builder, stream);
  }
  std::unique_ptr<DeviceBuilder> builder;
  try {
    c = capture(key, edges, options, splits, number, builder);
  } catch (const std::exception &) {
    // Not capturable here (a driver without graph memory, say): built
    // directly from now on, as before.
    const std::lock_guard lock(s.mutex);
    ++s.counts.failures;
    sighted(s.refused, key, kSightings);
    return nullptr;
  }
  const std::lock_guard replay(c->mutex);
  {
    const std::lock_guard lock(s.mutex);
    ++s.counts.captures;
    hold(s, c);
  }
  return launch(*c, *builder, stream);
}

Counts counts() {
  State &s = state();
  const std::lock_guard lock(s.mutex);
  Counts c = s.counts;
  c.held = s.held.size();
  return c;
}

void clear() {
  State &s = state();
  std::list<std::shared_ptr<Captured>> dropped;
  {
    const std::lock_guard lock(s.mutex);
    dropped.swap(s.held);
    s.sightings.clear();
    s.refused.clear();
  }
}

} // namespace gnnjit::exec::captured_build
