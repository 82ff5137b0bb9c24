// NVRTC compiles, errors and dumps, arch handling, and CUDA errors: all
// without a GPU.
#include "runtime/Compile.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Module.h"
#include "runtime/SourceDump.h"

#include "RuntimeTestSupport.h"
#include "TestData.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <type_traits>

namespace gnnjit::runtime {
namespace {

const test::ScratchTempRoot scratch;

using test::ScopedEnv;
using test::TempDir;

bool startsWithElfMagic(const std::vector<uint8_t> &bytes) {
  return bytes.size() > 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
}

TEST_CASE("NVRTC compiles a small kernel to an sm_90 CUBIN and PTX") {
  auto start = std::chrono::steady_clock::now();
  CompiledKernel kernel = compileToCubin(test::fillSource("cold"), CompileOptions{});
  double coldMs = test::millisecondsSince(start);
  start = std::chrono::steady_clock::now();
  CompiledKernel again = compileToCubin(test::fillSource("warm"), CompileOptions{});
  double warmMs = test::millisecondsSince(start);
  MESSAGE(fmt::format("NVRTC {}: first compile in this process {:.1f} ms, next {:.1f} ms ({} bytes of CUBIN)",
                      nvrtcVersionString(), coldMs, warmMs, kernel.cubin.size()));

  CHECK(kernel.arch == "sm_90");
  CHECK(startsWithElfMagic(kernel.cubin));
  CHECK(kernel.ptx.find(".entry fill") != std::string::npos);
  CHECK(kernel.ptx.find(".target sm_90") != std::string::npos);
  CHECK(startsWithElfMagic(again.cubin));
}

TEST_CASE("lineinfo and an arch suffix reach NVRTC") {
  CompileOptions options;
  options.arch = "sm_90a";
  options.lineInfo = true;
  CompiledKernel kernel = compileToCubin(test::fillSource(), options);
  CHECK(startsWithElfMagic(kernel.cubin));
  CHECK(kernel.ptx.find(".target sm_90a") != std::string::npos);
  CHECK(kernel.ptx.find(".loc") != std::string::npos);
}

TEST_CASE("the toolkit's half and bfloat16 headers are found") {
  Source source{"halves.cu",
                "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
                "extern \"C\" __global__ void halve(__half *h, __nv_bfloat16 *b) {\n"
                "  h[threadIdx.x] = __float2half(0.5f * __half2float(h[threadIdx.x]));\n"
                "  b[threadIdx.x] = __float2bfloat16(0.5f * __bfloat162float(b[threadIdx.x]));\n"
                "}\n",
                {}};
  CHECK(startsWithElfMagic(compileToCubin(source, CompileOptions{}).cubin));
}

TEST_CASE("headers given with the source and extra flags are used") {
  Source source{"scaled.cu",
                "#include \"gnnjit/scale.cuh\"\n"
                "static_assert(SCALE == 5, \"-DSCALE=5 must arrive\");\n"
                "extern \"C\" __global__ void scaled(float *x) { x[threadIdx.x] = scale(x[threadIdx.x]); }\n",
                // No __device__: -default-device makes it one.
                {{"gnnjit/scale.cuh", "inline float scale(float v) { return SCALE * v; }\n"}}};
  CompileOptions options;
  options.flags = {"-DSCALE=5"};
  CHECK(compileToCubin(source, options).ptx.find(".entry scaled") != std::string::npos);
  options.flags = {"-DSCALE=4"};
  CHECK_THROWS_AS(compileToCubin(source, options), CompileError);
}

TEST_CASE("a syntax error gives the log beside the numbered source and a dumped file") {
  TempDir tmp;
  ScopedEnv noDumpDir("GNNJIT_DUMP_DIR", std::nullopt);
  ScopedEnv tmpdir("TMPDIR", tmp.path().string()); // the system temp dir, for this test
  Source broken{"broken.cu",
                "extern \"C\" __global__ void broken(int *out) {\n"
                "  int i = threadIdx.x;\n"
                "  out[i] = i +* ;\n"
                "}\n",
                {}};

  Expected<CompiledKernel, CompileError> result = tryCompileToCubin(broken, CompileOptions{});
  REQUIRE_FALSE(result.ok());
  const CompileError &error = result.error();
  std::string message = error.what();
  CHECK(message.find("broken.cu(3): error") != std::string::npos);
  CHECK(message.find("> 3 |   out[i] = i +* ;") != std::string::npos);
  CHECK(message.find("  1 | extern \"C\"") != std::string::npos);
  CHECK(message.find("-arch=sm_90") != std::string::npos);
  CHECK(error.log().find("error") != std::string::npos);
  REQUIRE_FALSE(error.dumpPath().empty());
  CHECK(std::filesystem::exists(error.dumpPath()));
  CHECK(error.dumpPath().parent_path() == tmp.path() / "gnnjit-dump");
  CHECK(message.find(error.dumpPath().string()) != std::string::npos);
  CHECK(test::readText(error.dumpPath()) == broken.text);

  CHECK_THROWS_AS(compileToCubin(broken, CompileOptions{}), CompileError);
  CHECK_THROWS_AS(compileToCubin(broken, CompileOptions{}), UserError);
}

TEST_CASE("a rejected flag is a compile error that names it") {
  CompileOptions options;
  options.flags = {"--no-such-flag"};
  Expected<CompiledKernel, CompileError> result = tryCompileToCubin(test::fillSource(), options);
  REQUIRE_FALSE(result.ok());
  CHECK(std::string(result.error().what()).find("--no-such-flag") != std::string::npos);
}

TEST_CASE("with GNNJIT_DUMP_DIR set every compiled source is dumped there") {
  TempDir dumps;
  ScopedEnv dumpDir("GNNJIT_DUMP_DIR", dumps.path().string());
  Source source = test::fillSource("dumped");
  source.headers = {{"extra/unused.cuh", "// unused\n"}};
  compileToCubin(source, CompileOptions{});
  std::vector<std::filesystem::path> dumped;
  for (const auto &entry : std::filesystem::directory_iterator(dumps.path()))
    if (entry.path().extension() == ".cu")
      dumped.push_back(entry.path());
  REQUIRE(dumped.size() == 1);
  CHECK(dumped[0].filename().string().starts_with("fill-"));
  CHECK(test::readText(dumped[0]) == source.text);
  std::filesystem::path header = dumped[0];
  header.replace_extension(".headers");
  CHECK(test::readText(header / "extra" / "unused.cuh") == "// unused\n");
}

TEST_CASE("arch strings are validated") {
  CHECK(validateArch("sm_90") == "sm_90");
  CHECK(validateArch("sm_90a") == "sm_90a");
  CHECK(validateArch("sm_100") == "sm_100");
  for (const char *bad : {"", "sm90", "compute_90", "sm_9", "sm_9000", "sm_90b", "SM_90", "sm_90 "})
    CHECK_THROWS_AS(validateArch(bad), UserError);
  CHECK_THROWS_WITH_AS(validateArch("sm_50"), doctest::Contains("sm_90"), UserError);
  CompileOptions options;
  options.arch = "compute_90";
  CHECK_THROWS_AS(compileToCubin(test::fillSource(), options), UserError);
}

TEST_CASE("the target arch is the forced one, else the device's, else sm_90") {
  CHECK(targetArch("sm_80") == "sm_80");
  CHECK_THROWS_AS(targetArch("80"), UserError);
  CHECK(deviceArch().has_value() == hasCudaDevice());
  if (hasCudaDevice()) {
    CHECK(targetArch() == *deviceArch());
    CHECK(currentDevice() >= 0);
  } else {
    test::noGpuHere("the device's arch is checked on a machine with a GPU");
    CHECK(targetArch() == "sm_90");
    CHECK(currentDevice() == -1);
  }
}

TEST_CASE("long sources show the neighbourhood of the blamed lines") {
  std::string text;
  for (int line = 1; line <= 500; ++line)
    text += fmt::format("line {}\n", line);
  std::string shown = numberLines(text, blamedLines("big.cu(250): error: x\nbig.cu(7): warning: y", "big.cu"));
  CHECK(shown.find(">   7 | line 7\n") != std::string::npos);
  CHECK(shown.find("> 250 | line 250\n") != std::string::npos);
  CHECK(shown.find("  245 | line 245\n") != std::string::npos);
  CHECK(shown.find("line 300\n") == std::string::npos);
  CHECK(shown.find("...") != std::string::npos);
  CHECK(blamedLines("other.cu(3): error", "big.cu").empty());
}

TEST_CASE("cudaCheck names the failed call") {
  CHECK_NOTHROW(cudaCheck(cudaSuccess, "cudaDeviceSynchronize()"));
  CHECK_THROWS_WITH_AS(cudaCheck(cudaErrorMemoryAllocation, "cudaMalloc(64 bytes)"),
                       doctest::Contains("cudaMalloc(64 bytes)"), CudaError);
  try {
    GNNJIT_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL("GNNJIT_CUDA_CHECK let an error through");
  } catch (const CudaError &e) {
    CHECK(e.code() == cudaErrorInvalidValue);
    CHECK(std::string(e.what()).find("cudaErrorInvalidValue") != std::string::npos);
    CHECK(e.blame() == LibraryError::Blame::Gnnjit); // an invalid argument is gnnjit's bug
  }
}

TEST_CASE("a CUDA failure is blamed on the machine only when the machine caused it") {
  CHECK(CudaError(cudaErrorMemoryAllocation, "cudaMalloc").blame() == LibraryError::Blame::Machine);
  CHECK(CudaError(cudaErrorNoDevice, "cudaGetDevice").blame() == LibraryError::Blame::Machine);
  CHECK(CudaError(cudaErrorIllegalAddress, "cudaStreamSynchronize").blame() == LibraryError::Blame::Gnnjit);
  CHECK(CudaError(cudaErrorLaunchFailure, "cudaLaunchKernel").blame() == LibraryError::Blame::Gnnjit);
  // Not a UserError: a kernel fault must not read as the user's mistake.
  CHECK_FALSE(std::is_base_of_v<UserError, CudaError>);
}

/// Hands out host bytes as if they were device memory (nothing dereferences
/// them here) and records what it was asked.
struct RecordingAllocator : DeviceAllocator {
  std::vector<size_t> allocated, released;
  void *allocate(size_t bytes) override {
    allocated.push_back(bytes);
    return ::operator new(bytes);
  }
  void release(void *data, size_t bytes) noexcept override {
    released.push_back(bytes);
    ::operator delete(data);
  }
};

TEST_CASE("an installed allocator serves device memory, and each buffer goes back to the allocator that made it") {
  auto allocator = std::make_shared<RecordingAllocator>();
  const size_t liveBefore = deviceMemoryUse().live;
  {
    setDeviceAllocator(allocator);
    DeviceBuffer<float> a(16);
    DeviceMemory empty(0); // no allocation for nothing
    DeviceBuffer<int64_t> other(4);
    setDeviceAllocator(nullptr); // later buffers use cudaMalloc again; these still go back to `allocator`
    CHECK(allocator->allocated == std::vector<size_t>{64, 32});
    CHECK(deviceMemoryUse().live == liveBefore + 96);
    DeviceBuffer<float> b(std::move(a));
    CHECK(allocator->released.empty());
  }
  CHECK(allocator->released.size() == 2);
  CHECK(deviceMemoryUse().live == liveBefore);
}

/// Records the stream an AllocationStream scope names at each allocation.
struct StreamRecordingAllocator : RecordingAllocator {
  std::vector<std::optional<cudaStream_t>> streams;
  void *allocate(size_t bytes) override {
    streams.push_back(AllocationStream::current());
    return RecordingAllocator::allocate(bytes);
  }
};

TEST_CASE("an allocation stream scope names its stream to the allocator, innermost first, and ends with itself") {
  auto allocator = std::make_shared<StreamRecordingAllocator>();
  setDeviceAllocator(allocator);
  const auto first = reinterpret_cast<cudaStream_t>(uintptr_t{0x10}),
             second = reinterpret_cast<cudaStream_t>(uintptr_t{0x20});
  {
    DeviceMemory none(8);
    const AllocationStream outer(first);
    DeviceMemory inFirst(8);
    {
      const AllocationStream inner(second);
      DeviceMemory inSecond(8);
    }
    DeviceMemory inFirstAgain(8);
  }
  DeviceMemory after(8);
  setDeviceAllocator(nullptr);
  CHECK(allocator->streams ==
        std::vector<std::optional<cudaStream_t>>{std::nullopt, first, second, first, std::nullopt});
  CHECK_FALSE(AllocationStream::current().has_value());
}

TEST_CASE("without a GPU, device memory and loading fail with a CudaError") {
  if (hasCudaDevice()) {
    MESSAGE("SKIPPED: a CUDA device is present; this checks the no-device path");
    return;
  }
  CHECK_NOTHROW(DeviceBuffer<int>(0)); // empty buffers need no device
  CHECK_THROWS_WITH_AS(DeviceBuffer<int>(16), doctest::Contains("cudaMalloc(64 bytes)"), CudaError);
  CompiledKernel kernel = compileToCubin(test::fillSource(), CompileOptions{});
  CHECK_THROWS_WITH_AS(LoadedModule::load(kernel), doctest::Contains("cudaLibraryLoadData(fill.cu"), CudaError);
}

} // namespace
} // namespace gnnjit::runtime
