// Hostile and mistaken input to `info`, `run` and `export`, run as a user
// would: each case must end with exit 1 (the user's input) or 2 (the command
// line) and a message that names the input; never a signal, never
// "internal error", never exit 0 with wrong output.
#include "RunGnnjit.h"
#include "TestData.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

using gnnjit::test::runGnnjit;
using gnnjit::test::shellQuoted;
namespace fs = std::filesystem;

namespace {

const std::string kHuge = "4611686018427387904"; // 2^62

/// A refusal "before allocating" keeps the process far below what it
/// refuses (4 GiB and more in these cases): gnnjit itself, a small graph and
/// the estimate stay within this, whatever the machine and its load.
constexpr long long kRefusalPeakRss = 1LL << 30;

/// The host memory a run may take, as these tests fix it: the refusals they
/// check happen on any machine, whatever its free memory.
constexpr const char *kHostMemory = "8G";

/// Runs `args` and checks that it failed as a user or usage error whose
/// stderr contains every one of `needles`.
void expectRefused(const std::string &args, std::initializer_list<std::string> needles, int exitCode = -1) {
  const auto r = runGnnjit(args);
  INFO("gnnjit " << args << "\nexit " << r.exitCode << "\nstderr: " << r.err);
  if (exitCode >= 0)
    CHECK(r.exitCode == exitCode);
  else
    CHECK((r.exitCode == 1 || r.exitCode == 2));
  CHECK(r.err.find("internal error") == std::string::npos);
  for (const std::string &n : needles)
    CHECK_MESSAGE(r.err.find(n) != std::string::npos, "missing: " << n);
}

std::string mtx(const std::string &header, const std::string &body) {
  return "%%MatrixMarket matrix coordinate " + header + "\n" + body;
}

} // namespace

TEST_CASE("sizes past every limit are refused before anything is built") {
  expectRefused("run --layer agnn --dim " + kHuge, {"--dim", "not in range 1 to 2147483647"}, 2);
  expectRefused("run --layer gat --heads " + kHuge + " --mean-heads", {"--heads", "not in range"}, 2);
  expectRefused("run --dim " + kHuge, {"--dim"}, 2);
  // heads x dim past 2^31 - 1 with each in range.
  expectRefused("run --layer gat --graph grid:side=3 --heads 65536 --dim 65536", {"more features per row"}, 1);
  gnnjit::test::TempDir tmp;
  const fs::path out = tmp.path() / "exported";
  expectRefused("export --layer gcn --dim " + kHuge + " --out " + shellQuoted(out.string()), {"--dim"}, 2);
  CHECK_FALSE(fs::exists(out)); // nothing written
  // A short message, not a 300-digit range.
  const auto zero = runGnnjit("run --dim 0");
  CHECK(zero.exitCode == 2);
  CHECK(zero.err.find("not in range 1 to 2147483647") != std::string::npos);
  CHECK(zero.err.size() < 200);
}

TEST_CASE("an option the layer does not take is an error listing what it takes") {
  expectRefused("run --layer gcn --graph grid:side=3 --aggr bogus", {"'gcn' has no option --aggr", "--dim, --weighted"});
  expectRefused("run --layer gcn --graph grid:side=3 --mean-heads", {"has no option --mean-heads"});
  expectRefused("run --layer sage --graph grid:side=3 --slope 0.1", {"has no option --slope", "--aggr"});
  expectRefused("export --layer gin --eps 0.5 --slope 0.3 --out x", {"'gin' has no option --slope"});
  expectRefused("run --layer gat --graph grid:side=3 --slope nan", {"--slope", "nan is not a finite number"}, 2);
  expectRefused("run --layer gin --graph grid:side=3 --eps inf", {"--eps", "inf is not a finite number"}, 2);
}

TEST_CASE("paths the filesystem refuses are user errors naming the path") {
  const auto longPath = runGnnjit("info " + std::string(5000, 'a'));
  CHECK(longPath.exitCode == 1);
  CHECK(longPath.err.find("File name too long") != std::string::npos);
  CHECK(longPath.err.find("internal error") == std::string::npos);
  CHECK(longPath.err.size() < 400);
  gnnjit::test::TempDir tmp;
  fs::create_symlink(tmp.path() / "b", tmp.path() / "a");
  fs::create_symlink(tmp.path() / "a", tmp.path() / "b");
  expectRefused("info " + shellQuoted((tmp.path() / "a").string()), {"cannot access", "symbolic links"}, 1);
}

TEST_CASE("bad tensor headers name the file and the key") {
  const auto cora = gnnjit::test::sharedFile("cora");
  if (!cora)
    return;
  gnnjit::test::TempDir tmp;
  const std::string run = "run --graph " + shellQuoted(cora->string()) + " --backend cpu --inputs " +
                          shellQuoted(tmp.path().string());
  tmp.write("x.bin", std::string(2708 * 16 * 8, '\0'));
  tmp.write("x.json", R"({"rows": 2708, "cols": 16, "dtype": 64})");
  expectRefused(run, {"x.json", "\"dtype\" must be \"float64\"", "found 64"}, 1);
  tmp.write("x.json", R"({"rows": 2708, "cols": 16, "byte_order": null})");
  expectRefused(run, {"x.json", "\"byte_order\" must be \"little\"", "found null"}, 1);
  tmp.write("x.json", R"({"rows": 2708, "cols": 16, "dtyp": "float64"})");
  expectRefused(run, {"unknown key \"dtyp\""}, 1);
  tmp.write("x.json", R"({"rows": 4611686018427387904, "cols": 4611686018427387904})");
  expectRefused(run, {"x.json", "\"rows\" must be an integer from 0 to 2^48"}, 1);
  tmp.write("x.json", R"({"rows": 2708, "cols": 15})");
  expectRefused(run, {"holds 346624 bytes, but 2708 x 15 float64 values are 324960 bytes"}, 1);
}

