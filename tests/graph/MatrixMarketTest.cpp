#include "graph/io/MatrixMarket.h"

#include "IoTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <vector>

using namespace gnnjit;
using namespace gnnjit::graph;
using gnnjit::test::TempDir;

namespace {

using Edge = std::tuple<int64_t, int64_t>;
using WeightedEdge = std::tuple<int64_t, int64_t, float>;

std::vector<Edge> edgesOf(const EdgeList &e) {
  std::vector<Edge> out;
  for (int64_t k = 0; k < e.numEdges(); ++k)
    out.emplace_back(e.src[k], e.dst[k]);
  return out;
}

std::vector<WeightedEdge> weightedEdgesOf(const EdgeList &e) {
  REQUIRE(e.weight.size() == e.src.size());
  std::vector<WeightedEdge> out;
  for (int64_t k = 0; k < e.numEdges(); ++k)
    out.emplace_back(e.src[k], e.dst[k], e.weight[k]);
  return out;
}

const std::string kPattern = "%%MatrixMarket matrix coordinate pattern general\n"
                             "% a comment\n"
                             "%\n"
                             "3 3 4\n"
                             "1 2\n"
                             "2 3\n"
                             "\n"
                             "3 1\n"
                             "  2\t2  \n";

} // namespace

TEST_CASE("Matrix Market pattern graph: exact edges, comments and blank lines") {
  TempDir dir;
  const EdgeList e = readMatrixMarketGraph(dir.write("g.mtx", kPattern));
  CHECK(e.numNodes == 3);
  CHECK_FALSE(e.hasWeights());
  CHECK(edgesOf(e) == std::vector<Edge>{{0, 1}, {1, 2}, {2, 0}, {1, 1}});
}

TEST_CASE("Matrix Market CRLF, gzip and missing final newline read the same") {
  TempDir dir;
  const auto expected = edgesOf(readMatrixMarketGraph(dir.write("plain.mtx", kPattern)));
  CHECK(edgesOf(readMatrixMarketGraph(dir.write("crlf.mtx", test::withCrlf(kPattern)))) == expected);
  CHECK(edgesOf(readMatrixMarketGraph(test::writeGz(dir.path() / "g.mtx.gz", kPattern))) == expected);
  CHECK(edgesOf(readMatrixMarketGraph(test::writeGz(dir.path() / "crlf.mtx.gz", test::withCrlf(kPattern)))) ==
        expected);
  // A gzip file is told by its content, not its name.
  CHECK(edgesOf(readMatrixMarketGraph(test::writeGz(dir.path() / "named-plain.mtx", kPattern))) == expected);
  std::string noNewline = kPattern;
  noNewline.pop_back();
  CHECK(edgesOf(readMatrixMarketGraph(dir.write("nonl.mtx", noNewline))) == expected);
}

TEST_CASE("Matrix Market real and integer values become weights") {
  TempDir dir;
  const EdgeList real = readMatrixMarketGraph(dir.write("r.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                                                  "4 4 3\n"
                                                                  "1 2 0.5\n"
                                                                  "4 1 -2e-1\n"
                                                                  "2 4 +3\n"));
  CHECK(real.numNodes == 4);
  CHECK(weightedEdgesOf(real) == std::vector<WeightedEdge>{{0, 1, 0.5f}, {3, 0, -0.2f}, {1, 3, 3.0f}});

  const EdgeList integer = readMatrixMarketGraph(dir.write("i.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                                                                    "2 2 2\n"
                                                                    "1 2 7\n"
                                                                    "2 1 -4\n"));
  CHECK(weightedEdgesOf(integer) == std::vector<WeightedEdge>{{0, 1, 7.0f}, {1, 0, -4.0f}});
}

TEST_CASE("Matrix Market symmetric: the mirror edge follows each off-diagonal entry") {
  TempDir dir;
  const EdgeList e = readMatrixMarketGraph(dir.write("s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                                                               "3 3 3\n"
                                                               "2 1 1.5\n"
                                                               "3 3 2\n"
                                                               "3 2 4\n"));
  CHECK(e.numNodes == 3);
  CHECK(weightedEdgesOf(e) ==
        std::vector<WeightedEdge>{{1, 0, 1.5f}, {0, 1, 1.5f}, {2, 2, 2.0f}, {2, 1, 4.0f}, {1, 2, 4.0f}});

  const EdgeList pattern = readMatrixMarketGraph(dir.write("sp.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                                                      "2 2 2\n"
                                                                      "1 1\n"
                                                                      "2 1\n"));
  CHECK(edgesOf(pattern) == std::vector<Edge>{{0, 0}, {1, 0}, {0, 1}});
}

TEST_CASE("Matrix Market header words are case-insensitive") {
  TempDir dir;
  const EdgeList e =
      readMatrixMarketGraph(dir.write("c.mtx", "%%matrixmarket MATRIX Coordinate Pattern General\n2 2 1\n2 1\n"));
  CHECK(edgesOf(e) == std::vector<Edge>{{1, 0}});
}

