// The GRAPH argument and the cleaning options every graph-taking subcommand
// shares (info now; run, export, tune, bench later).
#pragma once

#include "graph/Graph.h"
#include "graph/io/Dataset.h"

#include <CLI/CLI.hpp>

#include <string>

namespace gnnjit::cli {

/// What `gnnjit info` and friends load when no GRAPH is given.
inline constexpr const char *kDefaultGraph = "rmat:scale=16,ef=16,seed=0";

struct GraphArgs {
  std::string spec = kDefaultGraph;
  bool symmetrize = false;
  std::string selfLoops = "keep";
  bool removeDuplicates = false;
  std::string index = "auto";
};

/// How a subcommand takes its graph: `info GRAPH` or `run --graph GRAPH`.
enum class GraphArgStyle { Positional, Flag };

/// Adds the graph (optional, default kDefaultGraph) and --symmetrize,
/// --self-loops, --dedupe, --index to `command`.
void addGraphOptions(CLI::App &command, GraphArgs &args, GraphArgStyle style = GraphArgStyle::Positional);

struct LoadedGraph {
  graph::Dataset dataset; ///< features, labels, splits where the source has them; edges emptied
  graph::Graph graph;
  double readSeconds = 0, buildSeconds = 0;
};

/// Loads, cleans and builds the graph the arguments name.
LoadedGraph loadGraph(const GraphArgs &args);

} // namespace gnnjit::cli
