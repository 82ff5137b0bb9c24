// What the autotuner's compiling costs, without a GPU: for each graph, layer
// and width, the distinct kernel modules of every candidate the default
// pruning keeps (both passes), compiled by NVRTC straight (no cache) on 1 and
// on N threads. Prints, per case, the module count, the mean and longest
// single compile and the wall time at each thread count: what bounds the
// tuning budget before any kernel is timed.
#include "LayerSpec.h"

#include "autotune/Candidates.h"
#include "autotune/Rule.h"
#include "codegen/Program.h"
#include "exec/KernelSource.h"
#include "graph/Graph.h"
#include "graph/GraphSource.h"
#include "runtime/Compile.h"
#include "support/Stopwatch.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <llvm/Support/ThreadPool.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

using namespace gnnjit;

namespace {

struct Options {
  std::vector<std::string> graphs = {"rmat:scale=16,ef=16,seed=0", "grid:side=256"};
  std::vector<std::string> layers = {"gcn", "sage:max", "gatv2/4"}; ///< name[:aggregation][/heads]
  std::vector<int64_t> widths = {128};
  std::vector<unsigned> threads = {1, 0}; ///< 0: every core
  bool exhaustive = false;
};

/// Every distinct module the kept candidates of both passes need, in the
/// order the tuner meets them.
std::vector<runtime::Source> candidateModules(const lower::LoweredLayer &l, const autotune::GraphFacts &facts,
                                              bool exhaustive) {
  std::vector<runtime::Source> sources;
  std::map<std::string, bool> seen;
  autotune::ProgramCache programs(l);
  for (lower::Pass pass : {lower::Pass::Forward, lower::Pass::Backward}) {
    const lower::PassConfig rule = autotune::ruleConfig(l, pass, facts, {});
    const auto spaces = autotune::candidateSpaces(programs, pass, facts, {}, exhaustive);
    for (const lower::PassConfig &config : autotune::trialConfigs(spaces, rule))
      for (const codegen::GeneratedModule &m : programs.get(pass, config)->code.modules)
        if (seen.emplace(m.source, true).second)
          sources.push_back(exec::kernelSource(m));
  }
  return sources;
}

struct CompileTimes {
  double wall = 0, mean = 0, longest = 0;
};

CompileTimes compileAll(const std::vector<runtime::Source> &sources, unsigned threads) {
  std::vector<double> each(sources.size());
  const Stopwatch clock;
  {
    llvm::ThreadPool pool(llvm::hardware_concurrency(threads));
    for (size_t k = 0; k < sources.size(); ++k)
      pool.async([&, k] {
        const Stopwatch one;
        (void)runtime::compileToCubin(sources[k], runtime::CompileOptions{});
        each[k] = one.seconds();
      });
    pool.wait();
  }
  CompileTimes t;
  t.wall = clock.seconds();
  for (double s : each) {
    t.mean += s / static_cast<double>(each.size());
    t.longest = std::max(t.longest, s);
  }
  return t;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"NVRTC time of the autotuner's candidate modules (no GPU needed): per layer, graph and width, the "
               "distinct modules of both passes compiled on 1 and on N threads"};
  app.add_option("graphs", o.graphs, "graphs (GRAPH specs)")->capture_default_str();
  app.add_option("--layers", o.layers, "layers as name[:aggregation][/heads]")->capture_default_str();
  app.add_option("--widths", o.widths, "feature widths F (heads x features per head)")->capture_default_str();
  app.add_option("--threads", o.threads, "thread counts to compile with (0: every core)")->capture_default_str();
  app.add_flag("--exhaustive", o.exhaustive, "every candidate, not only those the model keeps");
  CLI11_PARSE(app, argc, argv);
  std::printf("NVRTC %s, sm_90 (compile-only arch), %u cores\n", runtime::nvrtcVersionString().c_str(),
              std::thread::hardware_concurrency());
  std::printf("%-28s %-10s %4s %7s", "graph", "layer", "F", "modules");
  for (unsigned n : o.threads)
    std::printf(" %11s", fmt::format("wall@{}", n == 0 ? std::thread::hardware_concurrency() : n).c_str());
  std::printf(" %8s %8s\n", "mean s", "max s");
  for (const std::string &spec : o.graphs) {
    const graph::Graph g = graph::Graph::fromEdges(graph::loadGraphSource(spec).edges, {});
    const autotune::GraphFacts facts = autotune::graphFacts(g);
    for (const std::string &layer : o.layers)
      for (int64_t width : o.widths) {
        int64_t dim = 0;
        const std::vector<runtime::Source> sources =
            candidateModules(bench::lowered(bench::parseLayer(layer), width, dim), facts, o.exhaustive);
        std::printf("%-28s %-10s %4lld %7zu", spec.c_str(), layer.c_str(), (long long)width, sources.size());
        CompileTimes last;
        for (unsigned n : o.threads) {
          last = compileAll(sources, n);
          std::printf(" %10.2fs", last.wall);
        }
        std::printf(" %8.3f %8.3f\n", last.mean, last.longest);
        std::fflush(stdout);
      }
  }
  return 0;
}
