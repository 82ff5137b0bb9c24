#include "GraphChecks.h"

#include "FuzzSupport.h"

#include "graph/Graph.h"
#include "graph/io/LineReader.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gnnjit::fuzz {

namespace {

void checkBuilds(const graph::EdgeList &edges, const graph::BuildOptions &options, std::string_view reader,
                 std::string_view how) {
  // A graph a reader accepted must build: UserError here is a finding too.
  try {
    const graph::Graph built = graph::Graph::fromEdges(edges, options);
    require(built.numNodes() == edges.numNodes, "Graph::fromEdges keeps the node count");
    require(built.numInputEdges() == edges.numEdges(), "Graph::fromEdges keeps every input edge id");
    require(built.hasWeights() == edges.hasWeights(), "Graph::fromEdges keeps the weights");
  } catch (const std::exception &error) {
    finding("Graph::fromEdges ({}) refused what {} returned: {}", how, reader, error.what());
  }
}

} // namespace

void checkEdgeList(const graph::EdgeList &edges, std::string_view reader) {
  require(edges.numNodes >= 0 && edges.numNodes <= graph::kMaxNodeCount, "0 <= numNodes <= kMaxNodeCount");
  require(edges.src.size() == edges.dst.size(), "one destination per source");
  require(edges.weight.empty() || edges.weight.size() == edges.src.size(), "no weights or one per edge");
  for (size_t k = 0; k < edges.src.size(); ++k) {
    if (edges.src[k] < 0 || edges.src[k] >= edges.numNodes || edges.dst[k] < 0 || edges.dst[k] >= edges.numNodes)
      finding("{} returned edge {} ({} -> {}) in a graph of {} nodes", reader, k, edges.src[k], edges.dst[k],
              edges.numNodes);
  }
  for (float w : edges.weight)
    require(std::isfinite(w), "every edge weight is finite");
  if (edges.numNodes > kMaxBuiltNodes)
    return;
  checkBuilds(edges, {}, reader, "as given");
  graph::BuildOptions cleaned;
  cleaned.symmetrize = true;
  cleaned.removeDuplicates = true;
  cleaned.selfLoops = graph::SelfLoops::AddMissing;
  checkBuilds(edges, cleaned, reader, "symmetrized, deduplicated, with self loops");
}

void checkIds(std::span<const int64_t> ids, int64_t maxId, bool unique, std::string_view reader) {
  for (int64_t id : ids)
    if (id < 0 || id > maxId)
      finding("{} returned id {}, outside [0, {}]", reader, id, maxId);
  if (!unique)
    return;
  std::vector<int64_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  require(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "a split lists each id once");
}

} // namespace gnnjit::fuzz
