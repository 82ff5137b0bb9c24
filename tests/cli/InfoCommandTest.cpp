#include "RunGnnjit.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>

using gnnjit::test::runGnnjit;
using gnnjit::test::shellQuoted;

namespace {

nlohmann::json infoJson(const std::string &args) {
  const auto r = runGnnjit("info " + args + " --json");
  INFO("stderr: " << r.err);
  REQUIRE(r.exitCode == 0);
  return nlohmann::json::parse(r.out);
}

} // namespace

TEST_CASE("info --json on cora reports the published counts") {
  const auto cora = gnnjit::test::sharedFile("cora");
  if (!cora)
    return;
  const auto j = infoJson(shellQuoted(cora->string()));
  CHECK(j["nodes"] == 2708);
  CHECK(j["edges"] == 10556);
  CHECK(j["in_degree"]["max"] == 168);
  CHECK(j["self_loops"] == 0);
  CHECK(j["isolated_nodes"] == 0);
  CHECK(j["feature_dim"] == 1433);
  CHECK(j["classes"] == 7);
  for (const char *key : {"mean", "max", "std", "p50", "p90", "p99"}) {
    CHECK(j["in_degree"].contains(key));
    CHECK(j["out_degree"].contains(key));
  }
  CHECK(j.contains("avg_edge_span"));
}

TEST_CASE("info --json on email-Eu-core keeps every published row unless asked") {
  const auto file = gnnjit::test::sharedFile("email-Eu-core/email-Eu-core.txt.gz");
  if (!file)
    return;
  const auto raw = infoJson(shellQuoted(file->string()));
  CHECK(raw["nodes"] == 1005);
  CHECK(raw["edges"] == 25571);
  CHECK(raw["self_loops"] == 642);
  const auto clean = infoJson(shellQuoted(file->string()) + " --self-loops remove --dedupe");
  CHECK(clean["edges"] == 25571 - 642);
  CHECK(clean["self_loops"] == 0);
  CHECK(clean["input_edges"] == 25571);
}

TEST_CASE("dataset names resolve on GNNJIT_DATA") {
  const auto dir = gnnjit::test::sharedDatasetsOrSkip();
  if (!dir)
    return;
  setenv("GNNJIT_DATA", dir->c_str(), 1);
  const auto j = infoJson("citeseer");
  unsetenv("GNNJIT_DATA");
  CHECK(j["graph"] == "citeseer");
  CHECK(j["nodes"] == 3327);
  CHECK(j["edges"] == 9104);
  CHECK(j["in_degree"]["max"] == 99);
  CHECK(j["isolated_nodes"] == 48);
}

TEST_CASE("info on the embedded default and on generator specs") {
  const auto j = infoJson("");
  CHECK(j["nodes"] == 65536);
  CHECK(j["graph"] == "rmat:scale=16,ef=16,seed=0");
  const auto grid = infoJson("grid:side=4 --index int64");
  CHECK(grid["nodes"] == 16);
  CHECK(grid["edges"] == 48);
  CHECK(grid["index_type"] == "int64");
  CHECK(grid["in_degree"]["max"] == 4);
}

TEST_CASE("errors are clear and exit non-zero") {
  const auto missing = runGnnjit("info no-such-graph");
  CHECK(missing.exitCode == 1);
  CHECK(missing.err.find("gnnjit: error: no graph 'no-such-graph'") != std::string::npos);
  const auto badOption = runGnnjit("info grid:side=3 --self-loops sometimes");
  CHECK(badOption.exitCode == 2);
  const auto badSpec = runGnnjit("info rmat:scale=abc");
  CHECK(badSpec.exitCode == 1);
  CHECK(badSpec.err.find("scale") != std::string::npos);
  const auto help = runGnnjit("--help");
  CHECK(help.exitCode == 0);
  CHECK(help.out.find("info") != std::string::npos);
}
