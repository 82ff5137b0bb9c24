// The two-level kernel cache without a GPU: hits and misses, the key,
// damaged entries, and processes racing to write one entry.
#include "runtime/CacheEntry.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/KernelCache.h"

#include "RuntimeTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace gnnjit::runtime {
namespace {

const test::ScratchTempRoot scratch;

namespace fs = std::filesystem;
using test::ScopedEnv;
using test::TempDir;

KernelCache cacheIn(const TempDir &dir, std::string generator = "gen-1") {
  return KernelCache(KernelCacheConfig{dir.path(), std::move(generator)});
}

std::vector<fs::path> filesIn(const fs::path &dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto &entry : fs::directory_iterator(dir))
      files.push_back(entry.path());
  return files;
}

TEST_CASE("the cache folder comes from GNNJIT_CACHE_DIR, XDG_CACHE_HOME, then HOME") {
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv dir("GNNJIT_CACHE_DIR", "/somewhere/kernels");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(defaultCacheDir() == fs::path("/somewhere/kernels"));
  }
  ScopedEnv dir("GNNJIT_CACHE_DIR", std::nullopt);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(defaultCacheDir() == fs::path("/xdg/gnnjit"));
  }
  ScopedEnv xdg("XDG_CACHE_HOME", "");
  CHECK(defaultCacheDir() == fs::path("/home/someone/.cache/gnnjit"));
}

TEST_CASE("a miss compiles, a repeat hits memory, a fresh cache hits disk") {
  TempDir dir;
  Source source = test::fillSource("hits");
  std::shared_ptr<const CompiledKernel> first;
  {
    KernelCache cache = cacheIn(dir);
    first = cache.compile(source, CompileOptions{});
    CHECK(cache.stats().compiles == 1);
    CHECK(cache.stats().diskHits == 0);
    CHECK(fs::exists(cache.entryPath(cache.key(source, CompileOptions{}))));
    CHECK(cache.compile(source, CompileOptions{}) == first);
    CHECK(cache.stats().memoryHits == 1);
    CHECK(cache.stats().compiles == 1);
    MESSAGE(fmt::format("cold compile through the cache: {:.1f} ms", cache.stats().compileSeconds * 1e3));
  }
  KernelCache fresh = cacheIn(dir);
  std::shared_ptr<const CompiledKernel> fromDisk = fresh.compile(source, CompileOptions{});
  CacheStats stats = fresh.stats();
  CHECK(stats.diskHits == 1);
  CHECK(stats.compiles == 0);
  CHECK(stats.memoryHits == 0);
  CHECK(fromDisk->cubin == first->cubin);
  CHECK(fromDisk->ptx == first->ptx);
  CHECK(fromDisk->name == "fill.cu");
  CHECK(fromDisk->arch == "sm_90");
  MESSAGE(fmt::format("disk hit (read + verify, {} byte entry): {:.3f} ms",
                      fs::file_size(fresh.entryPath(fresh.key(source, CompileOptions{}))),
                      stats.diskReadSeconds * 1e3));
}

TEST_CASE("threads asking for one kernel at once compile it once; the others wait for it") {
  TempDir dir;
  KernelCache cache = cacheIn(dir);
  const Source source = test::fillSource("racing threads");
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const CompiledKernel>> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] { got[i] = cache.compile(source, CompileOptions{}); });
  for (std::thread &t : threads)
    t.join();
  for (const auto &kernel : got)
    CHECK(kernel == got[0]); // one compiled kernel, shared
  CHECK(cache.stats().compiles == 1);
  CHECK(cache.stats().memoryHits == kThreads - 1);
  // A source that fails: every waiting thread gets the same error.
  TempDir dumps;
  ScopedEnv dumpDir("GNNJIT_DUMP_DIR", dumps.path().string());
  const Source broken{"broken.cu", "this is not CUDA\n", {}};
  std::vector<int> failed(kThreads, 0);
  threads.clear();
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] { failed[i] = cache.tryCompile(broken, CompileOptions{}).ok() ? 0 : 1; });
  for (std::thread &t : threads)
    t.join();
  CHECK(std::count(failed.begin(), failed.end(), 1) == kThreads);
  CHECK(cache.stats().compiles == 1);
}

