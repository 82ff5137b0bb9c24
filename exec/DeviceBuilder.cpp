#include "exec/DeviceBuilder.h"

#include "exec/CubCall.h"
#include "graph/GraphMemory.h"
#include "runtime/CudaCheck.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

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

/// (key, value) pairs, values 32-bit words, sorted in place over two buffers
/// of each (no scratch copy of the pairs): buffers [current] hold the pairs.
template <typename Key> struct SortedPairs {
  runtime::DeviceMemory keys[2], values[2];
  int current = 0;

  /// Pairs in the given buffers (kept) and two fresh ones for the sort.
  SortedPairs(runtime::DeviceMemory keysIn, runtime::DeviceMemory valuesIn, uint64_t count) {
    keys[0] = std::move(keysIn);
    values[0] = std::move(valuesIn);
    keys[1] = runtime::DeviceMemory(count * sizeof(Key));
    values[1] = words(count);
  }
  Key *key() { return typed<Key>(keys[current]); }
  uint32_t *value() { return typed<uint32_t>(values[current]); }
  /// Frees the buffers not holding the pairs (stream-ordered).
  void dropSpareKeys() { keys[1 - current] = {}; }
  void dropSpares() {
    dropSpareKeys();
    values[1 - current] = {};
  }
  void dropAll() {
    for (int k = 0; k < 2; ++k) {
      keys[k] = {};
      values[k] = {};
    }
  }

  /// Stable sort by the low `bits` of the key, on `stream`.
  void sort(uint32_t count, int bits, cudaStream_t stream) {
    if (count == 0)
      return;
    Key *const k[2] = {typed<Key>(keys[0]), typed<Key>(keys[1])};
    uint32_t *const v[2] = {typed<uint32_t>(values[0]), typed<uint32_t>(values[1])};
    runCub([&](void *temp, size_t &bytes) { return build::sortPairs(temp, bytes, k, v, current, count, bits, stream); },
           "sorting the edges (cub::DeviceRadixSort)");
  }
};

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

/// How many summary words the read-back starts with.
constexpr size_t kSummaryWords = sizeof(build::Summary) / sizeof(unsigned long long);
static_assert(sizeof(build::Summary) % sizeof(unsigned long long) == 0);

/// Bins per side of the degree histogram: one for each degree up to the
/// largest a percentile can be, and one for every larger degree. The
/// value v at nearest rank r has n - r + 1 nodes of degree v or more, and
/// their degrees sum to at most the candidates, so v <= count / (n - r +
/// 1); the largest rank is the 99.9th percentile's. So a graph of many
/// nodes needs few bins (about 1000 times its mean degree), and one of
/// few nodes no more than its candidates: at most 8 bytes a candidate,
/// less than the transpose's 12 freed before (no new peak).
uint32_t degreeBins(uint32_t count, uint32_t numNodes) {
  const uint64_t top = graph::nearestRank(numNodes, 999, 1000);
  return static_cast<uint32_t>(count / (numNodes - top + 1) + 2); // count + 2 < 2^32 (checkInput)
}

/// A degree distribution from its sums and ranked values (no histogram).
graph::DegreeSummary summaryOf(unsigned long long squares, const unsigned long long ranked[6], int64_t n,
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

} // namespace

/// Candidates sorted by key (destination, source, candidate), the drop
/// key last: pairs (key, candidate), and what the emission reads besides.
template <typename Key> struct DeviceBuilder::Candidates {
  SortedPairs<Key> pairs;
  runtime::DeviceMemory addedRank, lastLoop;
};

DeviceBuilder::DeviceBuilder(const DeviceEdges &edges, const graph::BuildOptions &options, cudaStream_t stream,
                             std::vector<SegmentKey> splits, uint64_t number)
    : edges_(edges), stream_(stream), mode_(loopMode(options.selfLoops)),
      numEdges_(static_cast<uint32_t>(edges.numEdges)), numNodes_(static_cast<uint32_t>(edges.numNodes)),
      adds_(graph::addsSelfLoops(options.selfLoops)), count_(numEdges_ + (adds_ ? numNodes_ : 0)),
      weighted_(graph::buildsWeights(edges.weights != nullptr, options)), loopWeight_(options.loopWeight),
      index_(chooseIndex(options.index, edges.numNodes, static_cast<int64_t>(count_))),
      srcBits_(bitsFor(numNodes_ == 0 ? 0 : numNodes_ - 1)),
      rowBits_(mode_ == build::kKeep ? srcBits_ : bitsFor(numNodes_)), splits_(std::move(splits)) {
  built_.number = number;
}

build::Summary *DeviceBuilder::summary() { return typed<build::Summary>(summary_); }

/// Where the forecast splits' totals go: after the summary.
unsigned long long *DeviceBuilder::splitTotals() { return typed<unsigned long long>(summary_) + kSummaryWords; }

size_t DeviceBuilder::readBackBytes() const {
  return sizeof(build::Summary) + 2 * splits_.size() * sizeof(unsigned long long);
}

