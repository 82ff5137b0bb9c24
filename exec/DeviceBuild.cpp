#include "exec/DeviceBuild.h"

#include "exec/CubCall.h"
#include "exec/GraphKernels.h"
#include "graph/GraphMemory.h"
#include "runtime/CudaCheck.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gnnjit::exec {

namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();

/// Bits that hold every value up to `largest`.
int bitsFor(uint64_t largest) {
  int bits = 1;
  while (bits < 32 && (largest >> bits) != 0)
    ++bits;
  return bits;
}

template <typename T> T *typed(runtime::DeviceMemory &m) { return static_cast<T *>(m.data()); }

runtime::DeviceMemory words(uint64_t count) { return runtime::DeviceMemory(count * sizeof(uint32_t)); }

/// (key, value) pairs of 32-bit words sorted in place over two buffers of
/// each (no scratch copy of the pairs): buffers [current] hold the pairs.
struct SortedPairs {
  runtime::DeviceMemory keys[2], values[2];
  int current = 0;

  /// Pairs in the given buffers (kept) and two fresh ones for the sort.
  SortedPairs(runtime::DeviceMemory keysIn, runtime::DeviceMemory valuesIn, uint64_t count) {
    keys[0] = std::move(keysIn);
    values[0] = std::move(valuesIn);
    keys[1] = words(count);
    values[1] = words(count);
  }
  uint32_t *key() { return typed<uint32_t>(keys[current]); }
  uint32_t *value() { return typed<uint32_t>(values[current]); }
  /// The buffers not holding the pairs (free for other uses until the next sort).
  runtime::DeviceMemory &spareKeys() { return keys[1 - current]; }

  /// Stable sort by the low `bits` of the key, on `stream`.
  void sort(uint32_t count, int bits, cudaStream_t stream) {
    if (count == 0)
      return;
    uint32_t *const k[2] = {typed<uint32_t>(keys[0]), typed<uint32_t>(keys[1])};
    uint32_t *const v[2] = {typed<uint32_t>(values[0]), typed<uint32_t>(values[1])};
    runCub([&](void *temp, size_t &bytes) { return build::sortPairs(temp, bytes, k, v, current, count, bits, stream); },
           "sorting the edges (cub::DeviceRadixSort)");
  }
};

void sortKeys(const uint32_t *keysIn, uint32_t *keysOut, uint32_t count, cudaStream_t stream) {
  if (count == 0)
    return;
  runCub([&](void *temp, size_t &bytes) { return build::sortKeys(temp, bytes, keysIn, keysOut, count, stream); },
         "sorting the degrees (cub::DeviceRadixSort)");
}

build::LoopMode loopMode(graph::SelfLoops loops) {
  switch (loops) {
  case graph::SelfLoops::Keep:
    return build::kKeep;
  case graph::SelfLoops::Remove:
    return build::kRemove;
  case graph::SelfLoops::AddMissing:
    return build::kAddMissing;
  case graph::SelfLoops::Replace:
    return build::kReplace;
  case graph::SelfLoops::AddRemaining:
    return build::kAddRemaining;
  }
  throwInternalError("unknown self-loop mode");
}

/// The index type a build on the device stores: as asked, or (Auto) from
/// the node count and `edges`, an upper bound of the stored edges.
graph::IndexType chooseIndex(graph::IndexChoice choice, int64_t numNodes, int64_t edges) {
  const int64_t limit = std::numeric_limits<int32_t>::max();
  switch (choice) {
  case graph::IndexChoice::Int64:
    return graph::IndexType::Int64;
  case graph::IndexChoice::Int32:
    if (numNodes > limit || edges > limit)
      throwUserError("int32 indices were asked for, but the graph has {} nodes and up to {} edges and int32 holds "
                     "values up to {}; use automatic or int64 indices",
                     numNodes, edges, limit);
    return graph::IndexType::Int32;
  case graph::IndexChoice::Auto:
    break;
  }
  return graph::autoIndexType(numNodes, edges);
}

void checkInput(const DeviceEdges &edges, const graph::BuildOptions &options) {
  if (options.symmetrize || options.removeDuplicates)
    throwUserError("a graph built on the GPU keeps its edges as given: symmetrize and removing duplicates are "
                   "done by the host build (graph::Graph::fromEdges)");
  if (edges.numNodes < 0)
    throwUserError("the graph declares {} nodes; a node count cannot be negative", edges.numNodes);
  if (edges.numEdges < 0)
    throwInternalError("{} edges", edges.numEdges);
  const int64_t limit = std::numeric_limits<uint32_t>::max() - 1;
  if (edges.numNodes >= limit || edges.numEdges + edges.numNodes >= limit)
    throwUserError("a graph built on the GPU takes fewer than {} nodes and edges together; this one has {} nodes "
                   "and {} edges (build it on the host: a CPU edge_index)",
                   limit, edges.numNodes, edges.numEdges);
  if (!std::isfinite(options.loopWeight))
    throwUserError("added self loops would weigh {}; a loop weight must be finite", options.loopWeight);
  if (edges.numEdges > 0 && (edges.src == nullptr || edges.dst == nullptr))
    throwInternalError("device edges without arrays");
}