TEST_CASE("Matrix Market empty graph") {
  TempDir dir;
  const EdgeList e = readMatrixMarketGraph(dir.write("e.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 0\n"));
  CHECK(e.numNodes == 5);
  CHECK(e.numEdges() == 0);
}

TEST_CASE("Matrix Market dense: array is column-major") {
  TempDir dir;
  const DenseMatrix m = readMatrixMarketDense(dir.write("a.mtx", "%%MatrixMarket matrix array real general\n"
                                                                 "% 2 rows, 3 columns\n"
                                                                 "2 3\n"
                                                                 "1\n2\n3\n4\n5\n6.5\n"));
  CHECK(m.rows == 2);
  CHECK(m.cols == 3);
  CHECK(m.values == std::vector<float>{1, 3, 5, 2, 4, 6.5f});

  // A symmetric array lists the lower triangle, column by column.
  const DenseMatrix s = readMatrixMarketDense(dir.write("as.mtx", "%%MatrixMarket matrix array integer symmetric\n"
                                                                  "3 3\n"
                                                                  "1\n2\n3\n4\n5\n6\n"));
  CHECK(s.values == std::vector<float>{1, 2, 3, 2, 4, 5, 3, 5, 6});
}

TEST_CASE("Matrix Market dense: coordinate fills zeros elsewhere") {
  TempDir dir;
  const DenseMatrix m = readMatrixMarketDense(dir.write("c.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                                                 "3 2 3\n"
                                                                 "1 2 0.25\n"
                                                                 "3 1 -1\n"
                                                                 "2 2 1e3\n"));
  CHECK(m.rows == 3);
  CHECK(m.cols == 2);
  CHECK(m.values == std::vector<float>{0, 0.25f, 0, 1000, -1, 0});
  CHECK(m.at(2, 0) == -1.0f);

  const DenseMatrix p = readMatrixMarketDense(dir.write("p.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                                                 "2 2 1\n"
                                                                 "2 1\n"));
  CHECK(p.values == std::vector<float>{0, 1, 1, 0});

  const DenseMatrix gz = readMatrixMarketDense(test::writeGz(dir.path() / "c.mtx.gz",
                                                             "%%MatrixMarket matrix coordinate integer general\r\n"
                                                             "1 3 2\r\n"
                                                             "1 3 9\r\n"
                                                             "1 1 2\r\n"));
  CHECK(gz.values == std::vector<float>{2, 0, 9});
}

TEST_CASE("Matrix Market: every shared graph loads with its stated size") {
  struct Expected {
    const char *name;
    int64_t nodes, edges;
  };
  for (const Expected &x : {Expected{"cora", 2708, 10556}, Expected{"citeseer", 3327, 9104},
                            Expected{"pubmed", 19717, 88648}, Expected{"squirrel", 5201, 396706},
                            Expected{"tolokers", 11758, 1038000}}) {
    CAPTURE(x.name);
    const auto file = test::sharedFile(std::string(x.name) + "/graph.mtx");
    if (!file)
      return;
    const EdgeList e = readMatrixMarketGraph(*file);
    CHECK(e.numNodes == x.nodes);
    CHECK(e.numEdges() == x.edges);
    CHECK_FALSE(e.hasWeights());
    CHECK(*std::min_element(e.src.begin(), e.src.end()) >= 0);
    CHECK(*std::max_element(e.dst.begin(), e.dst.end()) < x.nodes);
  }
  if (const auto cora = test::sharedFile("cora/graph.mtx")) {
    const EdgeList e = readMatrixMarketGraph(*cora);
    // The first entries are "634 1" and "1863 1".
    CHECK(e.src[0] == 633);
    CHECK(e.dst[0] == 0);
    CHECK(e.src[1] == 1862);
  }
}

TEST_CASE("Matrix Market: every shared feature matrix loads") {
  struct Expected {
    const char *name;
    int64_t rows, cols;
  };
  for (const Expected &x : {Expected{"cora", 2708, 1433}, Expected{"citeseer", 3327, 3703},
                            Expected{"squirrel", 5201, 2089}, Expected{"tolokers", 11758, 10}}) {
    CAPTURE(x.name);
    const auto file = test::sharedFile(std::string(x.name) + "/features.mtx");
    if (!file)
      return;
    const DenseMatrix m = readMatrixMarketDense(*file);
    CHECK(m.rows == x.rows);
    CHECK(m.cols == x.cols);
    CHECK(m.values.size() == static_cast<size_t>(x.rows * x.cols));
  }
  if (const auto file = test::sharedFile("tolokers/features.mtx")) {
    const DenseMatrix m = readMatrixMarketDense(*file);
    CHECK(m.at(0, 0) == 0.8070351f);
    CHECK(m.at(0, 4) == 0.0f); // not listed
    CHECK(m.at(0, 7) == 1.0f);
  }
}
