#include "graph/DegreeStats.h"
#include "graph/Graph.h"
#include "graph/generate/GeneratorSpec.h"
#include "graph/generate/GeneratorSupport.h"
#include "graph/generate/Generators.h"
#include "support/Error.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

using namespace gnnjit;
using namespace gnnjit::graph;

namespace {

/// FNV-1a over the node count and every edge: a golden value for a spec.
uint64_t hashEdges(const EdgeList &e) {
  uint64_t h = 0xCBF29CE484222325ull;
  const auto mix = [&h](int64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (static_cast<uint64_t>(value) >> (8 * byte)) & 0xFF;
      h *= 0x100000001B3ull;
    }
  };
  mix(e.numNodes);
  for (int64_t k = 0; k < e.numEdges(); ++k) {
    mix(e.src[static_cast<size_t>(k)]);
    mix(e.dst[static_cast<size_t>(k)]);
  }
  return h;
}

bool sameEdges(const EdgeList &x, const EdgeList &y) {
  return x.numNodes == y.numNodes && x.src == y.src && x.dst == y.dst && x.weight == y.weight;
}

std::vector<int64_t> degrees(const EdgeList &e, bool incoming) {
  std::vector<int64_t> d(static_cast<size_t>(e.numNodes), 0);
  for (int64_t node : incoming ? e.dst : e.src)
    ++d[static_cast<size_t>(node)];
  return d;
}

DegreeSummary inDegrees(const EdgeList &e) { return DegreeSummary::fromDegrees(degrees(e, true)); }

bool symmetric(const EdgeList &e) {
  std::multiset<std::pair<int64_t, int64_t>> forward, backward;
  for (int64_t k = 0; k < e.numEdges(); ++k) {
    forward.emplace(e.src[static_cast<size_t>(k)], e.dst[static_cast<size_t>(k)]);
    backward.emplace(e.dst[static_cast<size_t>(k)], e.src[static_cast<size_t>(k)]);
  }
  return forward == backward;
}

/// The message of the UserError that `run` throws, or "" if none.
template <typename F> std::string userError(F run) {
  try {
    run();
  } catch (const UserError &error) {
    return error.what();
  }
  return "";
}

std::string specError(std::string_view spec) {
  return userError([&] { generateFromSpec(spec); });
}

} // namespace

TEST_CASE("generators are deterministic for a seed and vary with it") {
  RmatParams r{.scale = 10, .edgeFactor = 8};
  ErdosRenyiParams e{.nodes = 1000, .avgDegree = 5};
  SbmParams s{.nodes = 1000, .blocks = 10};
  BarabasiAlbertParams b{.nodes = 1000, .edgesPerNode = 3};
  CHECK(sameEdges(generateRmat(r), generateRmat(r)));
  CHECK(sameEdges(generateErdosRenyi(e), generateErdosRenyi(e)));
  CHECK(sameEdges(generateSbm(s), generateSbm(s)));
  CHECK(sameEdges(generateBarabasiAlbert(b), generateBarabasiAlbert(b)));
  const EdgeList r0 = generateRmat(r), e0 = generateErdosRenyi(e), s0 = generateSbm(s), b0 = generateBarabasiAlbert(b);
  r.seed = e.seed = s.seed = b.seed = 1;
  CHECK_FALSE(sameEdges(r0, generateRmat(r)));
  CHECK_FALSE(sameEdges(e0, generateErdosRenyi(e)));
  CHECK_FALSE(sameEdges(s0, generateSbm(s)));
  CHECK_FALSE(sameEdges(b0, generateBarabasiAlbert(b)));
}

TEST_CASE("chunked generation does not depend on the thread count") {
  const int64_t count = 5 * detail::kChunkSize + 123;
  const auto fill = [count](unsigned threads) {
    std::vector<uint64_t> out(static_cast<size_t>(count));
    detail::forEachChunk(
        Rng(42), count, "test",
        [&](Rng &rng, int64_t begin, int64_t end) {
          for (int64_t k = begin; k < end; ++k)
            out[static_cast<size_t>(k)] = rng.next();
        },
        threads);
    return out;
  };
  const std::vector<uint64_t> one = fill(1);
  CHECK(fill(2) == one);
  CHECK(fill(7) == one);
  CHECK(fill(0) == one);
}

