// `gnnjit layers` and `gnnjit run`, run as a user would.
#include "../cli/RunGnnjit.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <set>

using gnnjit::test::runGnnjit;

namespace {

nlohmann::json runJson(const std::string &args) {
  const auto r = runGnnjit(args + " --json");
  INFO("gnnjit " << args << "\nstderr: " << r.err);
  REQUIRE(r.exitCode == 0);
  return nlohmann::json::parse(r.out);
}

std::string fileBytes(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_CASE("layers --json lists every layer with inputs, params and family") {
  const auto j = runJson("layers");
  REQUIRE(j.is_array());
  std::set<std::string> names;
  for (const auto &l : j) {
    names.insert(l["name"].get<std::string>());
    const std::string family = l["family"].get<std::string>();
    CHECK((family == "spmm" || family == "reduction" || family == "attention"));
    // The lowering agrees with the design's table for the default options.
    CHECK(l["family_hint"].get<std::string>().rfind(family, 0) == 0);
    CHECK(l["pyg_class"].get<std::string>().rfind("torch_geometric.nn.", 0) == 0);
    CHECK(l["outputs"].size() == 1);
    for (const auto &in : l["inputs"]) {
      CHECK(in.contains("name"));
      CHECK(in["kind"] != "param");
      CHECK(in["shape"].size() == 2);
      CHECK(in["dtype"] == "f32");
    }
  }
  CHECK(names == std::set<std::string>{"gcn", "graphconv", "sage", "gin", "gat", "gatv2", "transformer", "agnn",
                                       "edgeconv"});
  const auto gatv2 = runJson("layers gatv2 --heads 2 --dim 8");
  REQUIRE(gatv2.size() == 1);
  CHECK(gatv2[0]["inputs"][0]["name"] == "xl");
  CHECK(gatv2[0]["inputs"][0]["read_at"] == nlohmann::json::array({"src"}));
  CHECK(gatv2[0]["inputs"][1]["read_at"] == nlohmann::json::array({"dst"}));
  CHECK(gatv2[0]["params"][0]["name"] == "att");
  CHECK(gatv2[0]["params"][0]["shape"] == nlohmann::json::array({2, 8}));
  CHECK(gatv2[0]["outputs"][0]["shape"] == nlohmann::json::array({1, 16}));
  const auto text = runGnnjit("layers");
  CHECK(text.exitCode == 0);
  CHECK(text.out.find("family:  spmm") != std::string::npos);
}

TEST_CASE("run prints checksums and timings, forward and backward") {
  // The reference backend, whatever the machine has (on a GPU, auto is cuda).
  const std::string gatv2 = "run --layer gatv2 --graph grid:side=6 --heads 2 --dim 4 --self-loops add --backward "
                            "--backend cpu";
  const auto j = runJson(gatv2);
  CHECK(j["graph"]["nodes"] == 36);
  CHECK(j["backend"] == "cpu");
  REQUIRE(j["outputs"].size() == 1);
  CHECK(j["outputs"][0]["cols"] == 8);
  CHECK(j["outputs"][0]["non_finite"] == 0);
  CHECK(j["outputs"][0]["sum_sq"].get<double>() > 0);
  REQUIRE(j["gradients"].size() == 3);
  CHECK(j["gradients"][2]["input"] == "att");
  CHECK(j["gradients"][2]["rows"] == 1);
  CHECK(j["timing_ms"].contains("backward"));
  // The same seed gives the same numbers; another seed other numbers.
  const auto again = runJson(gatv2);
  CHECK(again["outputs"][0]["sum"] == j["outputs"][0]["sum"]);
  const auto other = runJson(gatv2 + " --seed 5");
  CHECK(other["outputs"][0]["sum"] != j["outputs"][0]["sum"]);
  // Every layer runs with its defaults on a small graph.
  for (const char *layer : {"gcn", "graphconv", "sage", "gin", "gat", "transformer", "agnn", "edgeconv"}) {
    INFO(layer);
    const auto r = runJson(std::string("run --graph grid:side=5 --backward --dim 3 --layer ") + layer);
    CHECK(r["outputs"][0]["non_finite"] == 0);
  }
}

TEST_CASE("run --attention-dropout: the options say it, one seed gives one mask, refused where not read") {
  const std::string base = "run --layer gat --graph grid:side=6 --heads 2 --dim 4 --self-loops add --backward";
  const auto none = runJson(base);
  const auto dropped = runJson(base + " --attention-dropout 0.5");
  CHECK(dropped["options"]["attention_dropout"] == 0.5);
  CHECK(dropped["layer_hash"] != none["layer_hash"]);
  CHECK(dropped["outputs"][0]["sum"] != none["outputs"][0]["sum"]);
  // One seed drops the same coefficients every run; another seed others.
  CHECK(runJson(base + " --attention-dropout 0.5")["gradients"][0]["sum"] == dropped["gradients"][0]["sum"]);
  CHECK(runJson(base + " --attention-dropout 0.5 --seed 3")["outputs"][0]["sum"] != dropped["outputs"][0]["sum"]);
  const auto gcn = runGnnjit("run --layer gcn --graph grid:side=4 --attention-dropout 0.5");
  CHECK(gcn.exitCode != 0);
  CHECK(gcn.err.find("--attention-dropout") != std::string::npos);
  const auto bad = runGnnjit("run --layer gat --graph grid:side=4 --attention-dropout 1.5");
  CHECK(bad.exitCode != 0);
}

TEST_CASE("run refuses cuda without a GPU, unknown layers and bad option combinations") {
  const auto cuda = runGnnjit("run --layer gcn --graph grid:side=4 --backend cuda");
  if (cuda.exitCode != 0) { // no GPU here
    gnnjit::test::noGpuHere("run --backend cuda is checked on a machine with a GPU");
    CHECK(cuda.exitCode == 1);
    CHECK(cuda.err.find("--backend cuda needs a CUDA device") != std::string::npos);
  }
  const auto unknown = runGnnjit("run --layer gatv9 --graph grid:side=4");
  CHECK(unknown.exitCode == 1);
  CHECK(unknown.err.find("gatv2") != std::string::npos);
  const auto heads = runGnnjit("run --layer gcn --graph grid:side=4 --heads 2");
  CHECK(heads.exitCode == 1);
  CHECK(heads.err.find("has no option --heads; it takes --dim, --weighted") != std::string::npos);
  const auto aggr = runGnnjit("run --layer sage --graph grid:side=4 --aggr median");
  CHECK(aggr.exitCode == 1);
  CHECK(aggr.err.find("mean, max, min, sum") != std::string::npos);
}

TEST_CASE("--dump writes tensor files that --inputs reads back") {
  gnnjit::test::TempDir tmp;
  const auto first = tmp.path() / "first", second = tmp.path() / "second";
  const std::string common = "run --layer transformer --graph grid:side=5 --heads 2 --dim 3 --edge-features --backward";
  const auto a = runJson(common + " --seed 9 --dump '" + first.string() + "'");
  for (const char *name : {"q", "k", "v", "e", "d_out", "out", "grad_q", "grad_e"}) {
    INFO(name);
    CHECK(std::filesystem::exists(first / (std::string(name) + ".bin")));
    CHECK(std::filesystem::exists(first / (std::string(name) + ".json")));
  }
  const auto header = nlohmann::json::parse(fileBytes(first / "e.json"));
  CHECK(header["rows"] == 80); // grid 5x5: 2 * (2 * 5 * 4) edges
  CHECK(header["cols"] == 6);
  CHECK(header["dtype"] == "float64");
  CHECK(std::filesystem::file_size(first / "e.bin") == 80 * 6 * 8);
  const auto manifest = nlohmann::json::parse(fileBytes(first / "manifest.json"));
  CHECK(manifest["layer"] == "transformer");
  CHECK(manifest["outputs"] == nlohmann::json::array({"out"}));

  // A different --seed is ignored once the inputs come from files.
  const auto b = runJson(common + " --seed 1 --inputs '" + first.string() + "' --dump '" + second.string() + "'");
  CHECK(b["outputs"] == a["outputs"]);
  CHECK(b["gradients"] == a["gradients"]);
  CHECK(fileBytes(second / "out.bin") == fileBytes(first / "out.bin"));
  CHECK(fileBytes(second / "grad_k.bin") == fileBytes(first / "grad_k.bin"));
  CHECK_FALSE(std::filesystem::exists(second / "q.bin")); // inputs from files are not written again

  // Missing and misshapen files are user errors naming the file.
  std::filesystem::remove(first / "d_out.bin");
  const auto missing = runGnnjit(common + " --inputs '" + first.string() + "'");
  CHECK(missing.exitCode == 1);
  CHECK(missing.err.find("d_out.bin") != std::string::npos);
  const auto wrongGraph = runGnnjit("run --layer transformer --graph grid:side=4 --heads 2 --dim 3 --edge-features "
                                    "--inputs '" +
                                    first.string() + "'");
  CHECK(wrongGraph.exitCode == 1);
  CHECK(wrongGraph.err.find("needs 16 x 6") != std::string::npos);
}
