// Generation and CSR build time of the synthetic graphs, median of 3 runs.
// Usage: bench_generators [SPEC...]   (default: the sizes the baselines use)

#include "graph/Graph.h"
#include "graph/generate/GeneratorSpec.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

using namespace gnnjit;
using namespace gnnjit::graph;

namespace {

constexpr int kRuns = 3;

template <typename F> double medianMs(F run) {
  std::vector<double> ms;
  for (int i = 0; i < kRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void benchOne(const std::string &spec) {
  EdgeList edges;
  const double genMs = medianMs([&] { edges = generateFromSpec(spec); });
  const double csrMs = medianMs([&] { (void)Graph::fromEdges(edges); });
  const double m = static_cast<double>(edges.numEdges());
  fmt::print("{:<34} {:>10} {:>11} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f}\n", spec, edges.numNodes, edges.numEdges(),
             genMs, m / genMs / 1e3, csrMs, m / csrMs / 1e3);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> specs(argv + 1, argv + argc);
  if (specs.empty())
    specs = {"rmat:scale=16,ef=16", "rmat:scale=18,ef=16", "rmat:scale=20,ef=16", "grid:side=1024",
             "er:n=100000,deg=100", "sbm:n=1000000",       "ba:n=1000000,m=8"};
  fmt::print("generation and CSR build (default BuildOptions), median of {} runs, {} hardware threads\n", kRuns,
             std::thread::hardware_concurrency());
  fmt::print("{:<34} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10}\n", "spec", "nodes", "edges", "gen ms", "gen Me/s",
             "csr ms", "csr Me/s");
  try {
    for (const std::string &spec : specs)
      benchOne(spec);
  } catch (const UserError &error) {
    fmt::print(stderr, "error: {}\n", error.what());
    return 1;
  }
  return 0;
}
