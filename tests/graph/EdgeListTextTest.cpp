#include "graph/io/EdgeListText.h"
#include "graph/io/GraphFile.h"
#include "graph/io/LineReader.h"

#include "IoTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <array>
#include <tuple>
#include <vector>

using namespace gnnjit;
using namespace gnnjit::graph;
using gnnjit::test::TempDir;

namespace {

using Edge = std::tuple<int64_t, int64_t>;

std::vector<Edge> edgesOf(const EdgeList &e) {
  std::vector<Edge> out;
  for (int64_t k = 0; k < e.numEdges(); ++k)
    out.emplace_back(e.src[k], e.dst[k]);
  return out;
}

struct Line {
  int64_t number;
  std::string text;
  bool operator==(const Line &) const = default;
};

std::vector<Line> linesOf(const std::filesystem::path &file, size_t chunk) {
  LineReader reader(file, chunk);
  std::vector<Line> out;
  std::string_view line;
  while (reader.next(line))
    out.push_back({reader.lineNumber(), std::string(line)});
  return out;
}

const std::string kSnap = "# Directed graph: example.txt\n"
                          "# FromNodeId\tToNodeId\n"
                          "0\t1\n"
                          "\n"
                          "2 3\n"
                          "% another comment style\n"
                          "  3   0  \n"
                          "7\t7\n";

} // namespace

TEST_CASE("LineReader: lines, numbers, CRLF, no final newline, long lines across chunks") {
  TempDir dir;
  const std::string longLine(100, 'x');
  const std::string content = "a\r\n\nbb\n" + longLine + "\r\n" + std::string("nul\0byte", 8) + "\nlast";
  const std::vector<Line> expected{{1, "a"}, {2, ""}, {3, "bb"}, {4, longLine}, {5, std::string("nul\0byte", 8)},
                                   {6, "last"}};
  const auto file = dir.write("lines.txt", content);
  for (size_t chunk : {size_t{16}, size_t{17}, size_t{64}, LineReader::kChunkBytes}) {
    CAPTURE(chunk);
    CHECK(linesOf(file, chunk) == expected);
  }
  CHECK(linesOf(test::writeGz(dir.path() / "lines.gz", content), 16) == expected);
}

TEST_CASE("LineReader: empty files, a lone newline, a byte order mark") {
  TempDir dir;
  CHECK(linesOf(dir.write("empty.txt", ""), 16).empty());
  CHECK(linesOf(test::writeGz(dir.path() / "empty.gz", ""), 16).empty());
  CHECK(linesOf(dir.write("newline.txt", "\n"), 16) == std::vector<Line>{{1, ""}});
  CHECK(linesOf(dir.write("bom.txt", "\xEF\xBB\xBF"
                                     "0 1\n"),
                16) == std::vector<Line>{{1, "0 1"}});
}

TEST_CASE("LineReader: a gzip file is compressed, a plain one is not") {
  TempDir dir;
  LineReader plain(dir.write("p.txt", "1\n"));
  LineReader gz(test::writeGz(dir.path() / "g.txt.gz", "1\n"));
  std::string_view line;
  CHECK(plain.next(line));
  CHECK(gz.next(line));
  CHECK_FALSE(plain.compressed());
  CHECK(gz.compressed());
  CHECK(plain.maxTextBytes() == 2);
  CHECK(gz.maxTextBytes() > 2);
}

TEST_CASE("splitFields: blanks, commas, too many fields") {
  std::array<std::string_view, 3> f;
  CHECK(splitFields("", f, false) == 0);
  CHECK(splitFields(" \t ", f, false) == 0);
  CHECK(splitFields(" 1\t 22 ", f, false) == 2);
  CHECK(f[0] == "1");
  CHECK(f[1] == "22");
  CHECK(splitFields("1,2, 3.5", f, true) == 3);
  CHECK(f[2] == "3.5");
  CHECK(splitFields("1,2", f, false) == 1);
  CHECK(splitFields("1,,2", f, true) == 3);
  CHECK(f[1].empty());
  CHECK(splitFields("1,2,", f, true) == 3);
  CHECK(f[2].empty());
  CHECK(splitFields("1 2 3 4 5", f, false) == 4);
}

TEST_CASE("Edge list: SNAP text with comments and blank lines") {
  TempDir dir;
  const EdgeList e = readEdgeListText(dir.write("g.txt", kSnap));
  CHECK(e.numNodes == 8);
  CHECK_FALSE(e.hasWeights());
  CHECK(edgesOf(e) == std::vector<Edge>{{0, 1}, {2, 3}, {3, 0}, {7, 7}});
}

