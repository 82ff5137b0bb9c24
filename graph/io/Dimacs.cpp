#include "graph/io/Dimacs.h"

#include "graph/io/LineReader.h"

#include <fmt/format.h>

#include <array>
#include <limits>

namespace gnnjit::graph {

namespace {

constexpr std::string_view kProblemForm = "a problem line 'p sp NODES ARCS'";
constexpr std::string_view kArcForm = "an arc 'a FROM TO WEIGHT'";

} // namespace

EdgeList readDimacsGraph(const std::filesystem::path &file) {
  LineReader reader(file);
  EdgeList edges;
  int64_t problemLine = 0; // 0 until the p line is read
  int64_t arcs = 0;
  int64_t done = 0;
  std::array<std::string_view, 4> fields;
  std::string_view line;
  while (reader.next(line)) {
    const int first = firstNonBlank(line);
    if (first < 0 || first == 'c')
      continue;
    const size_t count = splitFields(line, fields, false);
    if (fields[0] == "a") {
      if (problemLine == 0)
        reader.fail(fmt::format("{} before the first arc", kProblemForm), line);
      if (done == arcs)
        reader.fail(fmt::format("the end of the file after the {} arcs that line {} declares", arcs, problemLine),
                    line);
      if (count != 4)
        reader.fail(kArcForm, line);
      const int64_t from = reader.parseInt(fields[1], "a node id", 1, edges.numNodes);
      const int64_t to = reader.parseInt(fields[2], "a node id", 1, edges.numNodes);
      const int64_t weight = reader.parseInt(fields[3], "an integer arc weight", std::numeric_limits<int64_t>::min(),
                                             std::numeric_limits<int64_t>::max());
      edges.add(from - 1, to - 1, static_cast<float>(weight));
      ++done;
    } else if (fields[0] == "p") {
      if (problemLine != 0)
        reader.fail(fmt::format("one problem line only (the first is line {})", problemLine), line);
      if (count != 4 || fields[1] != "sp")
        reader.fail(kProblemForm, line);
      edges.numNodes = reader.parseInt(fields[2], "a node count", 0, kMaxNodeCount);
      arcs = reader.parseInt(fields[3], "an arc count", 0, std::numeric_limits<int64_t>::max());
      problemLine = reader.lineNumber();
      const size_t reserve = reader.checkDeclaredCount(static_cast<uint64_t>(arcs), 8, "arcs", line); // "a 1 1 0\n"
      edges.reserve(reserve);
      edges.weight.reserve(reserve);
    } else {
      reader.fail(fmt::format("a comment 'c ...', {} or {}", kProblemForm, kArcForm), line);
    }
  }
  if (problemLine == 0)
    reader.failAtEnd(kProblemForm, "a DIMACS .gr file declares its size before the arcs");
  if (done < arcs)
    reader.failAtEnd(fmt::format("arc {} of the {} that line {} declares", done + 1, arcs, problemLine),
                     fmt::format("the file ends after {} of {} arcs; is it truncated?", done, arcs));
  return edges;
}

} // namespace gnnjit::graph