TEST_CASE("the key changes with each component and not with flag order") {
  TempDir dir;
  KernelCache cache = cacheIn(dir);
  Source source = test::fillSource();
  CompileOptions options;
  options.flags = {"-DA=1", "-DB=2"};
  const std::string base = cache.key(source, options);
  CHECK(base.size() == 64);
  CHECK(cache.key(source, options) == base);

  CompileOptions reordered = options;
  reordered.flags = {"-DB=2", "-DA=1"};
  CHECK(cache.key(source, reordered) == base);

  Source otherText = source;
  otherText.text += "\n";
  CHECK(cache.key(otherText, options) != base);
  Source otherName = source;
  otherName.name = "fill2.cu";
  CHECK(cache.key(otherName, options) != base);
  Source withHeader = source;
  withHeader.headers = {{"h.cuh", "// one"}};
  CHECK(cache.key(withHeader, options) != base);
  Source otherHeader = source;
  otherHeader.headers = {{"h.cuh", "// two"}};
  CHECK(cache.key(otherHeader, options) != cache.key(withHeader, options));

  CompileOptions otherFlag = options;
  otherFlag.flags = {"-DA=1", "-DB=3"};
  CHECK(cache.key(source, otherFlag) != base);
  CompileOptions lineInfo = options;
  lineInfo.lineInfo = true;
  CHECK(cache.key(source, lineInfo) != base);
  CompileOptions standard = options;
  standard.standard = "c++20";
  CHECK(cache.key(source, standard) != base);
  CompileOptions arch = options;
  arch.arch = "sm_80";
  CHECK(cache.key(source, arch) != base);

  KernelCache otherGenerator = cacheIn(dir, "gen-2");
  CHECK(otherGenerator.key(source, options) != base);
}

// Damages the single entry of `source`, then checks the next fresh cache warns
// (when `expectWarning`), deletes and rebuilds it.
void checkRebuilt(const TempDir &dir, const Source &source, bool expectWarning,
                  const std::function<void(const fs::path &)> &damage) {
  fs::path entry = cacheIn(dir).entryPath(cacheIn(dir).key(source, CompileOptions{}));
  REQUIRE(fs::exists(entry));
  damage(entry);

  KernelCache cache = cacheIn(dir);
  test::StderrCapture capture;
  std::shared_ptr<const CompiledKernel> kernel = cache.compile(source, CompileOptions{});
  std::string warnings = capture.text();
  CHECK(cache.stats().corruptEntries == 1);
  CHECK(cache.stats().compiles == 1);
  CHECK(cache.stats().diskHits == 0);
  if (expectWarning) {
    CHECK(warnings.find("corrupt") != std::string::npos);
    CHECK(warnings.find(entry.string()) != std::string::npos);
  } else {
    CHECK(warnings.empty());
  }

  KernelCache after = cacheIn(dir);
  CHECK(after.compile(source, CompileOptions{})->cubin == kernel->cubin);
  CHECK(after.stats().diskHits == 1);
  CHECK(after.stats().corruptEntries == 0);
}

TEST_CASE("a truncated entry is detected, warned about, deleted and rebuilt") {
  TempDir dir;
  Source source = test::fillSource("truncated");
  cacheIn(dir).compile(source, CompileOptions{});
  checkRebuilt(dir, source, true, [](const fs::path &entry) { fs::resize_file(entry, fs::file_size(entry) / 2); });
}

TEST_CASE("a flipped byte is detected; the same file is warned about once per process") {
  TempDir dir;
  Source source = test::fillSource("flipped");
  cacheIn(dir).compile(source, CompileOptions{});
  auto flip = [](const fs::path &entry) {
    std::string bytes = test::readText(entry);
    bytes[bytes.size() / 2] ^= 0x20;
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
  };
  checkRebuilt(dir, source, true, flip);
  checkRebuilt(dir, source, false, flip);
  checkRebuilt(dir, source, false, [](const fs::path &entry) { std::ofstream(entry, std::ios::trunc); });
}

