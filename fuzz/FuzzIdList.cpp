// Id lists (labels) and id sets (splits) under a few limits: 0, a small one,
// and the largest node count a graph may declare. A stricter read that
// succeeds must return what the looser one returns.
#include "FuzzSupport.h"
#include "GraphChecks.h"

#include "graph/io/IdList.h"
#include "graph/io/LineReader.h"

#include <limits>

using namespace gnnjit;
using namespace gnnjit::graph;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto file = fuzz::writeScratch("ids.txt", fuzz::asText(data, size));
  const auto all = fuzz::readOrRefuse("readIdList", [&] { return readIdList(file); });
  if (all)
    fuzz::checkIds(*all, std::numeric_limits<int64_t>::max(), false, "readIdList");

  for (const int64_t limit : {int64_t{0}, int64_t{1000}, kMaxNodeCount}) {
    const auto list = fuzz::readOrRefuse("readIdList(limit)", [&] { return readIdList(file, limit); });
    const auto set = fuzz::readOrRefuse("readIdSet", [&] { return readIdSet(file, limit); });
    if (list) {
      fuzz::checkIds(*list, limit - 1, false, "readIdList(limit)");
      fuzz::require(all && *all == *list, "readIdList(limit) returns what readIdList returns");
    }
    if (set) {
      fuzz::checkIds(*set, limit - 1, true, "readIdSet");
      fuzz::require(list && *list == *set, "readIdSet returns what readIdList(limit) returns");
    }
  }
  return 0;
}