TEST_CASE("generated graphs match recorded hashes") {
  // A change here means every generated graph changed: the algorithm, the
  // chunking or the random source. Update the values only on purpose.
  // Sizes span several chunks so that chunk seeding is covered.
  CHECK(hashEdges(generateFromSpec("rmat:scale=12,ef=40,seed=3")) == 0x20A06D6670543C80ull);
  CHECK(hashEdges(generateFromSpec("rmat:scale=9,ef=4,permute=0")) == 0x1FC3BFD94919EAEEull);
  CHECK(hashEdges(generateFromSpec("grid:rows=7,cols=9")) == 0x624413B895FC0F5Aull);
  CHECK(hashEdges(generateFromSpec("er:n=5000,deg=30,seed=5")) == 0x0795CA359DB477D7ull);
  CHECK(hashEdges(generateFromSpec("sbm:n=5000,blocks=7,din=20,dout=3")) == 0xAC01F0E3A7BADAAEull);
  CHECK(hashEdges(generateFromSpec("ba:n=3000,m=5,seed=2")) == 0xDE1008BDC9473320ull);
}

TEST_CASE("every generator's output builds a graph") {
  for (const char *spec : {"rmat:scale=8", "grid:side=9", "er:n=300", "sbm:n=300,blocks=5", "ba:n=300"}) {
    CAPTURE(spec);
    const EdgeList edges = generateFromSpec(spec);
    const Graph graph = Graph::fromEdges(edges);
    CHECK(graph.numNodes() == edges.numNodes);
    CHECK(graph.numEdges() == edges.numEdges());
  }
}

TEST_CASE("grid: edge count, degrees, symmetry") {
  const int64_t side = 32;
  const EdgeList e = generateGrid({.rows = side, .cols = side});
  CHECK(e.numNodes == side * side);
  CHECK(e.numEdges() == 2 * (2 * side * (side - 1)));
  const DegreeSummary in = inDegrees(e), out = DegreeSummary::fromDegrees(degrees(e, false));
  CHECK(in.max == 4);
  CHECK(out.max == 4);
  CHECK(in.min == 2);
  CHECK(degrees(e, true)[0] == 2);
  CHECK(degrees(e, true)[side * side - 1] == 2);
  CHECK(degrees(e, true)[side + 1] == 4);
  CHECK(symmetric(e));
  for (int64_t k = 0; k < e.numEdges(); ++k) {
    const int64_t s = e.src[static_cast<size_t>(k)], d = e.dst[static_cast<size_t>(k)];
    const int64_t span = std::abs(s - d);
    REQUIRE((span == 1 || span == side));
    REQUIRE((span == side || s / side == d / side)); // no wrap from row end to next row start
  }

  CHECK(generateGrid({.rows = 3, .cols = 5}).numEdges() == 2 * (3 * 4 + 2 * 5));
  CHECK(generateGrid({.rows = 1, .cols = 4}).numEdges() == 6);
  CHECK(generateGrid({.rows = 1, .cols = 1}).numEdges() == 0);
}

TEST_CASE("Erdos-Renyi: n * deg edges, binomial degrees") {
  const EdgeList e = generateErdosRenyi({.nodes = 20000, .avgDegree = 10});
  CHECK(e.numNodes == 20000);
  CHECK(e.numEdges() == 200000);
  const DegreeSummary in = inDegrees(e);
  CHECK(in.mean == doctest::Approx(10.0));
  // Binomial(200000, 1/20000): standard deviation close to sqrt(10).
  CHECK(in.std > 2.9);
  CHECK(in.std < 3.45);
  CHECK(in.p50 >= 9);
  CHECK(in.p50 <= 11);
  CHECK(in.max < 35);
  CHECK(in.nodesAbove(20) < 200);
  CHECK(generateErdosRenyi({.nodes = 1000, .avgDegree = 2.5}).numEdges() == 2500);
  CHECK(generateErdosRenyi({.nodes = 10, .avgDegree = 0}).numEdges() == 0);
}

TEST_CASE("R-MAT: quadrant convention matches the baseline") {
  const auto oneQuadrant = [](double a, double b, double c) {
    return generateRmat({.scale = 5, .edgeFactor = 2, .a = a, .b = b, .c = c, .permute = false});
  };
  const auto allEdges = [](const EdgeList &e, int64_t s, int64_t d) {
    return std::all_of(e.src.begin(), e.src.end(), [s](int64_t x) { return x == s; }) &&
           std::all_of(e.dst.begin(), e.dst.end(), [d](int64_t x) { return x == d; });
  };
  CHECK(allEdges(oneQuadrant(1, 0, 0), 0, 0));
  CHECK(allEdges(oneQuadrant(0, 1, 0), 0, 31)); // b: destination bit
  CHECK(allEdges(oneQuadrant(0, 0, 1), 31, 0)); // c: source bit
  CHECK(allEdges(oneQuadrant(0, 0, 0), 31, 31));

  // One level: P(source bit) = c + d, P(destination bit) = b + d.
  const EdgeList e = generateRmat({.scale = 1, .edgeFactor = 50000, .a = 0.5, .b = 0.3, .c = 0.1, .permute = false});
  const double n = static_cast<double>(e.numEdges());
  CHECK(static_cast<double>(std::count(e.src.begin(), e.src.end(), 1)) / n == doctest::Approx(0.2).epsilon(0.05));
  CHECK(static_cast<double>(std::count(e.dst.begin(), e.dst.end(), 1)) / n == doctest::Approx(0.4).epsilon(0.05));
}

