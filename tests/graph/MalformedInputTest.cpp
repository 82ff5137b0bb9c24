// Every loader must turn bad input into a UserError naming the file, the line
// and what was expected; never a crash, a wrapped number or a huge allocation.
#include "graph/io/Dataset.h"
#include "graph/io/Dimacs.h"
#include "graph/io/EdgeListText.h"
#include "graph/io/GraphFile.h"
#include "graph/io/IdList.h"
#include "graph/io/LineReader.h"
#include "graph/io/MatrixMarket.h"

#include "IoTestSupport.h"
#include "TestData.h"

#include "support/Random.h"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

using namespace gnnjit;
using namespace gnnjit::graph;
using gnnjit::test::TempDir;

namespace {

const std::string kHeader = "%%MatrixMarket matrix coordinate pattern general\n";

std::string readBytes(const std::filesystem::path &file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string randomBytes(uint64_t seed, size_t size) {
  Rng rng(seed);
  std::string out(size, '\0');
  for (char &c : out)
    c = static_cast<char>(rng.below(256));
  out[size / 2] = '\0'; // at least one NUL, whatever the seed
  return out;
}

/// Some text that compresses to a gzip file of a few kilobytes.
std::string manyEdges() {
  std::string text;
  Rng rng(7);
  for (int k = 0; k < 20000; ++k)
    text += std::to_string(rng.below(1000)) + " " + std::to_string(rng.below(1000)) + "\n";
  return text;
}

} // namespace

TEST_CASE("Malformed: missing file, directory") {
  TempDir dir;
  const auto missing = dir.path() / "no-such-file.mtx";
  CHECK_USER_ERROR(readMatrixMarketGraph(missing), "cannot open " + missing.string() + ": No such file or directory");
  CHECK_USER_ERROR(readEdgeListText(missing), "cannot open " + missing.string());
  CHECK_USER_ERROR(readDimacsGraph(missing), "cannot open " + missing.string());
  CHECK_USER_ERROR(readIdList(missing), "cannot open " + missing.string());
  CHECK_USER_ERROR(readMatrixMarketDense(missing), "cannot open " + missing.string());
  CHECK_USER_ERROR(readGraphFile(dir.path()), "cannot open " + dir.path().string() + ": it is a directory");
  CHECK_USER_ERROR(readMatrixMarketDense(dir.path()), "cannot open " + dir.path().string(), "directory");
}

TEST_CASE("Malformed: empty files") {
  TempDir dir;
  const auto mtx = dir.write("empty.mtx", "");
  CHECK_USER_ERROR(readMatrixMarketGraph(mtx), mtx.string() + ":1:", "expected the Matrix Market header",
                   "found end of file (the file is empty)");
  CHECK_USER_ERROR(readMatrixMarketDense(mtx), mtx.string() + ":1:", "expected the Matrix Market header");
  const auto txt = dir.write("empty.txt", "");
  CHECK_USER_ERROR(readEdgeListText(txt), txt.string() + ":1:", "expected an edge 'SRC DST' or 'SRC DST WEIGHT'",
                   "found end of file (the file has no edges)");
  const auto commentsOnly = dir.write("comments.txt", "# nothing\n\n");
  CHECK_USER_ERROR(readEdgeListText(commentsOnly), commentsOnly.string() + ":3:", "found end of file");
  const auto gz = test::writeGz(dir.path() / "empty.txt.gz", "");
  CHECK_USER_ERROR(readEdgeListText(gz), gz.string() + ":1:", "found end of file");
  const auto headerOnly = dir.write("header.mtx", kHeader);
  CHECK_USER_ERROR(readMatrixMarketGraph(headerOnly), headerOnly.string() + ":2:",
                   "expected the size line 'ROWS COLS ENTRIES'", "found end of file");
}

TEST_CASE("Malformed: Matrix Market header") {
  TempDir dir;
  struct Case {
    const char *header;
    const char *expected;
    const char *found;
  };
  const Case cases[] = {
      {"%%MatrixMarket matrix coordinate pattern\n", "expected the Matrix Market header",
       "found '%%MatrixMarket matrix coordinate pattern'"},
      {"%MatrixMarket matrix coordinate pattern general\n", "expected the Matrix Market header", "found '%MatrixMarket"},
      {"1 2\n", "expected the Matrix Market header", "found '1 2'"},
      {"%%MatrixMarket vector coordinate pattern general\n", "expected object 'matrix'", "found 'vector'"},
      {"%%MatrixMarket matrix sparse pattern general\n", "expected format 'coordinate' or 'array'", "found 'sparse'"},
      {"%%MatrixMarket matrix coordinate complex general\n", "complex matrices are not supported", "found 'complex'"},
      {"%%MatrixMarket matrix coordinate real hermitian\n", "hermitian matrices are not supported",
       "found 'hermitian'"},
      {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n", "skew-symmetric and hermitian",
       "found 'skew-symmetric'"},
      {"%%MatrixMarket matrix coordinate pattern lower\n", "expected symmetry 'general' or 'symmetric'",
       "found 'lower'"},
      {"%%MatrixMarket matrix array real general\n", "expected format 'coordinate' in the header (a graph",
       "found 'array'"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.header);
    const auto file = dir.write("h.mtx", std::string(c.header) + "2 2 1\n1 1\n");
    CHECK_USER_ERROR(readMatrixMarketGraph(file), file.string() + ":1:", c.expected, c.found);
  }
  const auto arrayPattern = dir.write("ap.mtx", "%%MatrixMarket matrix array pattern general\n1 1\n1\n");
  CHECK_USER_ERROR(readMatrixMarketDense(arrayPattern), arrayPattern.string() + ":1:",
                   "only coordinate matrices can be patterns", "found 'pattern'");
  const auto complex = dir.write("c.mtx", "%%MatrixMarket matrix array complex general\n1 1\n1 0\n");
  CHECK_USER_ERROR(readMatrixMarketDense(complex), complex.string() + ":1:", "complex matrices are not supported");
}

TEST_CASE("Malformed: Matrix Market size line") {
  TempDir dir;
  const auto square = dir.write("ns.mtx", kHeader + "% comment\n2 3 1\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(square), square.string() + ":3:", "expected a square adjacency matrix",
                   "this matrix is 2x3", "found '2 3 1'");
  const auto fields = dir.write("f.mtx", kHeader + "3 3\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(fields), fields.string() + ":2:", "expected the size line 'ROWS COLS ENTRIES'",
                   "found '3 3'");
  const auto negative = dir.write("n.mtx", kHeader + "3 3 -1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(negative), negative.string() + ":2:", "expected an entry count", "found '-1'");
  const auto tooMany = dir.write("tm.mtx", kHeader + "2 2 5\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(tooMany), tooMany.string() + ":2:",
                   "expected an entry count of at most 4 for a 2x2 matrix", "found '5'");
  const auto symmetric =
      dir.write("sym.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 7\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(symmetric), symmetric.string() + ":2:",
                   "at most 6 for a symmetric 3x3 matrix");
  const auto denseNonSquareSymmetric =
      dir.write("dsym.mtx", "%%MatrixMarket matrix array real symmetric\n2 3\n1\n");
  CHECK_USER_ERROR(readMatrixMarketDense(denseNonSquareSymmetric), denseNonSquareSymmetric.string() + ":2:",
                   "expected a square matrix, as the header says symmetric");
}

TEST_CASE("Malformed: a lying size line is rejected before allocating") {
  TempDir dir;
  const auto entries = dir.write("e.mtx", kHeader + "100000000 100000000 1000000000000000\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(entries), entries.string() + ":2:", "expected a count of entries that the file can hold",
                   "found '100000000 100000000 1000000000000000'");
  const auto gz = test::writeGz(dir.path() / "e.mtx.gz", kHeader + "100000000 100000000 1000000000000000\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(gz), gz.string() + ":2:", "that the file can hold", "expands to at most");
  const auto nodes = dir.write("n.mtx", kHeader + "1000000000000000 1000000000000000 1\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(nodes), nodes.string() + ":2:", "expected a row count (an integer from 0 to ",
                   "found '1000000000000000'");
  const auto dense = dir.write("d.mtx", "%%MatrixMarket matrix coordinate real general\n10000000 10000000 1\n1 1 1\n");
  CHECK_USER_ERROR(readMatrixMarketDense(dense), dense.string() + ":2:", "expected a dense matrix of at most");
  const auto array = dir.write("a.mtx", "%%MatrixMarket matrix array real general\n1000 1000\n1\n");
  CHECK_USER_ERROR(readMatrixMarketDense(array), array.string() + ":2:", "expected a count of values that the file can hold");
}

TEST_CASE("Malformed: Matrix Market entries") {
  TempDir dir;
  const auto threeFields = dir.write("3.mtx", kHeader + "3 3 2\n1 2\n1 2 3\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(threeFields), threeFields.string() + ":4:",
                   "expected an entry 'ROW COL' (the header says pattern)", "found '1 2 3'");
  const auto twoFields = dir.write("2.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(twoFields), twoFields.string() + ":3:",
                   "expected an entry 'ROW COL VALUE' (the header says real)", "found '1 2'");
  const auto zero = dir.write("zero.mtx", kHeader + "3 3 1\n0 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(zero), zero.string() + ":3:", "expected a row index (an integer from 1 to 3)",
                   "found '0'");
  const auto past = dir.write("past.mtx", kHeader + "3 3 2\n1 1\n1 4\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(past), past.string() + ":4:",
                   "expected a column index (an integer from 1 to 3)", "found '4'");
  const auto negative = dir.write("neg.mtx", kHeader + "3 3 1\n-1 2\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(negative), negative.string() + ":3:", "expected a row index",
                   "found '-1'");
  const auto overflow = dir.write("of.mtx", kHeader + "3 3 1\n99999999999999999999 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(overflow), overflow.string() + ":3:", "expected a row index",
                   "found '99999999999999999999', which does not fit in 64 bits");
  const auto junk = dir.write("junk.mtx", kHeader + "3 3 1\n1x 1\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(junk), junk.string() + ":3:", "expected a row index", "found '1x'");
  const auto value = dir.write("v.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(value), value.string() + ":3:", "expected a value", "found 'abc'");
  const auto huge = dir.write("h.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e999\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(huge), huge.string() + ":3:", "a finite number within float range",
                   "found '1e999'");
  const auto nan = dir.write("nan.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n");
  CHECK_USER_ERROR(readMatrixMarketDense(nan), nan.string() + ":3:", "a finite number", "found 'nan'");
  const auto integer = dir.write("int.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(integer), integer.string() + ":3:", "expected an integer value",
                   "found '2.5'");
  const auto arrayFields = dir.write("af.mtx", "%%MatrixMarket matrix array real general\n2 1\n1 2\n");
  CHECK_USER_ERROR(readMatrixMarketDense(arrayFields), arrayFields.string() + ":3:", "expected one value per line",
                   "found '1 2'");
}

TEST_CASE("Malformed: declared entry count differs from the entries") {
  TempDir dir;
  const auto truncated = dir.write("t.mtx", kHeader + "% c\n4 4 4\n1 2\n2 3\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(truncated), truncated.string() + ":6:",
                   "expected entry 3 of the 4 that line 3 declares",
                   "found end of file (the file ends after 2 of 4 entries; is it truncated?)");
  // Cut in the middle of a line: the partial line is read as an entry.
  const auto cut = dir.write("cut.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 2\n1 2 0.5\n2 ");
  CHECK_USER_ERROR(readMatrixMarketGraph(cut), cut.string() + ":4:", "expected an entry 'ROW COL VALUE'", "found '2 '");
  const auto extra = dir.write("x.mtx", kHeader + "4 4 2\n1 2\n2 3\n\n3 4\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(extra), extra.string() + ":6:",
                   "expected the end of the file after the 2 entries that line 2 declares", "found '3 4'");
  const auto denseShort = dir.write("ds.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n");
  CHECK_USER_ERROR(readMatrixMarketDense(denseShort), denseShort.string() + ":6:", "expected entry 4 of the 4",
                   "the file ends after 3 of 4 entries");
  const auto denseLong = dir.write("dl.mtx", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n");
  CHECK_USER_ERROR(readMatrixMarketDense(denseLong), denseLong.string() + ":5:", "expected the end of the file",
                   "found '3'");
}

TEST_CASE("Malformed: edge lists") {
  TempDir dir;
  const auto oneField = dir.write("1.txt", "# c\n0 1\n2\n");
  CHECK_USER_ERROR(readEdgeListText(oneField), oneField.string() + ":3:", "expected 2 fields 'SRC DST' like every edge since line 2",
                   "found '2'");
  const auto firstLine = dir.write("f.txt", "0 1 2 3\n");
  CHECK_USER_ERROR(readEdgeListText(firstLine), firstLine.string() + ":1:",
                   "expected an edge 'SRC DST' or 'SRC DST WEIGHT'", "found '0 1 2 3'");
  const auto mixed = dir.write("m.txt", "0 1 0.5\n1 2\n");
  CHECK_USER_ERROR(readEdgeListText(mixed), mixed.string() + ":2:", "expected 3 fields 'SRC DST WEIGHT'",
                   "found '1 2'");
  const auto negative = dir.write("n.txt", "0 1\r\n1 -2\r\n");
  CHECK_USER_ERROR(readEdgeListText(negative), negative.string() + ":2:", "expected a destination node id (an integer from 0 to ",
                   "found '-2'");
  const auto tooLarge = dir.write("l.txt", "0 1\n2000000000000 1\n");
  CHECK_USER_ERROR(readEdgeListText(tooLarge), tooLarge.string() + ":2:", "expected a source node id",
                   "found '2000000000000'");
  const auto overflow = dir.write("o.txt", "0 99999999999999999999\n");
  CHECK_USER_ERROR(readEdgeListText(overflow), overflow.string() + ":1:", "does not fit in 64 bits");
  const auto emptyField = dir.write("e.csv", "0,,1\n");
  CHECK_USER_ERROR(readEdgeListText(emptyField), emptyField.string() + ":1:", "expected a destination node id",
                   "found ''");
  const auto header = dir.write("h.csv", "src,dst\n0,1\n");
  CHECK_USER_ERROR(readEdgeListText(header), header.string() + ":1:", "expected a source node id", "found 'src'");
  const auto weight = dir.write("w.txt", "0 1 x\n");
  CHECK_USER_ERROR(readEdgeListText(weight), weight.string() + ":1:", "expected an edge weight", "found 'x'");
}

TEST_CASE("Malformed: binary garbage is a parse error, never a crash") {
  TempDir dir;
  const auto nul = dir.write("nul.txt", std::string("0 1\n\x00\x01\x02 3\n", 10));
  CHECK_USER_ERROR(readEdgeListText(nul), nul.string() + ":2:", "expected a source node id", "found '\\x00\\x01\\x02'");
  const auto mtxNul = dir.write("nul.mtx", kHeader + "2 2 1\n" + std::string("1\x00 1\n", 5));
  CHECK_USER_ERROR(readMatrixMarketGraph(mtxNul), mtxNul.string() + ":3:", "expected a row index", "found '1\\x00'");

  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const std::string bytes = randomBytes(seed, 4096);
    const auto file = dir.write("garbage.bin", bytes);
    const std::string name = file.string() + ":";
    CHECK_USER_ERROR(readEdgeListText(file), name, "expected");
    CHECK_USER_ERROR(readMatrixMarketGraph(file), name + "1:", "expected the Matrix Market header");
    CHECK_USER_ERROR(readMatrixMarketDense(file), name + "1:", "expected the Matrix Market header");
    CHECK_USER_ERROR(readDimacsGraph(file), name, "expected");
    CHECK_USER_ERROR(readIdList(file), name, "expected");
    // After a valid header the garbage must fail as entries.
    const auto afterHeader = dir.write("garbage.mtx", kHeader + "100 100 10\n" + bytes);
    CHECK_USER_ERROR(readMatrixMarketGraph(afterHeader), afterHeader.string() + ":", "expected");
  }
}

TEST_CASE("Malformed: a line longer than any text line is refused") {
  TempDir dir;
  const auto file = dir.write("long.txt", std::string(LineReader::kMaxLineBytes + 10, '1'));
  CHECK_USER_ERROR(readEdgeListText(file), file.string() + ":1:", "expected a line of text shorter than 64 MiB",
                   "found '111");
}

TEST_CASE("Malformed: corrupt and truncated gzip") {
  TempDir dir;
  const auto good = test::writeGz(dir.path() / "good.txt.gz", manyEdges());
  const std::string bytes = readBytes(good);
  REQUIRE(bytes.size() > 1000);
  CHECK(readEdgeListText(good).numEdges() == 20000);

  const auto truncated = dir.write("truncated.txt.gz", bytes.substr(0, bytes.size() / 2));
  CHECK_USER_ERROR(readEdgeListText(truncated), truncated.string() + ": the compressed data is corrupt or truncated");
  const auto noTrailer = dir.write("notrailer.txt.gz", bytes.substr(0, bytes.size() - 4));
  CHECK_USER_ERROR(readEdgeListText(noTrailer), noTrailer.string() + ": the compressed data is corrupt or truncated");

  std::string flipped = bytes;
  for (size_t k = flipped.size() / 3; k < flipped.size() / 3 + 16; ++k)
    flipped[k] = static_cast<char>(~flipped[k]);
  const auto corrupt = dir.write("corrupt.txt.gz", flipped);
  CHECK_USER_ERROR(readEdgeListText(corrupt), corrupt.string() + ": the compressed data is corrupt or truncated");

  std::string badCrc = bytes;
  badCrc[badCrc.size() - 8] = static_cast<char>(~badCrc[badCrc.size() - 8]);
  const auto crc = dir.write("crc.mtx.gz", badCrc);
  CHECK_USER_ERROR(readMatrixMarketGraph(crc), crc.string() + ": the compressed data is corrupt or truncated");
  CHECK_USER_ERROR(readDimacsGraph(crc), crc.string() + ": the compressed data is corrupt or truncated");
}

TEST_CASE("Malformed: messages quote at most a short, escaped excerpt") {
  TempDir dir;
  const auto file = dir.write("w.txt", "0 " + std::string(500, 'y') + "\n");
  const auto message = test::userErrorOf([&] { readEdgeListText(file); });
  REQUIRE(message.has_value());
  CHECK(message->find("found '" + std::string(60, 'y') + "...'") != std::string::npos);
  CHECK(message->size() < 300);
  CHECK(escapeForMessage(std::string("a\tb\x7f\n\\", 6)) == "a\\tb\\x7f\\x0a\\\\");
}

TEST_CASE("Malformed: a symmetric Matrix Market file with an entry above the diagonal") {
  TempDir dir;
  const auto upper = dir.write("u.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n1 3\n");
  CHECK_USER_ERROR(readMatrixMarketGraph(upper), upper.string() + ":4:", "on or below the diagonal",
                   "say 'general' in the header", "found '1 3'");
  const auto dense = dir.write("d.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 5\n");
  CHECK_USER_ERROR(readMatrixMarketDense(dense), dense.string() + ":3:", "on or below the diagonal", "found '1 2'");
}

// Found by fuzz/FuzzMatrixMarket.cpp: a 30-byte coordinate file asked the
// dense reader for 4 GB of zeros (corpus: matrix_market/regress_dense_size).
TEST_CASE("Malformed: a coordinate matrix read as dense must list entries for its size") {
  TempDir dir;
  const auto fuzzed = dir.write("f.mtx", "%%MatrixMarket matrix coordinate pattern general\n10 100000000 0000000\n1 1\n");
  CHECK_USER_ERROR(readMatrixMarketDense(fuzzed), fuzzed.string() + ":2:",
                   "expected a coordinate matrix that lists at least one entry per 1024 values",
                   "10x100000000 is 1000000000 values, but only 0 entries are declared",
                   "found '10 100000000 0000000'");
  // Just past the 2^24 values that may all be zeros, one entry is too few.
  const auto sparse = dir.write("s.mtx", "%%MatrixMarket matrix coordinate real general\n2048 8193 1\n1 1 1\n");
  CHECK_USER_ERROR(readMatrixMarketDense(sparse), sparse.string() + ":2:", "at least one entry per 1024 values");
  // The graph reader allocates per entry, not per cell: a huge sparse size
  // line is fine there.
  CHECK(readMatrixMarketGraph(dir.write("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                                                 "100000000 100000000 1\n1 1\n"))
            .numNodes == 100000000);
  // The entries are read before the matrix is allocated: a gzip file that
  // declares more than it holds is reported as truncated first.
  const auto cut = test::writeGz(dir.path() / "cut.mtx.gz",
                                 "%%MatrixMarket matrix coordinate real general\n1000 1000 5000\n1 1 1\n");
  CHECK_USER_ERROR(readMatrixMarketDense(cut), cut.string() + ":4:", "expected entry 2 of the 5000",
                   "is it truncated?");
}
