#include "graph/io/NpyEdgeIndex.h"

#include "graph/Graph.h"

#include "IoTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace gnnjit;
using namespace gnnjit::graph;
using gnnjit::test::TempDir;

namespace {

std::string readBytes(const std::filesystem::path &file) {
  std::ifstream in(file, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A .npy file split into its header dict text (padding and '\n' checked and
/// removed) and its data bytes; checks magic, version and the 64-byte
/// alignment of the data.
struct Npy {
  std::string dict;
  std::string data;
};

Npy parseNpy(const std::string &bytes) {
  REQUIRE(bytes.size() >= 10);
  CHECK(bytes.compare(0, 6, "\x93NUMPY") == 0);
  CHECK(static_cast<uint8_t>(bytes[6]) == 1); // format 1.0
  CHECK(static_cast<uint8_t>(bytes[7]) == 0);
  const size_t headerLength = static_cast<uint8_t>(bytes[8]) | (size_t{static_cast<uint8_t>(bytes[9])} << 8);
  REQUIRE(bytes.size() >= 10 + headerLength);
  CHECK((10 + headerLength) % 64 == 0);
  const std::string header = bytes.substr(10, headerLength);
  REQUIRE(!header.empty());
  CHECK(header.back() == '\n');
  const size_t end = header.find_last_not_of(" \n");
  REQUIRE(end != std::string::npos);
  // Only spaces between the dict and the final newline.
  CHECK(header.find_first_not_of(' ', end + 1) == header.size() - 1);
  return {header.substr(0, end + 1), bytes.substr(10 + headerLength)};
}

std::vector<int64_t> int64sOf(const std::string &data) {
  REQUIRE(data.size() % 8 == 0);
  std::vector<int64_t> out(data.size() / 8);
  for (size_t k = 0; k < out.size(); ++k) {
    uint64_t bits = 0;
    for (int b = 7; b >= 0; --b) // little-endian, independent of the host
      bits = (bits << 8) | static_cast<uint8_t>(data[8 * k + static_cast<size_t>(b)]);
    out[k] = static_cast<int64_t>(bits);
  }
  return out;
}

std::vector<float> float32sOf(const std::string &data) {
  REQUIRE(data.size() % 4 == 0);
  std::vector<float> out(data.size() / 4);
  for (size_t k = 0; k < out.size(); ++k) {
    uint32_t bits = 0;
    for (int b = 3; b >= 0; --b)
      bits = (bits << 8) | static_cast<uint8_t>(data[4 * k + static_cast<size_t>(b)]);
    std::memcpy(&out[k], &bits, sizeof bits);
  }
  return out;
}

/// 5 nodes (4 isolated, 3 with no incoming edge), weighted.
EdgeList smallEdges() {
  EdgeList e;
  e.numNodes = 5;
  e.add(0, 1, 0.5f);
  e.add(2, 1, 1.5f);
  e.add(1, 0, 2.0f);
  e.add(3, 2, -0.25f);
  e.add(0, 2, 3.0f);
  return e;
}

} // namespace

TEST_CASE("writeEdgeIndexNpy: header, shape and edges in incoming-CSR order, int32 and int64 graphs") {
  TempDir dir;
  for (IndexChoice index : {IndexChoice::Int32, IndexChoice::Int64}) {
    const Graph graph = Graph::fromEdges(smallEdges(), {.index = index});
    CAPTURE(indexTypeName(graph.indexType()));
    CHECK(graph.indexType() == (index == IndexChoice::Int32 ? IndexType::Int32 : IndexType::Int64));

    const auto file = dir.path() / "small.npy";
    writeEdgeIndexNpy(graph, file);
    const Npy npy = parseNpy(readBytes(file));
    CHECK(npy.dict == "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 5), }");
    // Sorted by destination, then source: row 0 sources, row 1 destinations.
    CHECK(int64sOf(npy.data) == std::vector<int64_t>{1, 0, 2, 0, 3, /**/ 0, 1, 1, 2, 2});

    const auto weightsFile = dir.path() / "small.weights.npy";
    writeEdgeWeightsNpy(graph, weightsFile);
    const Npy weights = parseNpy(readBytes(weightsFile));
    CHECK(weights.dict == "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }");
    CHECK(float32sOf(weights.data) == std::vector<float>{2.0f, 0.5f, 1.5f, 3.0f, -0.25f});
  }
}

TEST_CASE("writeEdgeIndexNpy: a graph without edges, and overwriting a file") {
  TempDir dir;
  EdgeList e;
  e.numNodes = 3;
  const auto file = dir.write("empty.npy", "old contents that must go");
  writeEdgeIndexNpy(Graph::fromEdges(e), file);
  const Npy npy = parseNpy(readBytes(file));
  CHECK(npy.dict == "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 0), }");
  CHECK(npy.data.empty());
}

TEST_CASE("writeEdgeIndexNpy: a graph larger than the write buffer matches the CSR") {
  TempDir dir;
  EdgeList e;
  e.numNodes = 1000;
  uint64_t state = 12345;
  for (int k = 0; k < 150'000; ++k) { // 2.4 MB of index: several buffer flushes
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    e.add(static_cast<int64_t>((state >> 33) % 1000), static_cast<int64_t>((state >> 13) % 1000),
          static_cast<float>(k) * 0.25f);
  }
  const Graph graph = Graph::fromEdges(e, {.removeDuplicates = true});
  const int64_t m = graph.numEdges();
  std::vector<int64_t> expected(static_cast<size_t>(2 * m));
  for (int64_t i = 0; i < graph.numNodes(); ++i)
    for (int64_t p = graph.incoming().rowBegin(i); p < graph.incoming().rowEnd(i); ++p) {
      expected[static_cast<size_t>(p)] = graph.incoming().index(p);
      expected[static_cast<size_t>(m + p)] = i;
    }
  writeEdgeIndexNpy(graph, dir.path() / "big.npy");
  const Npy npy = parseNpy(readBytes(dir.path() / "big.npy"));
  CHECK(npy.dict == "{'descr': '<i8', 'fortran_order': False, 'shape': (2, " + std::to_string(m) + "), }");
  CHECK(int64sOf(npy.data) == expected);

  writeEdgeWeightsNpy(graph, dir.path() / "big.weights.npy");
  const Npy weights = parseNpy(readBytes(dir.path() / "big.weights.npy"));
  CHECK(float32sOf(weights.data) == graph.incoming().weights());
}

TEST_CASE("writeEdgeIndexNpy: errors name the path and leave no temp file behind") {
  TempDir dir;
  const Graph graph = Graph::fromEdges(smallEdges());

  const auto missing = dir.path() / "no-such-folder" / "g.npy";
  CHECK_USER_ERROR(writeEdgeIndexNpy(graph, missing), missing.string(), "No such file or directory");
  CHECK_USER_ERROR(writeEdgeWeightsNpy(graph, missing), missing.string(), "edge weights");

  // The temp file is written, but cannot be renamed over a folder.
  const auto folder = dir.path() / "a-folder.npy";
  std::filesystem::create_directory(folder);
  CHECK_USER_ERROR(writeEdgeIndexNpy(graph, folder), folder.string(), "rename");
  std::vector<std::filesystem::path> left;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path()))
    left.push_back(entry.path().filename());
  CHECK(left == std::vector<std::filesystem::path>{"a-folder.npy"});

  EdgeList unweighted;
  unweighted.numNodes = 2;
  unweighted.add(0, 1);
  Graph plain = Graph::fromEdges(unweighted);
  plain.setName("tiny");
  const auto weightsFile = dir.path() / "tiny.weights.npy";
  CHECK_USER_ERROR(writeEdgeWeightsNpy(plain, weightsFile), weightsFile.string(), "tiny", "no edge weights");
  CHECK(!std::filesystem::exists(weightsFile));
}
