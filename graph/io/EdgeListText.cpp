#include "graph/io/EdgeListText.h"

#include "graph/io/LineReader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace gnnjit::graph {

EdgeList readEdgeListText(const std::filesystem::path &file) {
  LineReader reader(file);
  EdgeList edges;
  std::array<std::string_view, 3> fields;
  size_t width = 0; // fields per line, fixed by the first edge
  int64_t firstEdgeLine = 0;
  int64_t maxId = -1;
  std::string_view line;
  while (reader.next(line)) {
    const int first = firstNonBlank(line);
    if (first < 0 || first == '#' || first == '%')
      continue;
    const size_t count = splitFields(line, fields, /*commas=*/true);
    if (width == 0) {
      if (count != 2 && count != 3)
        reader.fail("an edge 'SRC DST' or 'SRC DST WEIGHT'", line);
      width = count;
      firstEdgeLine = reader.lineNumber();
    } else if (count != width) {
      reader.fail(fmt::format("{} fields '{}' like every edge since line {}", width,
                              width == 2 ? "SRC DST" : "SRC DST WEIGHT", firstEdgeLine),
                  line);
    }
    const int64_t from = reader.parseInt(fields[0], "a source node id", 0, kMaxNodeCount - 1);
    const int64_t to = reader.parseInt(fields[1], "a destination node id", 0, kMaxNodeCount - 1);
    maxId = std::max({maxId, from, to});
    if (width == 3)
      edges.add(from, to, reader.parseFloat(fields[2], "an edge weight"));
    else
      edges.add(from, to);
  }
  if (width == 0)
    reader.failAtEnd("an edge 'SRC DST' or 'SRC DST WEIGHT'", "the file has no edges");
  edges.numNodes = maxId + 1;
  return edges;
}

} // namespace gnnjit::graph
