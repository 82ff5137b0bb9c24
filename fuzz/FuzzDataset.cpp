// Dataset folders: the input is cut at kPartSeparator into graph.mtx,
// features.mtx, labels.txt, train.txt, val.txt and test.txt, in that order;
// an empty or missing part is a missing file.
#include "FuzzSupport.h"
#include "GraphChecks.h"

#include "graph/io/Dataset.h"

#include <array>
#include <string>

using namespace gnnjit;
using namespace gnnjit::graph;

namespace {

const std::array<std::string, 6> kParts = {"graph.mtx", "features.mtx", "labels.txt",
                                           "train.txt", "val.txt",      "test.txt"};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto parts = fuzz::splitParts(fuzz::asText(data, size), kParts.size());
  for (size_t k = 0; k < kParts.size(); ++k)
    fuzz::writeOrRemoveScratch(kParts[k], k < parts.size() ? parts[k] : std::string_view());

  const auto d = fuzz::readOrRefuse("loadDatasetFolder", [&] { return loadDatasetFolder(fuzz::scratchFolder()); });
  if (!d)
    return 0;
  const int64_t nodes = d->edges.numNodes;
  fuzz::checkEdgeList(d->edges, "loadDatasetFolder");
  if (d->features) {
    fuzz::require(d->features->rows == nodes, "one feature row per node");
    fuzz::require(d->features->values.size() ==
                      static_cast<size_t>(d->features->rows) * static_cast<size_t>(d->features->cols),
                  "rows x cols feature values");
  }
  fuzz::require(d->labels.empty() || static_cast<int64_t>(d->labels.size()) == nodes, "one label per node");
  for (const auto *split : {&d->train, &d->val, &d->test})
    fuzz::checkIds(*split, nodes - 1, true, "loadDatasetFolder (a split)");
  return 0;
}
