#include "graph/Graph.h"

#include "graph/DegreeStats.h"
#include "graph/GraphMemory.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>

namespace gnnjit::graph {

std::string_view indexTypeName(IndexType type) { return type == IndexType::Int32 ? "int32" : "int64"; }

struct Graph::Lazy {
  std::once_flag outgoingOnce;
  Csr outgoing;
  std::once_flag statsOnce;
  std::unique_ptr<DegreeStats> stats;
};

namespace {

void validate(const EdgeList &edges, const BuildOptions &options) {
  if (!std::isfinite(options.loopWeight))
    throwUserError("added self loops would weigh {}; a loop weight must be finite", options.loopWeight);
  if (edges.numNodes < 0)
    throwUserError("the graph declares {} nodes; a node count cannot be negative", edges.numNodes);
  if (edges.src.size() != edges.dst.size())
    throwInternalError("edge list has {} sources but {} destinations", edges.src.size(), edges.dst.size());
  if (edges.hasWeights() && edges.weight.size() != edges.src.size())
    throwUserError("the graph has {} edges but {} edge weights; give one weight per edge or none",
                   edges.src.size(), edges.weight.size());
  const int64_t n = edges.numNodes;
  for (size_t k = 0; k < edges.src.size(); ++k) {
    const int64_t s = edges.src[k], d = edges.dst[k];
    if (s < 0 || s >= n || d < 0 || d >= n)
      throwUserError("edge {} ({} -> {}) names node {}, but the graph has {} nodes (valid ids are 0..{})", k, s,
                     d, (s < 0 || s >= n) ? s : d, n, n - 1);
    if (edges.hasWeights() && !std::isfinite(edges.weight[k]))
      throwUserError("edge {} ({} -> {}) has weight {}; edge weights must be finite", k, s, d, edges.weight[k]);
  }
}

/// The edges a CSR is built from: the input plus what cleaning adds. Index k
/// below numKept is an input edge (id inputId[k], or k when inputId is
/// empty); the rest are added edges, in the order their ids are given.
struct Candidates {
  std::vector<int64_t> src, dst, inputId;
  std::vector<float> weight;
  int64_t numInput = 0; ///< candidates that are input edges
};

Candidates gatherCandidates(const EdgeList &edges, const BuildOptions &options) {
  Candidates c;
  const bool weighted = buildsWeights(edges.hasWeights(), options);
  const bool dropLoops = dropsSelfLoops(options.selfLoops);
  // AddRemaining: the weight each node's added loop takes (its last own loop's).
  std::vector<float> loopWeight;
  if (edges.hasWeights() && options.selfLoops == SelfLoops::AddRemaining)
    loopWeight.assign(static_cast<size_t>(edges.numNodes), options.loopWeight);
  for (int64_t k = 0; k < edges.numEdges(); ++k) {
    if (dropLoops && edges.src[k] == edges.dst[k]) {
      if (!loopWeight.empty())
        loopWeight[static_cast<size_t>(edges.src[k])] = edges.weight[k];
      continue;
    }
    c.src.push_back(edges.src[k]);
    c.dst.push_back(edges.dst[k]);
    if (dropLoops)
      c.inputId.push_back(k);
    if (weighted)
      c.weight.push_back(edges.hasWeights() ? edges.weight[k] : 1.0f);
  }
  c.numInput = static_cast<int64_t>(c.src.size());
  if (options.symmetrize) {
    for (int64_t k = 0; k < c.numInput; ++k) {
      if (c.src[k] == c.dst[k])
        continue;
      c.src.push_back(c.dst[k]);
      c.dst.push_back(c.src[k]);
      if (weighted)
        c.weight.push_back(c.weight[k]);
    }
  }
  if (addsSelfLoops(options.selfLoops)) {
    for (int64_t i = 0; i < edges.numNodes; ++i) {
      c.src.push_back(i);
      c.dst.push_back(i);
      if (weighted)
        c.weight.push_back(loopWeight.empty() ? options.loopWeight : loopWeight[static_cast<size_t>(i)]);
    }
  }
  return c;
}

/// Candidate indices grouped by destination, each row ordered by (source,
/// candidate index); rowStart has numNodes + 1 entries and source[p] is the
/// source of the candidate at position p (so later passes read it in order).
struct SortedCandidates {
  std::vector<int64_t> rowStart;
  std::vector<int64_t> order;
  std::vector<int64_t> source;
};

SortedCandidates sortByDestination(const int64_t *src, const int64_t *dst, int64_t count, int64_t numNodes) {
  // Two stable counting sorts (by source, then by destination) leave each
  // row ordered by (source, candidate index) in linear time. The first
  // carries the destinations along so the second reads them in order.
  const size_t n = static_cast<size_t>(numNodes), m = static_cast<size_t>(count);
  const auto bucketStarts = [&](const int64_t *key) {
    std::vector<int64_t> start(n + 1, 0);
    for (size_t k = 0; k < m; ++k)
      ++start[static_cast<size_t>(key[k]) + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    return start;
  };
  const std::vector<int64_t> bySourceStart = bucketStarts(src);
  std::vector<int64_t> bySource(m), destOfBySource(m);
  {
    std::vector<int64_t> cursor(bySourceStart.begin(), bySourceStart.end() - 1);
    for (size_t k = 0; k < m; ++k) {
      const size_t p = static_cast<size_t>(cursor[static_cast<size_t>(src[k])]++);
      bySource[p] = static_cast<int64_t>(k);
      destOfBySource[p] = dst[k];
    }
  }
  SortedCandidates s;
  s.rowStart = bucketStarts(dst);
  s.order.resize(m);
  s.source.resize(m);
  std::vector<int64_t> cursor(s.rowStart.begin(), s.rowStart.end() - 1);
  for (size_t j = 0; j < n; ++j) {
    for (int64_t p = bySourceStart[j]; p < bySourceStart[j + 1]; ++p) {
      const size_t q = static_cast<size_t>(cursor[static_cast<size_t>(destOfBySource[static_cast<size_t>(p)])]++);
      s.order[q] = bySource[static_cast<size_t>(p)];
      s.source[q] = static_cast<int64_t>(j);
    }
  }
  return s;
}

/// Decides which sorted candidates become edges. Within a run of equal
/// (source, destination): input edges come first (lower candidate index);
/// with removeDuplicates only the first is kept, otherwise all input edges
/// are kept, and an added edge is kept only when the run has no input edge.
std::vector<bool> chooseKept(const SortedCandidates &sorted, int64_t numInput, bool removeDuplicates) {
  std::vector<bool> kept(sorted.order.size(), false);
  const size_t rows = sorted.rowStart.size() - 1;
  for (size_t i = 0; i < rows; ++i) {
    const int64_t end = sorted.rowStart[i + 1];
    for (int64_t runBegin = sorted.rowStart[i]; runBegin < end;) {
      const int64_t source = sorted.source[static_cast<size_t>(runBegin)];
      int64_t runEnd = runBegin + 1;
      while (runEnd < end && sorted.source[static_cast<size_t>(runEnd)] == source)
        ++runEnd;
      kept[static_cast<size_t>(runBegin)] = true; // input edge if the run has one
      if (!removeDuplicates)
        for (int64_t p = runBegin + 1; p < runEnd && sorted.order[static_cast<size_t>(p)] < numInput; ++p)
          kept[static_cast<size_t>(p)] = true;
      runBegin = runEnd;
    }
  }
  return kept;
}

IndexType chooseIndexType(IndexChoice choice, int64_t numNodes, int64_t numEdges) {
  const int64_t limit = std::numeric_limits<int32_t>::max();
  switch (choice) {
  case IndexChoice::Int64:
    return IndexType::Int64;
  case IndexChoice::Int32:
    if (numNodes > limit)
      throwUserError("int32 indices were asked for, but the graph has {} nodes and int32 holds ids up to {}; use "
                     "automatic or int64 indices",
                     numNodes, limit);
    if (numEdges > limit)
      throwUserError("int32 indices were asked for, but the graph has {} edges (after cleaning) and int32 holds "
                     "positions up to {}; use automatic or int64 indices",
                     numEdges, limit);
    return IndexType::Int32;
  case IndexChoice::Auto:
    break;
  }
  return autoIndexType(numNodes, numEdges);
}

template <typename Index>
Csr emitCsr(const SortedCandidates &sorted, const std::vector<bool> &kept, const Candidates *cand,
            const EdgeList &edges, int64_t numKept) {
  const std::vector<float> &weightIn = cand ? cand->weight : edges.weight;
  const int64_t numInput = cand ? cand->numInput : edges.numEdges();
  const int64_t numNodes = edges.numNodes;

  // Added edges are numbered after the input ids, in candidate order.
  std::vector<int64_t> addedId;
  if (cand && static_cast<int64_t>(cand->src.size()) > cand->numInput) {
    addedId.assign(cand->src.size() - static_cast<size_t>(cand->numInput), -1);
    for (size_t p = 0; p < kept.size(); ++p)
      if (kept[p] && sorted.order[p] >= numInput)
        addedId[static_cast<size_t>(sorted.order[p] - numInput)] = 0;
    int64_t next = edges.numEdges();
    for (int64_t &id : addedId)
      if (id == 0)
        id = next++;
  }

  CsrArrays<Index> a;
  a.offsets.resize(static_cast<size_t>(numNodes) + 1);
  a.indices.resize(static_cast<size_t>(numKept));
  a.edgeIds.resize(static_cast<size_t>(numKept));
  std::vector<float> weights(weightIn.empty() ? 0 : static_cast<size_t>(numKept));
  int64_t out = 0;
  for (int64_t i = 0; i < numNodes; ++i) {
    a.offsets[static_cast<size_t>(i)] = static_cast<Index>(out);
    for (int64_t p = sorted.rowStart[static_cast<size_t>(i)]; p < sorted.rowStart[static_cast<size_t>(i) + 1]; ++p) {
      if (!kept.empty() && !kept[static_cast<size_t>(p)])
        continue;
      const int64_t k = sorted.order[static_cast<size_t>(p)];
      int64_t id = k;
      if (k >= numInput)
        id = addedId[static_cast<size_t>(k - numInput)];
      else if (cand && !cand->inputId.empty())
        id = cand->inputId[static_cast<size_t>(k)];
      a.indices[static_cast<size_t>(out)] = static_cast<Index>(sorted.source[static_cast<size_t>(p)]);
      a.edgeIds[static_cast<size_t>(out)] = static_cast<Index>(id);
      if (!weights.empty())
        weights[static_cast<size_t>(out)] = weightIn[static_cast<size_t>(k)];
      ++out;
    }
  }
  a.offsets[static_cast<size_t>(numNodes)] = static_cast<Index>(out);
  return Csr(std::move(a), std::move(weights));
}

template <typename Index> Csr transposeArrays(const CsrArrays<Index> &in, const std::vector<float> &w, int64_t numCols) {
  const int64_t rows = static_cast<int64_t>(in.offsets.size()) - 1;
  const size_t edges = in.indices.size();
  CsrArrays<Index> out;
  out.offsets.assign(static_cast<size_t>(numCols) + 1, 0);
  for (Index c : in.indices)
    ++out.offsets[static_cast<size_t>(c) + 1];
  std::partial_sum(out.offsets.begin(), out.offsets.end(), out.offsets.begin());
  std::vector<Index> cursor(out.offsets.begin(), out.offsets.end() - 1);
  out.indices.resize(edges);
  out.edgeIds.resize(edges);
  out.peerPositions.resize(edges);
  std::vector<float> weights(w.empty() ? 0 : edges);
  for (int64_t r = 0; r < rows; ++r) {
    for (Index p = in.offsets[static_cast<size_t>(r)]; p < in.offsets[static_cast<size_t>(r) + 1]; ++p) {
      const size_t q = static_cast<size_t>(cursor[static_cast<size_t>(in.indices[static_cast<size_t>(p)])]++);
      out.indices[q] = static_cast<Index>(r);
      out.edgeIds[q] = in.edgeIds[static_cast<size_t>(p)];
      out.peerPositions[q] = p;
      if (!weights.empty())
        weights[q] = w[static_cast<size_t>(p)];
    }
  }
  return Csr(std::move(out), std::move(weights));
}

} // namespace

Csr transpose(const Csr &csr, int64_t numCols) {
  return csr.visit([&](const auto &a) { return transposeArrays(a, csr.weights(), numCols); });
}

Graph Graph::fromEdges(const EdgeList &edges, const BuildOptions &options) {
  validate(edges, options);
  // Fail before sorting (which allocates per node) when int32 cannot hold
  // the node ids; the edge count is known after cleaning.
  if (options.index == IndexChoice::Int32)
    (void)chooseIndexType(options.index, edges.numNodes, 0);
  requireHostMemory(buildMemory(edges, options),
                    fmt::format("Building the CSR of a graph of {} nodes and {} edges", edges.numNodes, edges.numEdges()),
                    "Is the node count the file declares right?");
  const bool needsCandidates = options.symmetrize || options.selfLoops != SelfLoops::Keep;
  std::optional<Candidates> cand;
  if (needsCandidates)
    cand = gatherCandidates(edges, options);
  const int64_t *src = cand ? cand->src.data() : edges.src.data();
  const int64_t *dst = cand ? cand->dst.data() : edges.dst.data();
  const int64_t count = cand ? static_cast<int64_t>(cand->src.size()) : edges.numEdges();
  const int64_t numInput = cand ? cand->numInput : count;

  const SortedCandidates sorted = sortByDestination(src, dst, count, edges.numNodes);
  // Without duplicates to drop or added edges to filter every candidate is
  // kept: skip a pass of random reads (empty `kept` means all).
  const bool keepAll = !options.removeDuplicates && numInput == count;
  const std::vector<bool> kept = keepAll ? std::vector<bool>() : chooseKept(sorted, numInput, options.removeDuplicates);
  const int64_t numKept = keepAll ? count : std::count(kept.begin(), kept.end(), true);

  const IndexType type = chooseIndexType(options.index, edges.numNodes, numKept);
  Csr incoming = type == IndexType::Int32
                     ? emitCsr<int32_t>(sorted, kept, cand ? &*cand : nullptr, edges, numKept)
                     : emitCsr<int64_t>(sorted, kept, cand ? &*cand : nullptr, edges, numKept);
  // Ids: the input's, then one per kept added edge (emitCsr numbers them so).
  int64_t added = 0;
  if (!keepAll)
    for (size_t p = 0; p < kept.size(); ++p)
      added += kept[p] && sorted.order[p] >= numInput ? 1 : 0;
  return Graph(edges.numNodes, edges.numEdges(), edges.numEdges() + added, std::move(incoming));
}

Graph Graph::fromCsr(int64_t numNodes, int64_t numInputEdges, int64_t numEdgeIds, Csr incoming) {
  if (incoming.numRows() != numNodes || incoming.numEdges() > numEdgeIds || numInputEdges > numEdgeIds)
    throwInternalError("a CSR of {} rows and {} edges for a graph of {} nodes, {} input edges and {} edge ids",
                       incoming.numRows(), incoming.numEdges(), numNodes, numInputEdges, numEdgeIds);
  return Graph(numNodes, numInputEdges, numEdgeIds, std::move(incoming));
}

Graph::Graph(int64_t numNodes, int64_t numInputEdges, int64_t numEdgeIds, Csr incoming)
    : numNodes_(numNodes), numInputEdges_(numInputEdges), numEdgeIds_(numEdgeIds), incoming_(std::move(incoming)),
      lazy_(std::make_unique<Lazy>()) {}

Graph::Graph(Graph &&) noexcept = default;
Graph &Graph::operator=(Graph &&) noexcept = default;
Graph::~Graph() = default;

const Csr &Graph::outgoing() const {
  std::call_once(lazy_->outgoingOnce, [this] {
    requireHostMemory(transposeMemory(*this), "Transposing the graph (for backward passes and out-degrees)", "");
    lazy_->outgoing = transpose(incoming_, numNodes_);
  });
  return lazy_->outgoing;
}

const DegreeStats &Graph::stats() const {
  std::call_once(lazy_->statsOnce, [this] {
    requireHostMemory(statsMemory(*this), "Computing the graph's degree statistics", "");
    lazy_->stats = std::make_unique<DegreeStats>(DegreeStats::compute(*this));
  });
  return *lazy_->stats;
}

} // namespace gnnjit::graph
