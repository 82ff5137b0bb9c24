// `gnnjit tune --list`: the autotuner's candidates without a GPU.
#include "RunGnnjit.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

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

TEST_CASE("tune without --list is a usage error that says why") {
  const auto r = runGnnjit("tune --layer gcn --graph rmat:scale=8");
  CHECK(r.exitCode == 2);
  CHECK(r.err.find("--list") != std::string::npos);
}
