#include "graph/GraphSource.h"

#include "TestData.h"
#include "support/Error.h"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace gnnjit;
using namespace gnnjit::graph;

namespace {

std::string errorOf(std::string_view spec) {
  try {
    (void)loadGraphSource(spec);
  } catch (const UserError &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("generator specs, files and folders resolve") {
  const Dataset grid = loadGraphSource("grid:side=3");
  CHECK(grid.edges.numNodes == 9);
  CHECK(grid.name == "grid:side=3");

  test::TempDir dir;
  dir.write("g.txt", "0 1\n1 2\n");
  const Dataset file = loadGraphSource((dir.path() / "g.txt").string());
  CHECK(file.edges.numEdges() == 2);
  CHECK(file.name == "g.txt");

  // A folder with exactly one graph file loads it; with none it is an error.
  std::filesystem::create_directory(dir.path() / "one");
  dir.write("one/edges.txt", "0 1\n");
  dir.write("one/README.md", "about\n");
  CHECK(loadGraphSource((dir.path() / "one").string()).edges.numEdges() == 1);
  std::filesystem::create_directory(dir.path() / "none");
  CHECK(errorOf((dir.path() / "none").string()).find("holds no graph.mtx and 0 graph files") != std::string::npos);
}

TEST_CASE("dataset names are looked up on GNNJIT_DATA") {
  test::TempDir dir;
  std::filesystem::create_directory(dir.path() / "tiny");
  dir.write("tiny/graph.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n");
  const std::string value = "/nonexistent-gnnjit-dir:" + dir.path().string();
  setenv("GNNJIT_DATA", value.c_str(), 1);
  const Dataset tiny = loadGraphSource("tiny");
  unsetenv("GNNJIT_DATA");
  CHECK(tiny.name == "tiny");
  CHECK(tiny.edges.numNodes == 3);
  CHECK(tiny.edges.numEdges() == 2);
}

TEST_CASE("an unknown graph says what was tried") {
  const std::string message = errorOf("no-such-graph-anywhere");
  CHECK(message.find("no graph 'no-such-graph-anywhere'") != std::string::npos);
  CHECK(message.find("shared") != std::string::npos); // the search path is listed
  CHECK(message.find("rmat") != std::string::npos);   // and the generators
  CHECK(errorOf("").find("no graph given") != std::string::npos);
}

TEST_CASE("shared datasets resolve by folder") {
  const auto cora = test::sharedFile("cora");
  if (!cora)
    return;
  const Dataset d = loadGraphSource(cora->string());
  CHECK(d.name == "cora");
  CHECK(d.edges.numNodes == 2708);
  CHECK(d.edges.numEdges() == 10556);
  const auto email = test::sharedFile("email-Eu-core");
  const Dataset e = loadGraphSource(email->string());
  CHECK(e.edges.numNodes == 1005);
  CHECK(e.edges.numEdges() == 25571);
}

TEST_CASE("paths the filesystem refuses are user errors that name the path, shortly") {
  const std::string longName(5000, 'a');
  const std::string tooLong = errorOf(longName);
  CHECK(tooLong.find("cannot access") != std::string::npos);
  CHECK(tooLong.find("File name too long") != std::string::npos);
  CHECK(tooLong.find("(5000 bytes)") != std::string::npos);
  CHECK(tooLong.size() < 400);

  test::TempDir dir;
  std::filesystem::create_symlink(dir.path() / "b", dir.path() / "a");
  std::filesystem::create_symlink(dir.path() / "a", dir.path() / "b");
  const std::string loop = errorOf((dir.path() / "a").string());
  CHECK(loop.find("cannot access") != std::string::npos);
  CHECK(loop.find("symbolic links") != std::string::npos);
}
