// `gnnjit tune --list`: the autotuner's candidates without a GPU.
#include "RunGnnjit.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using gnnjit::test::runGnnjit;

TEST_CASE("tune --list --json: every tunable stage of both passes, the rule's config first, with the graph's "
          "fingerprint") {
  const auto r = runGnnjit("tune --layer gatv2 --heads 2 --dim 16 --graph rmat:scale=9,ef=8,seed=2 --list --json");
  INFO("stderr: " << r.err);
  REQUIRE(r.exitCode == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["fingerprint"].get<std::string>().rfind("n512-e", 0) == 0);
  CHECK(j["records"].get<std::string>().find("tuning") != std::string::npos);
  for (const char *pass : {"fwd", "bwd"}) {
    CAPTURE(std::string(pass));
    REQUIRE(!j["passes"][pass].empty());
    for (const auto &stage : j["passes"][pass]) {
      REQUIRE(!stage["candidates"].empty());
      CHECK(stage["candidates"][0] == stage["rule"]);
    }
  }
  // The same graph spec gives the same fingerprint.
  const auto again = runGnnjit("tune --layer gatv2 --heads 2 --dim 16 --graph rmat:scale=9,ef=8,seed=2 --list --json");
  CHECK(nlohmann::json::parse(again.out)["fingerprint"] == j["fingerprint"]);
}

TEST_CASE("tune without --list times the candidates on a GPU, or says that it needs one and --list does not") {
  gnnjit::test::TempDir tmp;
  const auto records = tmp.path() / "records.jsonl";
  const auto r = runGnnjit("tune --layer gcn --dim 8 --graph rmat:scale=8,ef=4 --budget-s 1 --json --records '" +
                           records.string() + "'");
  INFO("stderr: " << r.err);
  if (r.exitCode == 1) { // no GPU here
    CHECK(r.err.find("CUDA device") != std::string::npos);
    CHECK(r.err.find("--list") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(records));
    return;
  }
  REQUIRE(r.exitCode == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char *pass : {"fwd", "bwd"})
    for (const auto &stage : j["passes"][pass]) {
      CHECK(stage.contains("winner"));
      CHECK(stage["ms"].get<double>() <= stage["rule_ms"].get<double>());
    }
  CHECK(std::filesystem::exists(records));
}
