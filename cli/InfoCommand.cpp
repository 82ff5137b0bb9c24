#include "cli/InfoCommand.h"

#include "cli/GraphOptions.h"
#include "cli/StatsJson.h"
#include "graph/DegreeStats.h"

#include <fmt/format.h>

#include <memory>
#include <set>

namespace gnnjit::cli {

namespace {

struct InfoArgs {
  GraphArgs graph;
  bool json = false;
};

nlohmann::ordered_json datasetJson(const graph::Dataset &d) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (d.features)
    j["feature_dim"] = d.features->cols;
  if (!d.labels.empty())
    j["classes"] = std::set<int64_t>(d.labels.begin(), d.labels.end()).size();
  if (!d.train.empty() || !d.val.empty() || !d.test.empty())
    j["split"] = {{"train", d.train.size()}, {"val", d.val.size()}, {"test", d.test.size()}};
  return j;
}

void printJson(const LoadedGraph &loaded) {
  const graph::Graph &g = loaded.graph;
  nlohmann::ordered_json j = {{"graph", g.name()}};
  j.update(toJson(g.stats()));
  j["input_edges"] = g.numInputEdges();
  j["index_type"] = std::string(graph::indexTypeName(g.indexType()));
  j["weighted"] = g.hasWeights();
  j.update(datasetJson(loaded.dataset));
  j["read_seconds"] = loaded.readSeconds;
  j["build_seconds"] = loaded.buildSeconds;
  fmt::print("{}\n", j.dump(2));
}

void printDegreeRow(std::string_view label, const graph::DegreeSummary &s) {
  fmt::print("{:<12} {:>9.2f} {:>9.2f} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}\n", label, s.mean, s.std, s.min, s.p50,
             s.p90, s.p99, s.p999, s.max);
}

void printText(const LoadedGraph &loaded) {
  const graph::Graph &g = loaded.graph;
  const graph::DegreeStats &s = g.stats();
  fmt::print("graph        {}\n", g.name());
  fmt::print("nodes        {}\n", s.nodes);
  fmt::print("edges        {} ({} indices, {})\n", s.edges, graph::indexTypeName(g.indexType()),
             g.hasWeights() ? "weighted" : "unweighted");
  if (g.numInputEdges() != s.edges)
    fmt::print("input edges  {} before cleaning\n", g.numInputEdges());
  fmt::print("self loops   {}\n", s.selfLoops);
  fmt::print("isolated     {}\n", s.isolatedNodes);
  fmt::print("{:<12} {:>9} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}\n", "degree", "mean", "std", "min", "p50", "p90",
             "p99", "p99.9", "max");
  printDegreeRow("in", s.in);
  printDegreeRow("out", s.out);
  fmt::print("in-degree >  ");
  for (int64_t t : kDegreeThresholds)
    fmt::print(" {}: {}", t, s.in.nodesAbove(t));
  fmt::print("\navg |i - j|  {:.1f}\n", s.avgEdgeSpan);
  const graph::Dataset &d = loaded.dataset;
  if (d.features)
    fmt::print("features     {} x {}\n", d.features->rows, d.features->cols);
  if (!d.labels.empty())
    fmt::print("labels       {} classes\n", std::set<int64_t>(d.labels.begin(), d.labels.end()).size());
  if (!d.train.empty() || !d.val.empty() || !d.test.empty())
    fmt::print("split        train {} / val {} / test {}\n", d.train.size(), d.val.size(), d.test.size());
  fmt::print("time         read {:.3f} s, CSR build {:.3f} s\n", loaded.readSeconds, loaded.buildSeconds);
}

} // namespace

void addInfoCommand(CLI::App &app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App *info = app.add_subcommand("info", "Load a graph and print its size and degree statistics");
  addGraphOptions(*info, args->graph);
  info->add_flag("--json", args->json, "Print one JSON object instead of a table");
  info->callback([args] {
    const LoadedGraph loaded = loadGraph(args->graph);
    if (args->json)
      printJson(loaded);
    else
      printText(loaded);
  });
}

} // namespace gnnjit::cli