/// Every array of the build, and the order it fills them in.
class Builder {
public:
  Builder(const DeviceEdges &edges, const graph::BuildOptions &options, cudaStream_t stream)
      : edges_(edges), stream_(stream), mode_(loopMode(options.selfLoops)),
        numEdges_(static_cast<uint32_t>(edges.numEdges)), numNodes_(static_cast<uint32_t>(edges.numNodes)),
        adds_(graph::addsSelfLoops(options.selfLoops)), count_(numEdges_ + (adds_ ? numNodes_ : 0)),
        weighted_(graph::buildsWeights(edges.weights != nullptr, options)), loopWeight_(options.loopWeight),
        index_(chooseIndex(options.index, edges.numNodes, static_cast<int64_t>(count_))) {}

  std::unique_ptr<DeviceGraph> run() {
    summary_ = runtime::DeviceMemory(sizeof(build::Summary));
    GNNJIT_CUDA_CHECK(cudaMemsetAsync(summary_.data(), 0, sizeof(build::Summary), stream_));
    // No bad edge yet: the first two counters start at ~0 (atomicMin).
    GNNJIT_CUDA_CHECK(cudaMemsetAsync(summary_.data(), 0xff, 2 * sizeof(unsigned long long), stream_));
    if (index_ == graph::IndexType::Int32)
      emit<int32_t>(markCandidates());
    else
      emit<int64_t>(markCandidates());
    build::Summary summary{};
    GNNJIT_CUDA_CHECK(
        cudaMemcpyAsync(&summary, summary_.data(), sizeof(summary), cudaMemcpyDeviceToHost, stream_));
    GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    checkEdges(summary);
    return std::make_unique<DeviceGraph>(finish(summary));
  }

private:
  /// Candidates sorted by (destination, source, candidate), the drop key
  /// last: rows (the keys) and order (the candidates).
  struct Candidates {
    runtime::DeviceMemory rows, order, addedRank, lastLoop;
  };

  build::Summary *summary() { return typed<build::Summary>(summary_); }

  Candidates markCandidates() {
    Candidates c;
    runtime::DeviceMemory srcKey = words(count_), dstKey = words(count_), candidate = words(count_);
    runtime::DeviceMemory hasLoop = words(mode_ == build::kAddMissing ? numNodes_ : 0);
    runtime::DeviceMemory kept = words(mode_ == build::kAddMissing ? numNodes_ : 0);
    if (mode_ == build::kAddRemaining && edges_.weights != nullptr)
      c.lastLoop = words(numNodes_);
    if (mode_ == build::kAddMissing)
      c.addedRank = words(numNodes_);
    for (runtime::DeviceMemory *zeroed : {&c.lastLoop, &hasLoop})
      if (zeroed->bytes() > 0)
        GNNJIT_CUDA_CHECK(cudaMemsetAsync(zeroed->data(), 0, zeroed->bytes(), stream_));
    const build::CandidateArrays a{typed<uint32_t>(srcKey),  typed<uint32_t>(dstKey),     typed<uint32_t>(candidate),
                                   typed<uint32_t>(hasLoop), typed<uint32_t>(c.lastLoop), typed<uint32_t>(kept),
                                   typed<uint32_t>(c.addedRank)};
    if (edges_.idType == graph::IndexType::Int32)
      GNNJIT_CUDA_CHECK(build::markInputEdges(static_cast<const int32_t *>(edges_.src),
                                              static_cast<const int32_t *>(edges_.dst), edges_.weights, numEdges_,
                                              numNodes_, mode_, a, summary(), stream_));
    else
      GNNJIT_CUDA_CHECK(build::markInputEdges(static_cast<const int64_t *>(edges_.src),
                                              static_cast<const int64_t *>(edges_.dst), edges_.weights, numEdges_,
                                              numNodes_, mode_, a, summary(), stream_));
    if (adds_) {
      GNNJIT_CUDA_CHECK(build::markAddedLoops(numEdges_, numNodes_, mode_, a, summary(), stream_));
      if (mode_ == build::kAddMissing && numNodes_ > 0) // numbers the loops it keeps, in node order
        runCub(
            [&](void *temp, size_t &bytes) {
              return build::exclusiveSum(temp, bytes, a.keptAdded, a.addedRank, numNodes_, stream_);
            },
            "numbering the added self loops (cub::DeviceScan)");
    }
    // Two stable sorts, by source and then by destination (the drop key
    // last), leave each row ordered by (source, candidate) as the host's
    // counting sorts do.
    const int bits = bitsFor(numNodes_);
    SortedPairs pairs(std::move(srcKey), std::move(candidate), count_);
    pairs.sort(count_, bits, stream_);
    runtime::DeviceMemory &destinations = pairs.spareKeys(); // the sources' keys are spent
    GNNJIT_CUDA_CHECK(build::gatherKeys(pairs.value(), a.dstKey, typed<uint32_t>(destinations), count_, stream_));
    pairs.current = 1 - pairs.current;
    std::swap(pairs.values[0], pairs.values[1]); // the gathered keys go with the values they were gathered by
    pairs.sort(count_, bits, stream_);
    c.rows = std::move(pairs.keys[pairs.current]);
    c.order = std::move(pairs.values[pairs.current]);
    return c;
  }

