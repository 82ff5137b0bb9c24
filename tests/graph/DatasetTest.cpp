#include "graph/io/Dataset.h"
#include "graph/io/IdList.h"
#include "graph/io/LineReader.h"

#include "IoTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace gnnjit;
using namespace gnnjit::graph;
using gnnjit::test::TempDir;

namespace {

struct Expected {
  const char *name;
  int64_t nodes, edges;
  int64_t featureCols; ///< 0: no features.mtx
  int64_t classes;
  size_t train, val, test;
};

const Expected kShared[] = {
    {"cora", 2708, 10556, 1433, 7, 140, 500, 1000},       {"citeseer", 3327, 9104, 3703, 6, 120, 500, 1000},
    {"pubmed", 19717, 88648, 0, 3, 60, 500, 1000},         {"squirrel", 5201, 396706, 2089, 5, 2496, 1664, 1041},
    {"tolokers", 11758, 1038000, 10, 2, 5879, 2939, 2940},
};

const std::string kGraph = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n";

} // namespace

TEST_CASE("Dataset: every shared dataset folder loads and agrees with itself") {
  for (const Expected &x : kShared) {
    CAPTURE(x.name);
    const auto folder = test::sharedFile(x.name);
    if (!folder)
      return;
    CHECK(isDatasetFolder(*folder));
    const Dataset d = loadDatasetFolder(*folder);
    CHECK(d.name == x.name);
    CHECK(d.edges.numNodes == x.nodes);
    CHECK(d.edges.numEdges() == x.edges);
    CHECK(d.features.has_value() == (x.featureCols != 0));
    if (d.features) {
      CHECK(d.features->rows == x.nodes);
      CHECK(d.features->cols == x.featureCols);
    }
    REQUIRE(d.labels.size() == static_cast<size_t>(x.nodes));
    CHECK(*std::max_element(d.labels.begin(), d.labels.end()) == x.classes - 1);
    CHECK(d.train.size() == x.train);
    CHECK(d.val.size() == x.val);
    CHECK(d.test.size() == x.test);
  }
}

TEST_CASE("Dataset: a folder without graph.mtx is not one") {
  const auto email = test::sharedFile("email-Eu-core");
  if (email)
    CHECK_FALSE(isDatasetFolder(*email));
  TempDir dir;
  CHECK_FALSE(isDatasetFolder(dir.path()));
  CHECK_FALSE(isDatasetFolder(dir.path() / "absent"));
  CHECK_FALSE(isDatasetFolder(dir.write("graph.mtx", kGraph))); // a file, not a folder
  CHECK(isDatasetFolder(dir.path()));
  CHECK_USER_ERROR(loadDatasetFolder(dir.path() / "absent"), (dir.path() / "absent").string(), "not a directory");
  TempDir empty;
  CHECK_USER_ERROR(loadDatasetFolder(empty.path()), empty.path().string(), "has no graph.mtx");
}

