#include "graph/io/IdList.h"

#include "graph/io/LineReader.h"

#include <fmt/format.h>

#include <array>
#include <limits>

namespace gnnjit::graph {

std::vector<int64_t> readIdList(const std::filesystem::path &file) {
  return readIdList(file, std::numeric_limits<int64_t>::max());
}

namespace {

template <typename OnId> std::vector<int64_t> readIds(const std::filesystem::path &file, int64_t limit, OnId onId) {
  const bool bounded = limit != std::numeric_limits<int64_t>::max();
  const std::string what = bounded ? fmt::format("a node id below {}", limit) : std::string("an id");
  const int64_t max = bounded ? limit - 1 : limit;
  LineReader reader(file);
  std::vector<int64_t> ids;
  std::array<std::string_view, 1> fields;
  std::string_view line;
  while (reader.next(line)) {
    const int first = firstNonBlank(line);
    if (first < 0 || first == '#')
      continue;
    if (splitFields(line, fields, false) != 1)
      reader.fail("one non-negative integer per line", line);
    ids.push_back(reader.parseInt(fields[0], what, 0, max));
    onId(reader, ids.back());
  }
  return ids;
}

} // namespace

std::vector<int64_t> readIdList(const std::filesystem::path &file, int64_t limit) {
  return readIds(file, limit, [](const LineReader &, int64_t) {});
}

std::vector<int64_t> readIdSet(const std::filesystem::path &file, int64_t limit) {
  std::vector<bool> seen(static_cast<size_t>(limit), false);
  return readIds(file, limit, [&](const LineReader &reader, int64_t id) {
    if (seen[static_cast<size_t>(id)])
      reader.fail(fmt::format("each node id once (a split lists a node at most once), but node {} was listed before",
                              id),
                  std::to_string(id));
    seen[static_cast<size_t>(id)] = true;
  });
}

} // namespace gnnjit::graph
