// The autotuner's compiles beside the search, without a GPU: every distinct
// module once however often queued, what compiled() reports, a source NVRTC
// rejects counted as failed (and done: timing reports it), and no compile
// started past the deadline.
#include "autotune/Precompiler.h"
#include "exec/KernelSource.h"

#include "TestData.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace gnnjit;

namespace {

runtime::Source tiny(int k) {
  return {fmt::format("tiny{}.cu", k),
          fmt::format("extern \"C\" __global__ void k{0}(float *x) {{ x[threadIdx.x] += {0}.0f; }}\n", k), {}};
}

runtime::KernelCache cacheIn(const test::TempDir &dir) {
  return runtime::KernelCache(runtime::KernelCacheConfig{dir.path(), "precompiler-test"});
}

} // namespace

TEST_CASE("precompiler: each distinct module compiled once, in the cache after; a rejected source is failed") {
  test::TempDir dir;
  runtime::KernelCache cache = cacheIn(dir);
  std::vector<runtime::Source> sources{tiny(1), tiny(2), tiny(3)};
  const runtime::Source broken{"broken.cu", "extern \"C\" __global__ void b() { undeclared(); }\n", {}};
  {
    autotune::Precompiler compiler(cache, {}, 2);
    const std::vector<std::string> keys = compiler.keysOf(sources);
    CHECK_FALSE(compiler.compiled(keys));
    compiler.enqueue(sources);
    compiler.enqueue({tiny(2), tiny(1), broken}); // two already queued
    while (compiler.waitForProgress(10)) {
    }
    CHECK(compiler.compiled(keys));
    CHECK(compiler.compiled(compiler.keysOf({broken}))); // done, though failed
    const autotune::Precompiler::Report r = compiler.report();
    CHECK(r.queued == 4);
    CHECK(r.compiled == 3);
    CHECK(r.failed == 1);
    CHECK(r.dropped == 0);
    CHECK(r.busySeconds > 0);
  }
  CHECK(cache.stats().compiles == 3);
  // Another precompiler over the same cache finds them there and compiles nothing.
  autotune::Precompiler again(cache, {}, 2);
  again.enqueue(sources);
  while (again.waitForProgress(10)) {
  }
  CHECK(again.report().compiled == 0);
  CHECK(cache.stats().compiles == 3);
}

TEST_CASE("precompiler: a generated module's key is its kernel source's, computed once per module") {
  test::TempDir dir;
  runtime::KernelCache cache = cacheIn(dir);
  autotune::Precompiler compiler(cache, {}, 1);
  const codegen::GeneratedModule module{"m", "extern \"C\" __global__ void m(float *x) { x[0] = 1.0f; }\n", {}};
  const std::string key = compiler.keyOf(module);
  CHECK(key == compiler.keysOf({exec::kernelSource(module)}).at(0));
  CHECK(compiler.keyOf(module) == key);
  const codegen::GeneratedModule other{"m", module.source + "// another\n", {}};
  CHECK(compiler.keyOf(other) != key);
  // Queued by module, under that key; its source queued again is not new.
  compiler.enqueue(module);
  CHECK(compiler.enqueue({exec::kernelSource(module)}) == std::vector<std::string>{key});
  while (compiler.waitForProgress(10)) {
  }
  CHECK(compiler.compiled({key}));
  CHECK(compiler.report().queued == 1);
}

TEST_CASE("precompiler: nothing starts past the deadline; stop drops what is queued") {
  test::TempDir dir;
  runtime::KernelCache cache = cacheIn(dir);
  {
    autotune::Precompiler compiler(cache, {}, 1);
    compiler.setDeadline(0); // already past
    compiler.enqueue({tiny(4), tiny(5)});
    while (compiler.waitForProgress(10)) {
    }
    CHECK(compiler.report().compiled == 0);
    CHECK(compiler.report().dropped == 2);
  }
  CHECK(cache.stats().compiles == 0);
  autotune::Precompiler compiler(cache, {}, 1);
  std::vector<runtime::Source> many;
  for (int k = 10; k < 40; ++k)
    many.push_back(tiny(k));
  compiler.enqueue(many);
  compiler.stop(); // at most the one already started compiles
  while (compiler.waitForProgress(10)) {
  }
  CHECK(compiler.report().compiled <= 1);
  CHECK(compiler.report().dropped + compiler.report().compiled == many.size());
  CHECK_FALSE(compiler.waitForProgress(10)); // nothing left: no wait
}

TEST_CASE("precompiler: sources queued ahead compile before those queued earlier") {
  test::TempDir dir;
  runtime::KernelCache cache = cacheIn(dir);
  autotune::Precompiler compiler(cache, {}, 1);
  std::vector<runtime::Source> many;
  for (int k = 50; k < 70; ++k)
    many.push_back(tiny(k));
  compiler.enqueue(many);
  // One already queued and one new, wanted next: both go ahead of the rest.
  const std::vector<runtime::Source> wanted{many.back(), tiny(99)};
  compiler.enqueue(wanted, true);
  const std::vector<std::string> keys = compiler.keysOf(wanted);
  while (!compiler.compiled(keys))
    REQUIRE(compiler.waitForProgress(10));
  // One thread: at most the source it had started, and the two wanted.
  CHECK(compiler.report().compiled <= 3);
  CHECK(compiler.report().queued == many.size() + 1);
  compiler.stop();
}