TEST_CASE("Dataset: a hand-written folder, name from the folder, gzip graph") {
  TempDir dir;
  const auto folder = dir.path() / "tiny";
  std::filesystem::create_directory(folder);
  test::writeGz(folder / "graph.mtx.gz", kGraph);
  std::ofstream(folder / "features.mtx") << "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n";
  std::ofstream(folder / "labels.txt") << "0\n1\r\n# a comment\n\n1\n";
  std::ofstream(folder / "train.txt") << "0\n2\n";
  std::ofstream(folder / "test.txt") << "1";

  CHECK(isDatasetFolder(folder));
  const Dataset d = loadDatasetFolder(folder.string() + "/");
  CHECK(d.name == "tiny");
  CHECK(d.edges.numNodes == 3);
  CHECK(d.edges.src == std::vector<int64_t>{0, 1});
  CHECK(d.edges.dst == std::vector<int64_t>{1, 2});
  REQUIRE(d.features.has_value());
  CHECK(d.features->values == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(d.labels == std::vector<int64_t>{0, 1, 1});
  CHECK(d.train == std::vector<int64_t>{0, 2});
  CHECK(d.val.empty());
  CHECK(d.test == std::vector<int64_t>{1});
}

TEST_CASE("Dataset: parts that disagree with the graph name their file") {
  TempDir dir;
  dir.write("graph.mtx", kGraph);

  SUBCASE("labels count") {
    const auto labels = dir.write("labels.txt", "0\n1\n");
    CHECK_USER_ERROR(loadDatasetFolder(dir.path()), labels.string() + ":", "expected one label per node",
                     "(3 labels, as graph.mtx has 3 nodes)", "found 2 labels");
  }
  SUBCASE("a label that is not an id") {
    const auto labels = dir.write("labels.txt", "0\n-1\n2\n");
    CHECK_USER_ERROR(loadDatasetFolder(dir.path()), labels.string() + ":2:", "expected an id", "found '-1'");
  }
  SUBCASE("feature rows") {
    const auto features = dir.write("features.mtx", "%%MatrixMarket matrix coordinate real general\n4 2 1\n4 2 1\n");
    CHECK_USER_ERROR(loadDatasetFolder(dir.path()), features.string() + ":", "expected one feature row per node",
                     "found 4 rows");
  }
  SUBCASE("split id out of range") {
    const auto val = dir.write("val.txt", "0\n1\n3\n");
    CHECK_USER_ERROR(loadDatasetFolder(dir.path()), val.string() + ":3:",
                     "expected a node id below 3 (an integer from 0 to 2)", "found '3'");
  }
  SUBCASE("a split that lists a node twice (so can name more ids than nodes)") {
    const auto train = dir.write("train.txt", "0\n1\n2\n0\n");
    CHECK_USER_ERROR(loadDatasetFolder(dir.path()), train.string() + ":4:", "each node id once",
                     "node 0 was listed before");
  }
  SUBCASE("two ids on a split line") {
    const auto train = dir.write("train.txt", "0 1\n");
    CHECK_USER_ERROR(loadDatasetFolder(dir.path()), train.string() + ":1:", "expected one non-negative integer per line",
                     "found '0 1'");
  }
}

TEST_CASE("Id lists: comments, blanks, CRLF, empty file") {
  TempDir dir;
  CHECK(readIdList(dir.write("ids.txt", "# ids\n5\r\n\n 7 \n0")) == std::vector<int64_t>{5, 7, 0});
  CHECK(readIdList(dir.write("empty.txt", "")).empty());
  const auto bad = dir.write("bad.txt", "1\nx\n");
  CHECK_USER_ERROR(readIdList(bad), bad.string() + ":2:", "expected an id", "found 'x'");
}

// Found by fuzz/FuzzIdList.cpp: a split of a graph that declares 2^40 nodes
// allocated a 128 GiB bitmap, whatever the split held.
TEST_CASE("Id sets: memory follows the file, not the node count") {
  TempDir dir;
  const auto split = dir.write("train.txt", "1099511627775\n0\n7\n");
  CHECK(readIdSet(split, kMaxNodeCount) == std::vector<int64_t>{1099511627775, 0, 7});
  const auto twice = dir.write("twice.txt", "1099511627775\n0\n1099511627775\n");
  CHECK_USER_ERROR(readIdSet(twice, kMaxNodeCount), twice.string() + ":3:", "each node id once",
                   "node 1099511627775 was listed before");
  const auto small = dir.write("small.txt", "2\n0\n2\n");
  CHECK_USER_ERROR(readIdSet(small, 3), small.string() + ":3:", "node 2 was listed before");

  TempDir folder; // corpus: dataset/regress_split_of_huge_graph
  folder.write("graph.mtx", "%%MatrixMarket matrix coordinate pattern general\n1099511627776 1099511627776 0\n");
  folder.write("train.txt", "5\n");
  const Dataset d = loadDatasetFolder(folder.path());
  CHECK(d.edges.numNodes == kMaxNodeCount);
  CHECK(d.train == std::vector<int64_t>{5});
}