void DeviceBuilder::enqueue() {
  // The summary, then two totals per forecast split: one copy reads all back.
  summary_ = runtime::DeviceMemory(readBackBytes());
  GNNJIT_CUDA_CHECK(cudaMemsetAsync(summary_.data(), 0, sizeof(build::Summary), stream_));
  emitGraph();
  starts_ = countSegmentsOnDevice(splitRequests(), index_, edges_.numNodes, splitTotals(), stream_);
}

void DeviceBuilder::enqueueReadBack(void *host) {
  GNNJIT_CUDA_CHECK(cudaMemcpyAsync(host, summary_.data(), summary_.bytes(), cudaMemcpyDeviceToHost, stream_));
}

std::unique_ptr<DeviceGraph> DeviceBuilder::finish(const void *readBack) {
  // Copied out first, as the build did before its steps were split: the
  // buffer (a thread's pinned one) is not read again once the allocations
  // below may call back into the caller.
  const auto *words = static_cast<const unsigned long long *>(readBack);
  const std::vector<unsigned long long> numbers(words, words + readBackBytes() / sizeof(unsigned long long));
  build::Summary summary{};
  std::memcpy(&summary, numbers.data(), sizeof(summary));
  checkEdges(summary);
  std::vector<HeavySegments> made = fillSegmentsOnDevice(splitRequests(), starts_, numbers.data() + kSummaryWords,
                                                         index_, edges_.numNodes, stream_);
  for (size_t k = 0; k < splits_.size(); ++k)
    built_.splits.emplace_back(splits_[k], std::move(made[k]));
  return std::make_unique<DeviceGraph>(finishBuilt(summary));
}

/// Both CSRs, sorting candidates under 32-bit keys where the row and the
/// source fit together.
void DeviceBuilder::emitGraph() {
  const bool key64 = srcBits_ + rowBits_ > 32;
  if (index_ == graph::IndexType::Int32)
    key64 ? emit<int32_t, uint64_t>() : emit<int32_t, uint32_t>();
  else
    key64 ? emit<int64_t, uint64_t>() : emit<int64_t, uint32_t>();
}

/// What makes each split from the built arrays.
std::vector<SegmentRequest> DeviceBuilder::splitRequests() {
  std::vector<SegmentRequest> requests;
  for (const auto &[direction, threshold, length] : splits_)
    requests.push_back({direction == Direction::In ? &built_.incoming : &built_.outgoing, threshold, length});
  return requests;
}

template <typename Key> DeviceBuilder::Candidates<Key> DeviceBuilder::markCandidates() {
  runtime::DeviceMemory key(static_cast<uint64_t>(count_) * sizeof(Key)), candidate = words(count_);
  runtime::DeviceMemory hasLoop = words(mode_ == build::kAddMissing ? numNodes_ : 0);
  runtime::DeviceMemory kept = words(mode_ == build::kAddMissing ? numNodes_ : 0);
  runtime::DeviceMemory lastLoop, addedRank;
  if (mode_ == build::kAddRemaining && edges_.weights != nullptr)
    lastLoop = words(numNodes_);
  if (mode_ == build::kAddMissing)
    addedRank = words(numNodes_);
  for (runtime::DeviceMemory *zeroed : {&lastLoop, &hasLoop})
    if (zeroed->bytes() > 0)
      GNNJIT_CUDA_CHECK(cudaMemsetAsync(zeroed->data(), 0, zeroed->bytes(), stream_));
  const build::CandidateArrays a{key.data(),
                                 sizeof(Key) == 8,
                                 srcBits_,
                                 typed<uint32_t>(candidate),
                                 typed<uint32_t>(hasLoop),
                                 typed<uint32_t>(lastLoop),
                                 typed<uint32_t>(kept),
                                 typed<uint32_t>(addedRank)};
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
  // The stable sort leaves each row ordered by (source, candidate), as the
  // host's counting sorts do.
  Candidates<Key> c{SortedPairs<Key>(std::move(key), std::move(candidate), count_), std::move(addedRank),
                    std::move(lastLoop)};
  c.pairs.sort(count_, srcBits_ + rowBits_, stream_);
  return c;
}

/// Offsets, indices, edge ids and weights of one direction (offsets zeroed
/// where no edge writes them).
template <typename Index> void DeviceBuilder::allocate(DeviceCsrArrays &csr) {
  const size_t indexBytes = sizeof(Index), offsetBytes = (static_cast<size_t>(numNodes_) + 1) * indexBytes;
  csr.offsets = runtime::DeviceMemory(offsetBytes);
  csr.indices = runtime::DeviceMemory(count_ * indexBytes);
  csr.edgeIds = runtime::DeviceMemory(count_ * indexBytes);
  if (weighted_)
    csr.weights = runtime::DeviceBuffer<float>(count_);
  if (count_ == 0) // no candidate writes the offsets
    GNNJIT_CUDA_CHECK(cudaMemsetAsync(csr.offsets.data(), 0, offsetBytes, stream_));
}

