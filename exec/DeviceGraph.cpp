#include "exec/DeviceGraph.h"

#include "exec/DeviceDerived.h"
#include "exec/SplitForecast.h"
#include "runtime/CudaCheck.h"
#include "support/Error.h"

#include <algorithm>
#include <span>

namespace gnnjit::exec {

namespace {

template <typename T> runtime::DeviceMemory uploadBytes(const std::vector<T> &host) {
  runtime::DeviceMemory memory(host.size() * sizeof(T));
  if (!host.empty())
    memory.copyFromHost(host.data(), host.size() * sizeof(T));
  return memory;
}

const graph::Csr &hostCsr(const graph::Graph &g, Direction d) {
  return d == Direction::In ? g.incoming() : g.outgoing();
}

template <typename T> std::vector<T> downloadBytes(const runtime::DeviceMemory &memory, int64_t count) {
  std::vector<T> host(static_cast<size_t>(count));
  if (count > 0)
    memory.copyToHost(host.data(), host.size() * sizeof(T));
  return host;
}

/// The host CSR of a device CSR of `rows` rows and `edges` edges.
template <typename Index> graph::Csr downloadCsr(const DeviceCsrArrays &device, int64_t rows, int64_t edges) {
  graph::CsrArrays<Index> a;
  a.offsets = downloadBytes<Index>(device.offsets, rows + 1);
  a.indices = downloadBytes<Index>(device.indices, edges);
  a.edgeIds = downloadBytes<Index>(device.edgeIds, edges);
  std::vector<float> weights(device.weights.empty() ? 0 : static_cast<size_t>(edges));
  if (!weights.empty())
    GNNJIT_CUDA_CHECK(
        cudaMemcpy(weights.data(), device.weights.data(), weights.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return graph::Csr(std::move(a), std::move(weights));
}

void checkSplit(int64_t threshold, int64_t length) {
  if (threshold <= 0 || length <= 0)
    throwInternalError("heavy rows above {} edges in segments of {}", threshold, length);
}

} // namespace

DeviceGraph::DeviceGraph(const graph::Graph &graph) : host_(&graph) {
  shape_ = {graph.numNodes(), graph.numEdges(), graph.numInputEdges(), graph.numEdgeIds(), graph.indexType(),
            graph.hasWeights()};
}

DeviceGraph::DeviceGraph(DeviceBuilt built)
    : number_(built.number),
      shape_{built.numNodes, built.numEdges, built.numInputEdges, built.numEdgeIds, built.index, built.weighted},
      builtStats_(std::make_unique<graph::DegreeStats>(std::move(built.stats))) {
  csrs_.emplace(Direction::In, std::move(built.incoming));
  csrs_.emplace(Direction::Out, std::move(built.outgoing));
  for (auto &[key, split] : built.splits)
    segments_.emplace(key, std::move(split));
}

DeviceGraph::~DeviceGraph() = default;

const graph::Graph &DeviceGraph::host() const {
  if (host_ == nullptr)
    throwUserError("this graph was built on the GPU and has no host copy (DeviceGraph::download makes one)");
  return *host_;
}

const graph::DegreeStats &DeviceGraph::stats() const { return host_ ? host_->stats() : *builtStats_; }

graph::Graph DeviceGraph::download() const {
  if (host_ != nullptr)
    return graph::Graph::fromCsr(host_->numNodes(), host_->numInputEdges(), host_->numEdgeIds(), host_->incoming());
  const DeviceCsrArrays &in = csrs_.at(Direction::In);
  graph::Csr csr = shape_.index == graph::IndexType::Int32 ? downloadCsr<int32_t>(in, numNodes(), numEdges())
                                                           : downloadCsr<int64_t>(in, numNodes(), numEdges());
  return graph::Graph::fromCsr(numNodes(), numInputEdges(), numEdgeIds(), std::move(csr));
}

DeviceGraph::CsrOnDevice &DeviceGraph::upload(Direction direction) {
  if (auto it = csrs_.find(direction); it != csrs_.end())
    return it->second;
  const graph::Csr &csr = hostCsr(host(), direction);
  CsrOnDevice device;
  csr.visit([&](const auto &a) {
    device.offsets = uploadBytes(a.offsets);
    device.indices = uploadBytes(a.indices);
  });
  if (csr.hasWeights())
    device.weights = runtime::DeviceBuffer<float>::fromHost(csr.weights());
  return csrs_.emplace(direction, std::move(device)).first->second;
}

DeviceCsrView DeviceGraph::csr(Direction direction) {
  CsrOnDevice &device = upload(direction);
  DeviceCsrView view;
  view.rows = view.cols = numNodes();
  view.nnz = numEdges();
  view.index = indexType();
  view.offsets = device.offsets.data();
  view.indices = device.indices.data();
  return view;
}

const float *DeviceGraph::csrWeights(Direction direction) {
  CsrOnDevice &device = upload(direction);
  return device.weights.empty() ? nullptr : device.weights.data();
}

const void *DeviceGraph::edgeIds(Direction direction) {
  CsrOnDevice &device = upload(direction);
  if (device.edgeIds.bytes() == 0 && numEdges() > 0)
    hostCsr(host(), direction).visit([&](const auto &a) { device.edgeIds = uploadBytes(a.edgeIds); });
  return device.edgeIds.data();
}

const void *DeviceGraph::peerPositions() {
  CsrOnDevice &device = upload(Direction::Out);
  if (device.peerPositions.bytes() == 0 && numEdges() > 0)
    host().outgoing().visit([&](const auto &a) { device.peerPositions = uploadBytes(a.peerPositions); });
  return device.peerPositions.data();
}

const float *DeviceGraph::nodeQuantity(std::string_view name, cudaStream_t stream) {
  if (auto it = quantities_.find(name); it != quantities_.end())
    return it->second.data();
  if (host_ == nullptr)
    return quantities_.emplace(std::string(name), derivedQuantity(name, stream)).first->second.data();
  const graph::Graph &g = *host_;
  const int64_t n = g.numNodes();
  std::vector<float> values(static_cast<size_t>(n), 0.0f);
  if (name == dsl::graphQuantityName(dsl::GraphQuantity::InDegree)) {
    for (int64_t i = 0; i < n; ++i)
      values[static_cast<size_t>(i)] = static_cast<float>(g.incoming().degree(i));
  } else if (name == dsl::graphQuantityName(dsl::GraphQuantity::OutDegree)) {
    for (int64_t j = 0; j < n; ++j)
      values[static_cast<size_t>(j)] = static_cast<float>(g.outgoing().degree(j));
  } else if (name == dsl::graphQuantityName(dsl::GraphQuantity::WeightedInDegree)) {
    const graph::Csr &in = g.incoming();
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0; // the reference sums in double; so do we, once
      for (int64_t p = in.rowBegin(i); p < in.rowEnd(i); ++p)
        sum += in.hasWeights() ? in.weights()[static_cast<size_t>(p)] : 1.0;
      values[static_cast<size_t>(i)] = static_cast<float>(sum);
    }
  } else {
    throwInternalError("no per-node graph quantity named {}", name);
  }
  auto [it, inserted] = quantities_.emplace(std::string(name), runtime::DeviceBuffer<float>::fromHost(values));
  return it->second.data();
}

runtime::DeviceBuffer<float> DeviceGraph::derivedQuantity(std::string_view name, cudaStream_t stream) const {
  const int64_t n = numNodes();
  if (name == dsl::graphQuantityName(dsl::GraphQuantity::InDegree))
    return degreesOnDevice(csrs_.at(Direction::In), indexType(), n, false, stream);
  if (name == dsl::graphQuantityName(dsl::GraphQuantity::OutDegree))
    return degreesOnDevice(csrs_.at(Direction::Out), indexType(), n, false, stream);
  if (name == dsl::graphQuantityName(dsl::GraphQuantity::WeightedInDegree))
    return degreesOnDevice(csrs_.at(Direction::In), indexType(), n, true, stream);
  throwInternalError("no per-node graph quantity named {}", name);
}

const HeavySegments &DeviceGraph::segments(Direction direction, int64_t threshold, int64_t length,
                                           cudaStream_t stream) {
  const auto key = std::make_tuple(direction, threshold, length);
  if (auto it = segments_.find(key); it != segments_.end())
    return it->second;
  checkSplit(threshold, length);
  if (host_ == nullptr) {
    prepareSegments({key}, stream);
    return segments_.at(key);
  }
  const graph::Csr &csr = hostCsr(*host_, direction);
  std::vector<int64_t> segRows, segBegins, segHeavy, heavyRows, heavyFirst{0};
  for (int64_t row = 0; row < csr.numRows(); ++row) {
    const int64_t begin = csr.rowBegin(row), end = csr.rowEnd(row);
    if (end - begin <= threshold)
      continue;
    heavyRows.push_back(row);
    for (int64_t p = begin; p < end; p += length) {
      segRows.push_back(row);
      segBegins.push_back(p);
      segHeavy.push_back(static_cast<int64_t>(heavyRows.size()) - 1);
    }
    heavyFirst.push_back(static_cast<int64_t>(segBegins.size()));
  }
  HeavySegments s;
  s.numSegments = static_cast<int64_t>(segBegins.size());
  s.numHeavyRows = static_cast<int64_t>(heavyRows.size());
  auto indexBytes = [&](const std::vector<int64_t> &v) {
    if (indexType() == graph::IndexType::Int64)
      return uploadBytes(v);
    return uploadBytes(std::vector<int32_t>(v.begin(), v.end()));
  };
  s.segmentRows = indexBytes(segRows);
  s.heavyRows = indexBytes(heavyRows);
  s.segmentBegins = runtime::DeviceBuffer<int64_t>::fromHost(segBegins);
  s.heavyFirstSegment = runtime::DeviceBuffer<int64_t>::fromHost(heavyFirst);
  s.segmentHeavy = runtime::DeviceBuffer<int64_t>::fromHost(segHeavy);
  return segments_.emplace(key, std::move(s)).first->second;
}

void DeviceGraph::prepareSegments(const std::vector<SegmentKey> &keys, cudaStream_t stream) {
  if (host_ != nullptr) // a host graph makes them on the host when first used: no synchronisation to save
    return;
  // Keys this graph was not asked for before: checked, and noted for the
  // next builds' forecast once (every pass asks again; a note is per graph).
  std::vector<SegmentKey> firstAsked;
  for (const SegmentKey &key : keys)
    if (std::find(asked_.begin(), asked_.end(), key) == asked_.end() &&
        std::find(firstAsked.begin(), firstAsked.end(), key) == firstAsked.end()) {
      checkSplit(std::get<1>(key), std::get<2>(key));
      firstAsked.push_back(key);
    }
  if (!firstAsked.empty()) {
    split_forecast::noteAsked(number_, firstAsked);
    asked_.insert(asked_.end(), firstAsked.begin(), firstAsked.end());
  }
  std::vector<SegmentKey> missing;
  for (const SegmentKey &key : keys)
    if (!segments_.contains(key) && std::find(missing.begin(), missing.end(), key) == missing.end())
      missing.push_back(key);
  if (missing.empty())
    return;
  std::vector<SegmentRequest> requests;
  for (const auto &[direction, threshold, length] : missing)
    requests.push_back({&csrs_.at(direction), threshold, length});
  std::vector<HeavySegments> made = segmentsOnDevice(requests, indexType(), numNodes(), stream);
  for (size_t k = 0; k < missing.size(); ++k)
    segments_.emplace(missing[k], std::move(made[k]));
}

CusparseSpmm &DeviceGraph::cusparse(Direction direction, const std::string &key,
                                    const std::function<void(float *)> &fill) {
  const auto id = std::make_pair(direction, key);
  if (auto it = cusparse_.find(id); it != cusparse_.end())
    return *it->second.spmm;
  CusparseEntry entry;
  entry.values = runtime::DeviceBuffer<float>(static_cast<size_t>(numEdges()));
  if (numEdges() > 0)
    fill(entry.values.data());
  entry.spmm = std::make_unique<CusparseSpmm>(csr(direction), entry.values.data());
  return *cusparse_.emplace(id, std::move(entry)).first->second.spmm;
}

size_t DeviceGraph::deviceBytes() const {
  size_t bytes = 0;
  for (const auto &[d, c] : csrs_)
    bytes += c.offsets.bytes() + c.indices.bytes() + c.weights.bytes() + c.edgeIds.bytes() + c.peerPositions.bytes();
  for (const auto &[n, q] : quantities_)
    bytes += q.bytes();
  for (const auto &[k, s] : segments_)
    bytes += s.segmentRows.bytes() + s.segmentBegins.bytes() + s.heavyRows.bytes() + s.heavyFirstSegment.bytes() +
             s.segmentHeavy.bytes();
  for (const auto &[k, c] : cusparse_)
    bytes += c.values.bytes() + c.spmm->workspaceBytes();
  return bytes;
}

} // namespace gnnjit::exec
