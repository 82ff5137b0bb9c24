// `gnnjit tune --list`: the autotuner's candidates without a GPU; `tune` and
// `run --tune` on a GPU where there is one.
#include "RunGnnjit.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
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
    size_t candidates = 0;
    for (const auto &stage : j["passes"][pass]) {
      REQUIRE(!stage["candidates"].empty());
      CHECK(stage["candidates"][0] == stage["rule"]);
      candidates += stage["candidates"].size();
    }
    // One config to time per candidate, and the distinct modules they need.
    CHECK(j["compile"][pass]["configs"].get<size_t>() == candidates);
    CHECK(j["compile"][pass]["modules"].get<size_t>() >= 1);
  }
  // The same graph spec gives the same fingerprint.
  const auto again = runGnnjit("tune --layer gatv2 --heads 2 --dim 16 --graph rmat:scale=9,ef=8,seed=2 --list --json");
  CHECK(nlohmann::json::parse(again.out)["fingerprint"] == j["fingerprint"]);
}

TEST_CASE("tune without --list times the candidates on a GPU, or says that it needs one and --list does not") {
  gnnjit::test::TempDir tmp;
  const auto records = tmp.path() / "records.jsonl";
  // A budget that covers compiling the rule's kernels into an empty cache
  // (a second or two), so every stage is timed and has a winner.
  const auto r = runGnnjit("tune --layer gcn --dim 8 --graph rmat:scale=8,ef=4 --budget-s 30 --json --records '" +
                           records.string() + "'");
  INFO("stderr: " << r.err);
  if (r.exitCode == 1) { // no GPU here
    gnnjit::test::noGpuHere("tune's timing of candidates is checked on a machine with a GPU");
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

TEST_CASE("run --tune needs a GPU run and configs of its own choosing; on a GPU it tunes once, then reads records") {
  const auto cpu = runGnnjit("run --layer gcn --dim 8 --graph rmat:scale=8,ef=4 --backend cpu --tune");
  CHECK(cpu.exitCode == 1);
  CHECK(cpu.err.find("--tune times kernels on a CUDA device") != std::string::npos);
  const auto forced = runGnnjit("run --layer gcn --dim 8 --graph rmat:scale=8,ef=4 --tune --backend-variant cusparse");
  CHECK(forced.exitCode == 1);
  CHECK(forced.err.find("cannot be combined with --backend-variant cusparse") != std::string::npos);
  const auto probe = runGnnjit("run --layer gcn --dim 8 --graph rmat:scale=8,ef=4 --backend cuda --reps 1");
  if (probe.exitCode != 0) {
    gnnjit::test::noGpuHere("run --tune's GPU path is checked on a machine with a GPU");
    return;
  }
  // A cache folder of its own: no records yet.
  gnnjit::test::TempDir tmp;
  const char *was = std::getenv("GNNJIT_CACHE_DIR");
  const std::string before = was ? was : "";
  setenv("GNNJIT_CACHE_DIR", tmp.path().c_str(), 1);
  const std::string args = "run --layer sage --aggr max --dim 16 --graph rmat:scale=9,ef=8,seed=3 --backend cuda "
                           "--backward --tune --json";
  const auto first = runGnnjit(args + " --check"), second = runGnnjit(args);
  if (was)
    setenv("GNNJIT_CACHE_DIR", before.c_str(), 1);
  else
    unsetenv("GNNJIT_CACHE_DIR");
  INFO("stderr: " << first.err << second.err);
  REQUIRE(first.exitCode == 0);
  REQUIRE(second.exitCode == 0);
  const auto a = nlohmann::json::parse(first.out)["kernels"], b = nlohmann::json::parse(second.out)["kernels"];
  CHECK(a.contains("tuned_now_seconds")); // tuned, then planned from the new records
  CHECK(a["tuned_stages"].get<int>() == 2);
  CHECK_FALSE(b.contains("tuned_now_seconds")); // the records were there
  CHECK(b["tuned_stages"] == a["tuned_stages"]);
  CHECK(std::filesystem::exists(tmp.path() / "tuning" / "records.jsonl"));
}
