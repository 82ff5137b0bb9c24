#include "graph/io/IdList.h"

#include "graph/io/LineReader.h"

#include <fmt/format.h>

#include <array>
#include <limits>

namespace gnnjit::graph {

std::vector<int64_t> readIdList(const std::filesystem::path &file) {
  return readIdList(file, std::numeric_limits<int64_t>::max());
}

std::vector<int64_t> readIdList(const std::filesystem::path &file, int64_t limit) {
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
  }
  return ids;
}

} // namespace gnnjit::graph