TEST_CASE("Edge list: CRLF, gzip and missing final newline read the same") {
  TempDir dir;
  const auto expected = edgesOf(readEdgeListText(dir.write("g.txt", kSnap)));
  CHECK(edgesOf(readEdgeListText(dir.write("crlf.txt", test::withCrlf(kSnap)))) == expected);
  CHECK(edgesOf(readEdgeListText(test::writeGz(dir.path() / "g.txt.gz", kSnap))) == expected);
  CHECK(edgesOf(readEdgeListText(test::writeGz(dir.path() / "crlf.txt.gz", test::withCrlf(kSnap)))) == expected);
  std::string noNewline = kSnap;
  noNewline.pop_back();
  CHECK(edgesOf(readEdgeListText(dir.write("nonl.txt", noNewline))) == expected);
}

TEST_CASE("Edge list: weights and commas") {
  TempDir dir;
  const EdgeList e = readEdgeListText(dir.write("w.csv", "0,1,0.5\n1, 2 ,-3\n2\t0\t1e2\n"));
  CHECK(e.numNodes == 3);
  CHECK(edgesOf(e) == std::vector<Edge>{{0, 1}, {1, 2}, {2, 0}});
  CHECK(e.weight == std::vector<float>{0.5f, -3.0f, 100.0f});
}

TEST_CASE("Edge list: ids beyond 2^31 are kept as 64-bit") {
  TempDir dir;
  const EdgeList e = readEdgeListText(dir.write("big.txt", "0 3000000000\n5000000000 1\n"));
  CHECK(e.numNodes == 5000000001);
  CHECK(edgesOf(e) == std::vector<Edge>{{0, 3000000000}, {5000000000, 1}});
}

TEST_CASE("Edge list: a comment longer than the read chunk") {
  TempDir dir;
  const std::string huge = "# " + std::string(3 * LineReader::kChunkBytes, 'c') + "\n";
  const EdgeList e = readEdgeListText(dir.write("long.txt", "0 1\n" + huge + "1 2\n"));
  CHECK(edgesOf(e) == std::vector<Edge>{{0, 1}, {1, 2}});
}

TEST_CASE("Edge list: the shared email-Eu-core SNAP file") {
  const auto file = test::sharedFile("email-Eu-core/email-Eu-core.txt.gz");
  if (!file)
    return;
  for (const EdgeList &e : {readEdgeListText(*file), readGraphFile(*file)}) {
    CHECK(e.numNodes == 1005);
    CHECK(e.numEdges() == 25571);
    int64_t selfLoops = 0;
    for (int64_t k = 0; k < e.numEdges(); ++k)
      selfLoops += e.src[k] == e.dst[k];
    CHECK(selfLoops == 642);
    CHECK(edgesOf(e)[0] == Edge{0, 1});
  }
}

TEST_CASE("Graph files: the format is told by the name") {
  CHECK(guessGraphFormat("a/graph.mtx") == GraphFormat::MatrixMarket);
  CHECK(guessGraphFormat("graph.MTX.gz") == GraphFormat::MatrixMarket);
  CHECK(guessGraphFormat("road.gr") == GraphFormat::Dimacs);
  CHECK(guessGraphFormat("road.gr.gz") == GraphFormat::Dimacs);
  CHECK(guessGraphFormat("web.txt") == GraphFormat::EdgeListText);
  CHECK(guessGraphFormat("web.txt.gz") == GraphFormat::EdgeListText);
  CHECK(guessGraphFormat("edges.csv") == GraphFormat::EdgeListText);
  CHECK(guessGraphFormat("edges") == GraphFormat::EdgeListText);
  CHECK(guessGraphFormat("x.gz") == GraphFormat::EdgeListText);

  TempDir dir;
  const auto mtx = dir.write("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n3 1\n");
  CHECK(edgesOf(readGraphFile(mtx)) == std::vector<Edge>{{2, 0}});
  const auto gr = dir.write("g.gr", "p sp 3 1\na 3 1 5\n");
  CHECK(edgesOf(readGraphFile(gr)) == std::vector<Edge>{{2, 0}});
  const auto txt = dir.write("g.el", "2 0\n");
  CHECK(edgesOf(readGraphFile(txt)) == std::vector<Edge>{{2, 0}});
  // An explicit format wins over the name.
  CHECK(edgesOf(readGraphFile(dir.write("g.dat", "p sp 3 1\na 1 3 5\n"), GraphFormat::Dimacs)) ==
        std::vector<Edge>{{0, 2}});
}