TEST_CASE("R-MAT: skewed degrees, ids permuted") {
  const EdgeList e = generateRmat({.scale = 14, .edgeFactor = 16});
  CHECK(e.numNodes == 1 << 14);
  CHECK(e.numEdges() == 16 << 14);
  const DegreeSummary in = inDegrees(e);
  CHECK(in.mean == doctest::Approx(16.0));
  CHECK(static_cast<double>(in.max) > 20 * in.mean);
  CHECK(static_cast<double>(in.p50) < in.mean);

  const std::vector<int64_t> permuted = degrees(e, true);
  const auto hub = std::max_element(permuted.begin(), permuted.end()) - permuted.begin();
  CHECK(hub != 0);
  // Unpermuted, node 0 (all bits 0, the likeliest quadrant) is the hub.
  const std::vector<int64_t> plain = degrees(generateRmat({.scale = 14, .edgeFactor = 16, .permute = false}), true);
  CHECK(std::max_element(plain.begin(), plain.end()) == plain.begin());
  // The permutation is a bijection: the degree multiset is unchanged.
  std::vector<int64_t> sortedPermuted = permuted, sortedPlain = plain;
  std::sort(sortedPermuted.begin(), sortedPermuted.end());
  std::sort(sortedPlain.begin(), sortedPlain.end());
  CHECK(sortedPermuted == sortedPlain);
}

TEST_CASE("SBM: edges stay inside blocks of consecutive ids") {
  const EdgeList e = generateSbm({.nodes = 10000, .blocks = 10, .degreeIn = 16, .degreeOut = 2});
  CHECK(e.numEdges() == 180000);
  int64_t inside = 0;
  for (int64_t k = 0; k < e.numEdges(); ++k)
    inside += e.src[static_cast<size_t>(k)] / 1000 == e.dst[static_cast<size_t>(k)] / 1000;
  CHECK(inside == 160000);
  CHECK(inDegrees(e).mean == doctest::Approx(18.0));

  // Sizes differ by at most one: 10 nodes in 3 blocks are [0,4) [4,7) [7,10).
  const auto blockOf = [](int64_t node) { return node < 4 ? 0 : node < 7 ? 1 : 2; };
  const EdgeList small = generateSbm({.nodes = 10, .blocks = 3, .degreeIn = 50, .degreeOut = 50});
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t k = 0; k < small.numEdges(); ++k) {
    const int64_t s = small.src[static_cast<size_t>(k)], d = small.dst[static_cast<size_t>(k)];
    CHECK((blockOf(s) == blockOf(d)) == (k < 500));
    seen.emplace(s, d);
  }
  CHECK(seen.size() == 100); // with this many edges every pair appears
}

TEST_CASE("Barabasi-Albert: edge count, minimum degree, heavy tail") {
  const int64_t n = 5000, m = 3;
  const EdgeList e = generateBarabasiAlbert({.nodes = n, .edgesPerNode = m});
  CHECK(e.numEdges() == (m + 1) * m + 2 * m * (n - m - 1));
  CHECK(symmetric(e));
  std::set<std::pair<int64_t, int64_t>> distinct;
  for (int64_t k = 0; k < e.numEdges(); ++k) {
    REQUIRE(e.src[static_cast<size_t>(k)] != e.dst[static_cast<size_t>(k)]);
    distinct.emplace(e.src[static_cast<size_t>(k)], e.dst[static_cast<size_t>(k)]);
  }
  CHECK(static_cast<int64_t>(distinct.size()) == e.numEdges());
  const DegreeSummary in = inDegrees(e);
  CHECK(in.min >= m);
  CHECK(in.p50 <= 2 * m);
  CHECK(static_cast<double>(in.max) > 10 * in.mean);
  // The smallest case: only the clique.
  CHECK(generateBarabasiAlbert({.nodes = 4, .edgesPerNode = 3}).numEdges() == 12);
}

