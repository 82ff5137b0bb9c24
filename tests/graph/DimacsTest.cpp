#include "graph/io/Dimacs.h"

#include "IoTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <tuple>
#include <vector>

using namespace gnnjit;
using namespace gnnjit::graph;
using gnnjit::test::TempDir;

namespace {

using WeightedEdge = std::tuple<int64_t, int64_t, float>;

std::vector<WeightedEdge> weightedEdgesOf(const EdgeList &e) {
  REQUIRE(e.weight.size() == e.src.size());
  std::vector<WeightedEdge> out;
  for (int64_t k = 0; k < e.numEdges(); ++k)
    out.emplace_back(e.src[k], e.dst[k], e.weight[k]);
  return out;
}

const std::string kGraph = "c 9th DIMACS challenge style\n"
                           "c\n"
                           "p sp 4 3\n"
                           "a 1 2 7\n"
                           "\n"
                           "a 2 3 1\n"
                           "c a comment between arcs\n"
                           "a 4 1 100\n";
const std::vector<WeightedEdge> kEdges{{0, 1, 7.0f}, {1, 2, 1.0f}, {3, 0, 100.0f}};

} // namespace

TEST_CASE("DIMACS: arcs become 0-based weighted edges") {
  TempDir dir;
  const EdgeList e = readDimacsGraph(dir.write("g.gr", kGraph));
  CHECK(e.numNodes == 4);
  CHECK(weightedEdgesOf(e) == kEdges);
}

TEST_CASE("DIMACS: gzip, CRLF and no final newline") {
  TempDir dir;
  CHECK(weightedEdgesOf(readDimacsGraph(test::writeGz(dir.path() / "g.gr.gz", kGraph))) == kEdges);
  CHECK(weightedEdgesOf(readDimacsGraph(dir.write("crlf.gr", test::withCrlf(kGraph)))) == kEdges);
  std::string noNewline = kGraph;
  noNewline.pop_back();
  CHECK(weightedEdgesOf(readDimacsGraph(dir.write("nonl.gr", noNewline))) == kEdges);
}

TEST_CASE("DIMACS: a graph without arcs") {
  TempDir dir;
  const EdgeList e = readDimacsGraph(dir.write("g.gr", "p sp 5 0\n"));
  CHECK(e.numNodes == 5);
  CHECK(e.numEdges() == 0);
}

TEST_CASE("DIMACS: the p line is required, once, before the arcs") {
  TempDir dir;
  const auto missing = dir.write("missing.gr", "c no problem line\na 1 2 3\n");
  CHECK_USER_ERROR(readDimacsGraph(missing), missing.string() + ":2:",
                   "expected a problem line 'p sp NODES ARCS' before the first arc", "found 'a 1 2 3'");

  const auto onlyComments = dir.write("comments.gr", "c nothing\nc here\n");
  CHECK_USER_ERROR(readDimacsGraph(onlyComments), onlyComments.string() + ":3:",
                   "expected a problem line 'p sp NODES ARCS'", "found end of file");

  const auto empty = dir.write("empty.gr", "");
  CHECK_USER_ERROR(readDimacsGraph(empty), empty.string() + ":1:", "expected a problem line", "end of file");

  const auto repeated = dir.write("repeated.gr", "p sp 3 1\na 1 2 1\np sp 3 1\n");
  CHECK_USER_ERROR(readDimacsGraph(repeated), repeated.string() + ":3:", "expected one problem line only",
                   "the first is line 1", "found 'p sp 3 1'");

  const auto wrongKind = dir.write("max.gr", "p max 3 1\n");
  CHECK_USER_ERROR(readDimacsGraph(wrongKind), wrongKind.string() + ":1:", "expected a problem line 'p sp NODES ARCS'",
                   "found 'p max 3 1'");
}

TEST_CASE("DIMACS: the arc count must match the p line") {
  TempDir dir;
  const auto few = dir.write("few.gr", "p sp 3 3\na 1 2 1\na 2 3 1\n");
  CHECK_USER_ERROR(readDimacsGraph(few), few.string() + ":4:", "expected arc 3 of the 3 that line 1 declares",
                   "the file ends after 2 of 3 arcs");

  const auto many = dir.write("many.gr", "p sp 3 1\na 1 2 1\na 2 3 1\n");
  CHECK_USER_ERROR(readDimacsGraph(many), many.string() + ":3:",
                   "expected the end of the file after the 1 arcs that line 1 declares", "found 'a 2 3 1'");
}

TEST_CASE("DIMACS: malformed arcs") {
  TempDir dir;
  const auto zero = dir.write("zero.gr", "p sp 3 1\na 0 2 1\n");
  CHECK_USER_ERROR(readDimacsGraph(zero), zero.string() + ":2:", "expected a node id (an integer from 1 to 3)",
                   "found '0'");
  const auto past = dir.write("past.gr", "p sp 3 1\na 1 4 1\n");
  CHECK_USER_ERROR(readDimacsGraph(past), past.string() + ":2:", "expected a node id (an integer from 1 to 3)",
                   "found '4'");
  const auto weight = dir.write("weight.gr", "p sp 3 1\na 1 2 1.5\n");
  CHECK_USER_ERROR(readDimacsGraph(weight), weight.string() + ":2:", "expected an integer arc weight", "found '1.5'");
  const auto fields = dir.write("fields.gr", "p sp 3 1\na 1 2\n");
  CHECK_USER_ERROR(readDimacsGraph(fields), fields.string() + ":2:", "expected an arc 'a FROM TO WEIGHT'",
                   "found 'a 1 2'");
  const auto unknown = dir.write("unknown.gr", "p sp 3 1\ne 1 2\n");
  CHECK_USER_ERROR(readDimacsGraph(unknown), unknown.string() + ":2:", "expected a comment 'c ...'", "found 'e 1 2'");
  const auto lying = dir.write("lying.gr", "p sp 3 1000000000000000\na 1 2 1\n");
  CHECK_USER_ERROR(readDimacsGraph(lying), lying.string() + ":1:", "that the file can hold");
}
