// DIMACS shortest-path graphs (.gr), plain or gzip.
#include "FuzzSupport.h"
#include "GraphChecks.h"

#include "graph/io/Dimacs.h"

using namespace gnnjit;
using namespace gnnjit::graph;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto file = fuzz::writeScratch("input.gr", fuzz::asText(data, size));
  const auto edges = fuzz::readOrRefuse("readDimacsGraph", [&] { return readDimacsGraph(file); });
  if (!edges)
    return 0;
  fuzz::checkEdgeList(*edges, "readDimacsGraph");
  fuzz::require(edges->weight.size() == edges->src.size(), "every arc has a weight");
  return 0;
}
