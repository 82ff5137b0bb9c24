// Compile, load and launch on a real device; skipped, saying so, without one.
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/KernelCache.h"

#include "RuntimeTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <numeric>

namespace gnnjit::runtime {
namespace {

const test::ScratchTempRoot scratch;

using test::TempDir;

bool skipWithoutDevice() {
  if (hasCudaDevice())
    return false;
  MESSAGE("SKIPPED: no CUDA device");
  return true;
}

CompileOptions deviceOptions() {
  CompileOptions options;
  options.arch = targetArch();
  return options;
}

TEST_CASE("a compiled kernel writes its pattern into a device buffer") {
  if (skipWithoutDevice())
    return;
  TempDir dir;
  KernelCache cache(KernelCacheConfig{dir.path(), "launch-test"});
  Kernel fill = cache.kernel(test::fillSource("launch"), deviceOptions(), "fill");

  const int n = 1000, base = 7;
  DeviceBuffer<int> out(n);
  out.fillZero();
  fill(dim3((n + 127) / 128), dim3(128), 0, nullptr, out.data(), n, base);
  GNNJIT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> host = out.download();
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += host[i] != base + 3 * i;
  CHECK(wrong == 0);

  cache.kernel(test::fillSource("launch"), deviceOptions(), "fill");
  CHECK(cache.stats().memoryHits == 1);
  CHECK(cache.stats().compiles == 1);
}

TEST_CASE("a disk hit loads and launches on a stream") {
  if (skipWithoutDevice())
    return;
  TempDir dir;
  Source source = test::fillSource("stream");
  KernelCache(KernelCacheConfig{dir.path(), "launch-test"}).compile(source, deviceOptions());
  KernelCache cache(KernelCacheConfig{dir.path(), "launch-test"});
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const LoadedModule> module = cache.load(source, deviceOptions());
  MESSAGE(fmt::format("disk hit + cudaLibraryLoadData: {:.2f} ms", test::millisecondsSince(start)));
  CHECK(cache.stats().diskHits == 1);

  cudaStream_t stream = nullptr;
  GNNJIT_CUDA_CHECK(cudaStreamCreate(&stream));
  const int n = 77;
  DeviceBuffer<int> out(n);
  int *data = out.data();
  int count = n, base = -5;
  void *args[] = {&data, &count, &base};
  module->kernel("fill").launch(dim3(1), dim3(128), 0, stream, args);
  std::vector<int> host(n);
  out.download(host, stream);
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  GNNJIT_CUDA_CHECK(cudaStreamDestroy(stream));
  CHECK(host[0] == -5);
  CHECK(host[n - 1] == -5 + 3 * (n - 1));
}

TEST_CASE("device buffers round-trip, move, and report bad kernels") {
  if (skipWithoutDevice())
    return;
  std::vector<float> values(300);
  std::iota(values.begin(), values.end(), 0.5f);
  DeviceBuffer<float> buffer = DeviceBuffer<float>::fromHost(values);
  CHECK(buffer.download() == values);
  DeviceBuffer<float> moved = std::move(buffer);
  CHECK(buffer.empty());
  CHECK(moved.size() == 300);
  CHECK(moved.download() == values);
  CHECK_THROWS_AS(moved.upload(std::span<const float>(values).first(10)), InternalError);

  TempDir dir;
  KernelCache cache(KernelCacheConfig{dir.path(), "launch-test"});
  std::shared_ptr<const LoadedModule> module = cache.load(test::fillSource(), deviceOptions());
  CHECK_THROWS_WITH_AS(module->kernel("no_such_kernel"), doctest::Contains("no_such_kernel"), CudaError);
}

} // namespace
} // namespace gnnjit::runtime