TEST_CASE("specs run the generator with their values") {
  CHECK(sameEdges(
      generateFromSpec("rmat:scale=6,ef=4,seed=7,a=0.6,b=0.1,c=0.2,permute=0"),
      generateRmat({.scale = 6, .edgeFactor = 4, .a = 0.6, .b = 0.1, .c = 0.2, .seed = 7, .permute = false})));
  CHECK(sameEdges(generateFromSpec("grid:side=5"), generateGrid({.rows = 5, .cols = 5})));
  CHECK(sameEdges(generateFromSpec("grid:rows=3,cols=4"), generateGrid({.rows = 3, .cols = 4})));
  CHECK(sameEdges(generateFromSpec("er:n=100,deg=2.5,seed=9"),
                  generateErdosRenyi({.nodes = 100, .avgDegree = 2.5, .seed = 9})));
  CHECK(sameEdges(generateFromSpec("sbm:n=100,blocks=4,din=3,dout=1,seed=2"),
                  generateSbm({.nodes = 100, .blocks = 4, .degreeIn = 3, .degreeOut = 1, .seed = 2})));
  CHECK(sameEdges(generateFromSpec("ba:n=100,m=2,seed=4"),
                  generateBarabasiAlbert({.nodes = 100, .edgesPerNode = 2, .seed = 4})));
  CHECK(sameEdges(generateFromSpec(" rmat : scale = 6 , permute = true "), generateRmat({.scale = 6})));
}

TEST_CASE("a bare name or an empty list means the defaults") {
  CHECK(sameEdges(generateFromSpec("rmat"), generateRmat({})));
  CHECK(sameEdges(generateFromSpec("rmat:"), generateRmat({})));
  CHECK(sameEdges(generateFromSpec("grid"), generateGrid({})));
  CHECK(sameEdges(generateFromSpec("er"), generateErdosRenyi({})));
  CHECK(sameEdges(generateFromSpec("sbm"), generateSbm({})));
  CHECK(sameEdges(generateFromSpec("ba"), generateBarabasiAlbert({})));
}

TEST_CASE("isGeneratorSpec claims specs, not paths") {
  for (const char *spec : {"rmat", "grid", "er", "sbm", "ba", "rmat:scale=3", "grid:side=4", "rmat:", "rmatt:scale=3"})
    CHECK_MESSAGE(isGeneratorSpec(spec), spec);
  for (const char *path : {"cora", "./rmat.txt", "rmat.txt", "data/x.txt", "data/rmat:scale=3", "grid.mtx",
                           "email-Eu-core", "", "rmat/graph.mtx", "x:y"})
    CHECK_MESSAGE(!isGeneratorSpec(path), path);
}

TEST_CASE("spec errors say what is wrong and what is accepted") {
  std::string m = specError("rmatt:scale=3");
  CHECK(m.find("unknown generator 'rmatt'") != std::string::npos);
  CHECK(m.find("rmat, grid, er, sbm, ba") != std::string::npos);

  m = specError("rmat:scal=3");
  CHECK(m.find("unknown key 'scal'") != std::string::npos);
  CHECK(m.find("did you mean 'scale'") != std::string::npos);
  CHECK(m.find("scale=16, ef=16, a=0.57, b=0.19, c=0.19, seed=0, permute=1") != std::string::npos);
  CHECK(specError("grid:size=3").find("side=256, rows=256, cols=256") != std::string::npos);

  CHECK(specError("rmat:scale=3,scale=4").find("key 'scale' is given twice") != std::string::npos);
  CHECK(specError("rmat:scale").find("'scale' has no '='") != std::string::npos);
  CHECK(specError("rmat:scale=").find("key 'scale' has no value") != std::string::npos);
  CHECK(specError("rmat:scale=3,").find("empty parameter") != std::string::npos);
  CHECK(specError("rmat:scale=abc").find("scale=abc is not valid: expected a whole number") != std::string::npos);
  CHECK(specError("rmat:scale=3.5").find("scale=3.5 is not valid") != std::string::npos);
  CHECK(specError("er:n=-5").find("n=-5 is not valid: expected a whole number >= 0, like n=100000") !=
        std::string::npos);
  CHECK(specError("er:n=1e99").find("n=1e99 is not valid") != std::string::npos);
  CHECK(specError("er:n=99999999999999999999").find("no larger than 9223372036854775807") != std::string::npos);
  CHECK(specError("rmat:scale=99999999999").find("no larger than 2147483647") != std::string::npos);
  CHECK(specError("er:deg=abc").find("deg=abc is not valid: expected a number") != std::string::npos);
  CHECK(specError("er:deg=nan").find("deg=nan is not valid") != std::string::npos);
  CHECK(specError("er:deg=inf").find("deg=inf is not valid") != std::string::npos);
  CHECK(specError("rmat:permute=2").find("permute=2 is not valid: expected 0 or 1") != std::string::npos);
  CHECK(specError("rmat:seed=-1").find("seed=-1 is not valid") != std::string::npos);
  CHECK(specError("grid:side=4,rows=3").find("not both") != std::string::npos);
  // Values that parse but are out of range reach the generator's checks.
  CHECK(specError("rmat:scale=0").find("scale must be between 1 and 40") != std::string::npos);
  CHECK(specError("er:n=0").find("at least 1") != std::string::npos);
}