  template <typename Index> void emit(Candidates c) {
    const size_t indexBytes = sizeof(Index), offsetBytes = (static_cast<size_t>(numNodes_) + 1) * indexBytes;
    DeviceCsrArrays &in = built_.incoming, &out = built_.outgoing;
    for (DeviceCsrArrays *csr : {&in, &out}) {
      csr->offsets = runtime::DeviceMemory(offsetBytes);
      csr->indices = runtime::DeviceMemory(count_ * indexBytes);
      csr->edgeIds = runtime::DeviceMemory(count_ * indexBytes);
      if (weighted_)
        csr->weights = runtime::DeviceBuffer<float>(count_);
      if (count_ == 0) // no candidate writes the offsets
        GNNJIT_CUDA_CHECK(cudaMemsetAsync(csr->offsets.data(), 0, offsetBytes, stream_));
    }
    out.peerPositions = runtime::DeviceMemory(count_ * indexBytes);
    runtime::DeviceMemory transposeKey = words(count_), position = words(count_), loopsOf = words(numNodes_);
    if (loopsOf.bytes() > 0)
      GNNJIT_CUDA_CHECK(cudaMemsetAsync(loopsOf.data(), 0, loopsOf.bytes(), stream_));
    float *inWeights = weighted_ ? in.weights.data() : nullptr;
    const build::IncomingArgs incoming{typed<uint32_t>(c.rows),
                                       typed<uint32_t>(c.order),
                                       edges_.src,
                                       edges_.idType == graph::IndexType::Int64,
                                       typed<uint32_t>(c.addedRank),
                                       typed<uint32_t>(c.lastLoop),
                                       edges_.weights,
                                       loopWeight_,
                                       count_,
                                       numEdges_,
                                       numNodes_,
                                       in.offsets.data(),
                                       in.indices.data(),
                                       in.edgeIds.data(),
                                       inWeights,
                                       typed<uint32_t>(transposeKey),
                                       typed<uint32_t>(position),
                                       typed<uint32_t>(loopsOf)};
    GNNJIT_CUDA_CHECK(build::emitIncoming<Index>(incoming, summary(), stream_));
    c.order = {}; // what the transpose does not read goes back before its sort
    // The transpose: incoming positions stably sorted by source.
    SortedPairs pairs(std::move(transposeKey), std::move(position), count_);
    pairs.sort(count_, bitsFor(numNodes_), stream_);
    const build::OutgoingArgs outgoing{pairs.key(),        pairs.value(),      typed<uint32_t>(c.rows),
                                       count_,             numNodes_,          in.edgeIds.data(),
                                       inWeights,          out.offsets.data(), out.indices.data(),
                                       out.edgeIds.data(), out.peerPositions.data(),
                                       weighted_ ? out.weights.data() : nullptr};
    GNNJIT_CUDA_CHECK(build::emitOutgoing<Index>(outgoing, stream_));
    summarizeDegrees<Index>(typed<uint32_t>(loopsOf));
  }

  /// Degree sums and isolated nodes, then the percentiles from sorted degrees.
  template <typename Index> void summarizeDegrees(const uint32_t *loopsOf) {
    const auto *inOffsets = static_cast<const Index *>(built_.incoming.offsets.data());
    const auto *outOffsets = static_cast<const Index *>(built_.outgoing.offsets.data());
    runtime::DeviceMemory degrees = words(2 * static_cast<uint64_t>(numNodes_)),
                          sorted = words(2 * static_cast<uint64_t>(numNodes_));
    uint32_t *inDegree = typed<uint32_t>(degrees), *outDegree = inDegree + numNodes_;
    uint32_t *inSorted = typed<uint32_t>(sorted), *outSorted = inSorted + numNodes_;
    GNNJIT_CUDA_CHECK(
        build::degreeSums<Index>(inOffsets, outOffsets, loopsOf, numNodes_, inDegree, outDegree, summary(), stream_));
    sortKeys(inDegree, inSorted, numNodes_, stream_);
    sortKeys(outDegree, outSorted, numNodes_, stream_);
    GNNJIT_CUDA_CHECK(build::finishSummary<Index>(inSorted, outSorted, numNodes_, inOffsets, summary(), stream_));
  }

