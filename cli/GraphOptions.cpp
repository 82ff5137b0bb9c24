#include "cli/GraphOptions.h"

#include "graph/GraphSource.h"
#include "graph/generate/GeneratorSpec.h"

#include <chrono>
#include <map>

namespace gnnjit::cli {

void addGraphOptions(CLI::App &command, GraphArgs &args, GraphArgStyle style) {
  command
      .add_option(style == GraphArgStyle::Positional ? "GRAPH" : "--graph", args.spec,
                  "A graph file (.mtx, .gr, SNAP edge list; .gz too), a dataset folder, a dataset name looked up in "
                  "$GNNJIT_DATA, ./data, ../shared/datasets, or a generator spec (rmat:scale=20,ef=16,seed=0; "
                  "grid:side=1024; er:n=100000,deg=100; sbm:n=...; ba:n=...)")
      ->capture_default_str();
  command.add_flag("--symmetrize", args.symmetrize, "Add the reverse of every edge that lacks one");
  command
      .add_option("--self-loops", args.selfLoops,
                  "keep, remove, add (weight 1 to nodes that have none), replace (remove all, then add one of "
                  "weight 1 to every node: GAT, GATv2 and AGNN in PyG), or add-remaining (one per node, of the "
                  "weight of its last own loop or 1: PyG's add_remaining_self_loops, as GCN)")
      ->check(CLI::IsMember({"keep", "remove", "add", "replace", "add-remaining"}))
      ->capture_default_str();
  command.add_flag("--dedupe", args.removeDuplicates, "Keep one edge per (source, destination)");
  command.add_option("--index", args.index, "Index type: auto (int32 when it fits), int32, int64")
      ->check(CLI::IsMember({"auto", "int32", "int64"}))
      ->capture_default_str();
}

namespace {

graph::BuildOptions buildOptions(const GraphArgs &args) {
  static const std::map<std::string, graph::SelfLoops> selfLoops = {
      {"keep", graph::SelfLoops::Keep},
      {"remove", graph::SelfLoops::Remove},
      {"add", graph::SelfLoops::AddMissing},
      {"replace", graph::SelfLoops::Replace},
      {"add-remaining", graph::SelfLoops::AddRemaining}};
  static const std::map<std::string, graph::IndexChoice> index = {
      {"auto", graph::IndexChoice::Auto}, {"int32", graph::IndexChoice::Int32}, {"int64", graph::IndexChoice::Int64}};
  graph::BuildOptions options;
  options.symmetrize = args.symmetrize;
  options.selfLoops = selfLoops.at(args.selfLoops);
  options.removeDuplicates = args.removeDuplicates;
  options.index = index.at(args.index);
  return options;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

LoadedGraph loadGraph(const GraphArgs &args) {
  const auto start = std::chrono::steady_clock::now();
  graph::Dataset dataset = graph::loadGraphSource(args.spec);
  const double readSeconds = secondsSince(start);
  const auto buildStart = std::chrono::steady_clock::now();
  graph::Graph g = graph::Graph::fromEdges(dataset.edges, buildOptions(args));
  g.setName(dataset.name);
  const double buildSeconds = secondsSince(buildStart);
  dataset.edges = {}; // the CSR holds them now; do not keep the graph twice
  return LoadedGraph{std::move(dataset), std::move(g), readSeconds, buildSeconds};
}

} // namespace gnnjit::cli