TEST_CASE("generatorHelp lists every generator with its defaults") {
  const std::string help = generatorHelp();
  CHECK(std::count(help.begin(), help.end(), '\n') == 4);
  for (const char *usage :
       {"rmat:scale=16,ef=16,a=0.57,b=0.19,c=0.19,seed=0,permute=1", "grid:side=256", "er:n=100000,deg=10,seed=0",
        "sbm:n=100000,blocks=100,din=16,dout=2,seed=0", "ba:n=100000,m=4,seed=0"})
    CHECK_MESSAGE(help.find(usage) != std::string::npos, usage);
}

TEST_CASE("parameters are validated") {
  const auto rmat = [](RmatParams p) { return userError([&] { generateRmat(p); }); };
  CHECK(rmat({.scale = 0}).find("scale must be between 1 and 40") != std::string::npos);
  CHECK(rmat({.scale = 41}).find("scale must be between 1 and 40") != std::string::npos);
  CHECK(rmat({.edgeFactor = 0}).find("edge factor") != std::string::npos);
  CHECK(rmat({.a = -0.1}).find("a must be between 0 and 1") != std::string::npos);
  CHECK(rmat({.b = 1.5}).find("b must be between 0 and 1") != std::string::npos);
  CHECK(rmat({.a = 0.5, .b = 0.3, .c = 0.3}).find("a + b + c must be at most 1") != std::string::npos);
  // 0.33 + 0.56 + 0.11 is 1.0000000000000002 in doubles: meant as 1, accepted.
  CHECK(rmat({.scale = 4, .a = 0.33, .b = 0.56, .c = 0.11}).empty());
  CHECK(rmat({.scale = 40}).find("at most 2^34") != std::string::npos);
  CHECK(rmat({.scale = 30, .edgeFactor = int64_t{1} << 40}).find("at most 2^34") != std::string::npos);

  const auto grid = [](GridParams p) { return userError([&] { generateGrid(p); }); };
  CHECK(grid({.rows = 0}).find("at least 1") != std::string::npos);
  CHECK(grid({.cols = -3}).find("at least 1") != std::string::npos);
  CHECK(grid({.rows = int64_t{1} << 40, .cols = int64_t{1} << 40}).find("at most 2^34") != std::string::npos);

  const auto er = [](ErdosRenyiParams p) { return userError([&] { generateErdosRenyi(p); }); };
  CHECK(er({.nodes = 0}).find("at least 1") != std::string::npos);
  CHECK(er({.avgDegree = -1}).find("finite number >= 0") != std::string::npos);
  CHECK(er({.nodes = int64_t{1} << 40, .avgDegree = 1e9}).find("at most 2^34") != std::string::npos);
  CHECK(er({.nodes = int64_t{1} << 35, .avgDegree = 0}).find("nodes") != std::string::npos);

  const auto sbm = [](SbmParams p) { return userError([&] { generateSbm(p); }); };
  CHECK(sbm({.blocks = 0}).find("block count must be between 1") != std::string::npos);
  CHECK(sbm({.nodes = 10, .blocks = 11}).find("block count must be between 1 and the node count (10)") !=
        std::string::npos);
  CHECK(sbm({.blocks = 1}).find("set dout=0") != std::string::npos);
  CHECK(sbm({.blocks = 1, .degreeOut = 0}).empty());
  CHECK(sbm({.degreeIn = -1}).find("finite numbers >= 0") != std::string::npos);

  const auto ba = [](BarabasiAlbertParams p) { return userError([&] { generateBarabasiAlbert(p); }); };
  CHECK(ba({.edgesPerNode = 0}).find("at least 1") != std::string::npos);
  CHECK(ba({.nodes = 4, .edgesPerNode = 4}).find("larger than edges per node") != std::string::npos);
  CHECK(ba({.nodes = int64_t{1} << 33, .edgesPerNode = 8}).find("at most 2^34") != std::string::npos);
}