/// Both directions from the sorted candidates. Each buffer goes back as
/// soon as nothing later reads it, and the outgoing arrays are made only
/// after the transpose's sort, so the peak holds few edge-sized arrays.
template <typename Index, typename Key> void DeviceBuilder::emit() {
  Candidates<Key> c = markCandidates<Key>();
  DeviceCsrArrays &in = built_.incoming, &out = built_.outgoing;
  allocate<Index>(in);
  c.pairs.dropSpareKeys();
  runtime::DeviceMemory rows = std::move(c.pairs.values[1 - c.pairs.current]); // the sort's spare values
  runtime::DeviceMemory transposeKey = words(count_), position = words(count_);
  float *inWeights = weighted_ ? in.weights.data() : nullptr;
  const build::IncomingArgs incoming{c.pairs.key(),
                                     sizeof(Key) == 8,
                                     srcBits_,
                                     c.pairs.value(),
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
                                     typed<uint32_t>(rows),
                                     typed<uint32_t>(transposeKey),
                                     typed<uint32_t>(position)};
  GNNJIT_CUDA_CHECK(build::emitIncoming<Index>(incoming, summary(), stream_));
  // The transpose reads none of the candidates' arrays.
  c.pairs.dropAll();
  c.addedRank = {};
  c.lastLoop = {};
  // The transpose: incoming positions stably sorted by source.
  SortedPairs<uint32_t> pairs(std::move(transposeKey), std::move(position), count_);
  pairs.sort(count_, rowBits_, stream_); // sources, or the drop row where there is one
  pairs.dropSpares();
  allocate<Index>(out);
  out.peerPositions = runtime::DeviceMemory(count_ * sizeof(Index));
  const build::OutgoingArgs outgoing{pairs.key(),        pairs.value(),      typed<uint32_t>(rows),
                                     count_,             numNodes_,          in.edgeIds.data(),
                                     inWeights,          out.offsets.data(), out.indices.data(),
                                     out.edgeIds.data(), out.peerPositions.data(),
                                     weighted_ ? out.weights.data() : nullptr};
  GNNJIT_CUDA_CHECK(build::emitOutgoing<Index>(outgoing, stream_));
  summarizeDegrees<Index>();
}

/// Degree sums, isolated nodes and the largest degrees, then the
/// percentiles and min from a histogram of the degrees (exact: it has a
/// bin for every degree a percentile can be).
template <typename Index> void DeviceBuilder::summarizeDegrees() {
  const auto *inOffsets = static_cast<const Index *>(built_.incoming.offsets.data());
  const auto *inIndices = static_cast<const Index *>(built_.incoming.indices.data());
  const auto *outOffsets = static_cast<const Index *>(built_.outgoing.offsets.data());
  const uint32_t bins = numNodes_ == 0 ? 0 : degreeBins(count_, numNodes_);
  runtime::DeviceMemory counts = words(2 * static_cast<uint64_t>(bins));
  const build::DegreeHistogram histogram{typed<uint32_t>(counts), bins};
  if (bins > 0)
    GNNJIT_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), stream_));
  GNNJIT_CUDA_CHECK(build::degreeSums<Index>(inOffsets, inIndices, outOffsets, numNodes_, histogram, summary(),
                                             stream_));
  if (bins > 0)
    runCub(
        [&](void *temp, size_t &bytes) {
          return build::inclusiveSum(temp, bytes, histogram.counts, 2 * static_cast<uint64_t>(bins), stream_);
        },
        "summing the degree histogram (cub::DeviceScan)");
  GNNJIT_CUDA_CHECK(build::finishSummary<Index>(histogram, numNodes_, inOffsets, summary(), stream_));
}

/// The host build's error for the first bad edge, if any.
void DeviceBuilder::checkEdges(const build::Summary &s) const {
  // The summary holds each lowest bad edge's complement (0: none).
  const unsigned long long badEdge = s.badEdge != 0 ? ~s.badEdge : kNone;
  const unsigned long long badWeight = s.badWeight != 0 ? ~s.badWeight : kNone;
  const unsigned long long k = std::min(badEdge, badWeight);
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
  if (badEdge <= badWeight)
    throwUserError("edge {} ({} -> {}) names node {}, but the graph has {} nodes (valid ids are 0..{})", k, ends[0],
                   ends[1], (ends[0] < 0 || ends[0] >= n) ? ends[0] : ends[1], n, n - 1);
  float w = 0;
  GNNJIT_CUDA_CHECK(cudaMemcpy(&w, edges_.weights + k, sizeof(float), cudaMemcpyDeviceToHost));
  throwUserError("edge {} ({} -> {}) has weight {}; edge weights must be finite", k, ends[0], ends[1], w);
}

DeviceBuilt DeviceBuilder::finishBuilt(const build::Summary &s) {
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

} // namespace gnnjit::exec