  /// The host build's error for the first bad edge, if any.
  void checkEdges(const build::Summary &s) const {
    const unsigned long long k = std::min(s.firstBadEdge, s.firstBadWeight);
    if (k == kNone)
      return;
    const size_t idBytes = edges_.idType == graph::IndexType::Int32 ? 4 : 8;
    int64_t ends[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      const auto *base = static_cast<const char *>(side == 0 ? edges_.src : edges_.dst) + k * idBytes;
      int64_t value = 0;
      GNNJIT_CUDA_CHECK(cudaMemcpy(&value, base, idBytes, cudaMemcpyDeviceToHost));
      ends[side] = idBytes == 4 ? static_cast<int64_t>(static_cast<int32_t>(value)) : value;
    }
    const int64_t n = edges_.numNodes;
    if (s.firstBadEdge <= s.firstBadWeight)
      throwUserError("edge {} ({} -> {}) names node {}, but the graph has {} nodes (valid ids are 0..{})", k, ends[0],
                     ends[1], (ends[0] < 0 || ends[0] >= n) ? ends[0] : ends[1], n, n - 1);
    float w = 0;
    GNNJIT_CUDA_CHECK(cudaMemcpy(&w, edges_.weights + k, sizeof(float), cudaMemcpyDeviceToHost));
    throwUserError("edge {} ({} -> {}) has weight {}; edge weights must be finite", k, ends[0], ends[1], w);
  }

  DeviceBuilt finish(const build::Summary &s) {
    const int64_t nodes = edges_.numNodes, stored = static_cast<int64_t>(s.numEdges);
    built_.numNodes = nodes;
    built_.numEdges = stored;
    built_.numInputEdges = edges_.numEdges;
    built_.numEdgeIds = edges_.numEdges + (adds_ ? static_cast<int64_t>(s.addedEdges) : 0);
    built_.index = index_;
    built_.weighted = weighted_;
    graph::DegreeStats &st = built_.stats;
    st.nodes = nodes;
    st.edges = stored;
    st.selfLoops = static_cast<int64_t>(s.selfLoops);
    st.isolatedNodes = static_cast<int64_t>(s.isolatedNodes);
    st.avgEdgeSpan = stored ? static_cast<double>(static_cast<long double>(s.spanSum) / stored) : 0.0;
    st.in = summaryOf(s.inSquares, s.inRanked, nodes, stored);
    st.out = summaryOf(s.outSquares, s.outRanked, nodes, stored);
    return std::move(built_);
  }

  /// A degree distribution from its sums and ranked values (no histogram).
  static graph::DegreeSummary summaryOf(unsigned long long squares, const unsigned long long ranked[6], int64_t n,
                                        int64_t sum) {
    graph::DegreeSummary d;
    if (n == 0)
      return d;
    d.mean = static_cast<double>(static_cast<long double>(sum) / n);
    // n * sum(d^2) - (sum d)^2 is exact in 128 bits: the variance times n^2.
    __extension__ using Wide = __int128;
    const Wide spread = static_cast<Wide>(n) * squares - static_cast<Wide>(sum) * sum;
    d.std = static_cast<double>(std::sqrt(static_cast<long double>(spread) / n / n));
    d.p50 = static_cast<int64_t>(ranked[0]);
    d.p90 = static_cast<int64_t>(ranked[1]);
    d.p99 = static_cast<int64_t>(ranked[2]);
    d.p999 = static_cast<int64_t>(ranked[3]);
    d.min = static_cast<int64_t>(ranked[4]);
    d.max = static_cast<int64_t>(ranked[5]);
    return d;
  }

  const DeviceEdges &edges_;
  cudaStream_t stream_;
  build::LoopMode mode_;
  uint32_t numEdges_, numNodes_;
  bool adds_;
  uint32_t count_; ///< candidates: the input edges, then one loop per node when loops are added
  bool weighted_;     ///< the graph stores weights (given, or made by loops of another weight)
  float loopWeight_; ///< graph::BuildOptions::loopWeight
  graph::IndexType index_;
  runtime::DeviceMemory summary_;
  DeviceBuilt built_;
};

} // namespace

std::unique_ptr<DeviceGraph> buildOnDevice(const DeviceEdges &edges, const graph::BuildOptions &options,
                                           cudaStream_t stream) {
  checkInput(edges, options);
  return Builder(edges, options, stream).run();
}

} // namespace gnnjit::exec