TEST_CASE("entries decode only when whole") {
  CompiledKernel kernel{"k.cu", "sm_90", {0x7f, 'E', 'L', 'F', 1, 2, 3}, "ptx", ""};
  std::string bytes = cache_entry::encode(kernel);
  Expected<CompiledKernel, std::string> decoded = cache_entry::decode(bytes);
  REQUIRE(decoded.ok());
  CHECK(decoded.value().cubin == kernel.cubin);
  CHECK(decoded.value().ptx == "ptx");
  CHECK_FALSE(cache_entry::decode(bytes.substr(0, 10)).ok());
  CHECK_FALSE(cache_entry::decode(bytes + "x").ok());
  std::string badMagic = bytes;
  badMagic[0] = 'X';
  CHECK(cache_entry::decode(badMagic).error().find("magic") != std::string::npos);
}

TEST_CASE("four processes compiling one kernel into an empty folder all succeed") {
  TempDir dir;
  Source source = test::fillSource("raced");
  int gate[2];
  REQUIRE(pipe(gate) == 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Wait until the parent opens the gate so all four compile at once.
      close(gate[1]);
      char ignored;
      (void)read(gate[0], &ignored, 1);
      int code = 3;
      try {
        KernelCache cache = cacheIn(dir);
        std::shared_ptr<const CompiledKernel> kernel = cache.compile(source, CompileOptions{});
        CacheStats stats = cache.stats();
        code = kernel->cubin.size() > 4 && stats.compiles + stats.diskHits == 1 ? 0 : 2;
      } catch (...) {
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  close(gate[0]);
  close(gate[1]);
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }

  KernelCache after = cacheIn(dir);
  CHECK(after.compile(source, CompileOptions{})->cubin.size() > 4);
  CHECK(after.stats().diskHits == 1);
  CHECK(after.stats().corruptEntries == 0);
  std::vector<fs::path> files = filesIn(after.entryDir());
  REQUIRE(files.size() == 1); // no temp files left behind
  CHECK(files[0] == after.entryPath(after.key(source, CompileOptions{})));
}

TEST_CASE("rejected sources are not cached") {
  TempDir dir;
  KernelCache cache = cacheIn(dir);
  TempDir dumps;
  ScopedEnv dumpDir("GNNJIT_DUMP_DIR", dumps.path().string());
  Source broken{"broken.cu", "this is not CUDA\n", {}};
  CHECK_FALSE(cache.tryCompile(broken, CompileOptions{}).ok());
  CHECK_THROWS_AS(cache.compile(broken, CompileOptions{}), CompileError);
  CHECK(cache.stats().compiles == 0);
  CHECK(filesIn(cache.entryDir()).empty());
}

TEST_CASE("an unwritable cache folder costs speed, not correctness") {
  TempDir dir;
  fs::path notAFolder = dir.write("file", "x");
  KernelCache cache(KernelCacheConfig{notAFolder / "cache", "gen-1"});
  test::StderrCapture capture;
  CHECK(cache.compile(test::fillSource("unwritable"), CompileOptions{})->cubin.size() > 4);
  CHECK(cache.compile(test::fillSource("unwritable 2"), CompileOptions{})->cubin.size() > 4);
  std::string warnings = capture.text();
  CHECK(cache.stats().diskWriteFailures == 2);
  CHECK(warnings.find("kernel cache not written") != std::string::npos);
  CHECK(warnings.find("kernel cache not written") == warnings.rfind("kernel cache not written"));
}

TEST_CASE("compile-only mode: compiling works, loading says there is no device") {
  if (hasCudaDevice()) {
    MESSAGE("SKIPPED: a CUDA device is present; this checks compile-only mode");
    return;
  }
  TempDir dir;
  KernelCache cache = cacheIn(dir);
  CHECK(cache.compile(test::fillSource(), CompileOptions{})->cubin.size() > 4);
  CHECK_THROWS_WITH_AS(cache.load(test::fillSource(), CompileOptions{}), doctest::Contains("compile-only"),
                       CudaError);
}

} // namespace
} // namespace gnnjit::runtime
