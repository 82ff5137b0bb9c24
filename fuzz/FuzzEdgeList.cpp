// SNAP / whitespace edge lists, plain or gzip (told by content).
#include "FuzzSupport.h"
#include "GraphChecks.h"

#include "graph/io/EdgeListText.h"

#include <algorithm>

using namespace gnnjit;
using namespace gnnjit::graph;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto file = fuzz::writeScratch("input.txt", fuzz::asText(data, size));
  const auto edges = fuzz::readOrRefuse("readEdgeListText", [&] { return readEdgeListText(file); });
  if (!edges)
    return 0;
  fuzz::checkEdgeList(*edges, "readEdgeListText");
  fuzz::require(edges->numEdges() > 0, "an edge list that reads has an edge");
  const int64_t maxId = std::max(*std::max_element(edges->src.begin(), edges->src.end()),
                                 *std::max_element(edges->dst.begin(), edges->dst.end()));
  fuzz::require(edges->numNodes == maxId + 1, "the node count is the largest id plus one");
  return 0;
}
