#include "cli/StatsJson.h"

#include <string>

namespace gnnjit::cli {

nlohmann::ordered_json toJson(const graph::DegreeSummary &s) {
  nlohmann::ordered_json above = nlohmann::ordered_json::object();
  for (int64_t t : kDegreeThresholds)
    above[std::to_string(t)] = s.nodesAbove(t);
  return {{"mean", s.mean}, {"std", s.std},   {"min", s.min},   {"max", s.max},         {"p50", s.p50},
          {"p90", s.p90},   {"p99", s.p99},   {"p999", s.p999}, {"nodes_above", above}};
}

nlohmann::ordered_json toJson(const graph::DegreeStats &stats) {
  return {{"nodes", stats.nodes},
          {"edges", stats.edges},
          {"self_loops", stats.selfLoops},
          {"isolated_nodes", stats.isolatedNodes},
          {"in_degree", toJson(stats.in)},
          {"out_degree", toJson(stats.out)},
          {"avg_edge_span", stats.avgEdgeSpan}};
}

} // namespace gnnjit::cli
