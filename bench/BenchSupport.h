// What the GPU benchmarks share: their graphs (self loops and duplicate
// edges removed, as ../shared/baselines did), optionally dumped as .npy edge
// indices for the PyG scripts, and the peak device memory of a first pass.
#pragma once

#include "graph/DegreeStats.h"
#include "graph/Graph.h"
#include "graph/GraphSource.h"
#include "graph/io/NpyEdgeIndex.h"
#include "runtime/CudaCheck.h"
#include "runtime/DeviceBuffer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

namespace gnnjit::bench {

/// The graph of `spec` as the baselines measured it, announced on stdout;
/// written as <npyDir>/<spec with :,= as _>.npy when npyDir is not empty.
inline graph::Graph loadBenchGraph(const std::string &spec, const std::string &npyDir) {
  graph::BuildOptions build;
  build.selfLoops = graph::SelfLoops::Remove;
  build.removeDuplicates = true;
  const auto start = std::chrono::steady_clock::now();
  graph::Graph g = graph::Graph::fromEdges(graph::loadGraphSource(spec).edges, build);
  g.setName(spec);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const graph::DegreeStats &st = g.stats();
  std::printf("\n%s: %lld nodes, %lld edges, in-degree mean %.1f max %lld, %s (built in %.1f s)\n", spec.c_str(),
              (long long)g.numNodes(), (long long)g.numEdges(), st.in.mean, (long long)st.in.max,
              std::string(graph::indexTypeName(g.indexType())).c_str(), seconds);
  if (!npyDir.empty()) {
    std::filesystem::create_directories(npyDir);
    std::string stem = spec;
    std::replace_if(
        stem.begin(), stem.end(), [](char c) { return c == ':' || c == ',' || c == '='; }, '_');
    graph::writeEdgeIndexNpy(g, std::filesystem::path(npyDir) / (stem + ".npy"));
  }
  return g;
}

/// Peak growth of device memory (bytes held by gnnjit buffers) over what was
/// live before one call of `fn`: called on fresh objects, everything a pass
/// needs beyond its inputs.
inline size_t peakGrowth(const std::function<void()> &fn) {
  GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
  runtime::resetDeviceMemoryPeak();
  const size_t before = runtime::deviceMemoryUse().live;
  fn();
  GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
  return runtime::deviceMemoryUse().peak - before;
}

} // namespace gnnjit::bench