TEST_CASE("graph files that lie are refused naming the line, or before allocating") {
  gnnjit::test::TempDir tmp;
  const fs::path upper = tmp.write("upper.mtx", mtx("pattern symmetric", "3 3 2\n2 1\n1 3\n"));
  expectRefused("info " + shellQuoted(upper.string()), {"upper.mtx:4:", "on or below the diagonal"}, 1);

  // 60 bytes that declare two billion nodes: refused at once, naming the GiB
  // (a CSR of 2e9 nodes is over 8 GiB), without allocating it.
  {
    const fs::path big = tmp.write("big.mtx", mtx("pattern general", "2000000000 2000000000 1\n1 2\n"));
    const gnnjit::test::ScopedEnv budget("GNNJIT_HOST_MEMORY", kHostMemory);
    const auto r = runGnnjit("info " + shellQuoted(big.string()));
    INFO("stderr: " << r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("2000000000 nodes") != std::string::npos);
    CHECK(r.err.find("GiB of host memory") != std::string::npos);
    CHECK(r.peakRssBytes > 0);
    CHECK(r.peakRssBytes < kRefusalPeakRss);
  }

  // --index int32 refused for what does not fit, counting the right thing.
  const fs::path wide = tmp.write("wide.mtx", mtx("pattern general", "3000000000 3000000000 1\n1 2\n"));
  expectRefused("info " + shellQuoted(wide.string()) + " --index int32",
                {"3000000000 nodes and int32 holds ids up to 2147483647"}, 1);
  CHECK(runGnnjit("info " + shellQuoted(wide.string()) + " --index int32").err.find("0 edges") == std::string::npos);

  // Splits that name more ids than nodes, or an id out of range.
  fs::create_directories(tmp.path() / "ds");
  tmp.write("ds/graph.mtx", mtx("pattern general", "3 3 2\n2 1\n1 3\n"));
  tmp.write("ds/train.txt", "0\n1\n2\n0\n");
  expectRefused("info " + shellQuoted((tmp.path() / "ds").string()), {"train.txt:4:", "each node id once"}, 1);
  tmp.write("ds/train.txt", "0\n7\n");
  expectRefused("info " + shellQuoted((tmp.path() / "ds").string()), {"train.txt:2:", "a node id below 3"}, 1);
}

TEST_CASE("a run that would not fit in memory is refused before it allocates, with its estimate") {
  const auto cora = gnnjit::test::sharedFile("cora");
  if (!cora)
    return;
  const std::string graph = " --graph " + shellQuoted(cora->string());
  // The fp64 reference at dim 200000 on cora: three 4 GiB tensors, past
  // the 8 GiB these tests allow on any machine.
  {
    const gnnjit::test::ScopedEnv budget("GNNJIT_HOST_MEMORY", kHostMemory);
    const auto r = runGnnjit("run" + graph + " --dim 200000 --backend cpu");
    INFO("stderr: " << r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("This run needs about 12.") != std::string::npos);
    CHECK(r.err.find("input 'x' (fp64) 4.04 GiB") != std::string::npos);
    CHECK(r.peakRssBytes > 0);
    CHECK(r.peakRssBytes < kRefusalPeakRss);
  }
  // With a budget set, on any machine; and GNNJIT_HOST_MEMORY must be a size.
  setenv("GNNJIT_HOST_MEMORY", "64M", 1);
  expectRefused("run" + graph + " --dim 2000 --backend cpu",
                {"This run needs about", "(GNNJIT_HOST_MEMORY=64M)", "input 'x' (fp64) 41.3 MiB"}, 1);
  setenv("GNNJIT_HOST_MEMORY", "lots", 1);
  expectRefused("run" + graph + " --backend cpu", {"GNNJIT_HOST_MEMORY='lots' is not a size"}, 1);
  unsetenv("GNNJIT_HOST_MEMORY");
}

TEST_CASE("rmat at dim 2000000 is refused once the graph is built, before its inputs are allocated") {
  const gnnjit::test::ScopedEnv budget("GNNJIT_HOST_MEMORY", kHostMemory);
  const auto r = runGnnjit("run --graph rmat:scale=14,ef=16 --dim 2000000 --backend cpu --json");
  INFO("stderr: " << r.err);
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("This run needs about") != std::string::npos);
  CHECK(r.err.find("GiB of host memory") != std::string::npos);
  CHECK(r.err.find("input 'x' (fp64) 244.14 GiB") != std::string::npos);
  CHECK(r.peakRssBytes > 0);
  CHECK(r.peakRssBytes < kRefusalPeakRss);
}

TEST_CASE("without a GPU, auto compiles an attention layer's kernels and runs the reference") {
  const auto r = runGnnjit("run --layer gatv2 --graph grid:side=4 --backend auto --backward");
  if (r.out.find("backend  cuda") != std::string::npos)
    return; // a GPU ran it
  if (gnnjit::test::gpuRequired())
    FAIL_CHECK("--backend auto did not run on the GPU (GNNJIT_REQUIRE_GPU=1); stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exitCode == 0);
  CHECK(r.out.find("no GPU here") != std::string::npos);
  CHECK(r.out.find("compiled by NVRTC") != std::string::npos);
}

TEST_CASE("help and messages point at the tensor format's real home") {
  const auto help = runGnnjit("run --help");
  CHECK(help.out.find("cli/TensorFiles.h") != std::string::npos);
  CHECK(help.out.find("cli/RunCommand.h") == std::string::npos);
}
